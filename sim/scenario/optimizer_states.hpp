#pragma once
// Optimizer-state bytes tensor by tensor, for the optimizers whose states depend on each
// parameter tensor's shape (docs/finetuning.md, "Optimizers"):
//   adamw-8bit, paged-adamw-8bit  bitsandbytes Optimizer2State.init_state: a tensor of n >= 4096
//                                 elements keeps two uint8 states and one fp32 absmax per block
//                                 of `block` elements per state: 2n + 8 x ceil(n / block); a
//                                 smaller one keeps two fp32 states: 8n (min_8bit_size = 4096).
//   adamw-4bit                    torchao low_bit_optim.AdamW4bit (OptimState4bit.zeros): a tensor
//                                 of n >= 4096 elements that `block` divides keeps, per state,
//                                 n / 2 bytes of packed 4-bit codes and one fp32 scale per block:
//                                 n + 8 x n / block; any other tensor zeros_like(param), torch's
//                                 two buffers in the parameter's dtype.
//   paged-adamw                   bitsandbytes' 32-bit states: two fp32 buffers, 8n, whatever
//                                 the parameter's dtype (optim_bits = 32).
//   adafactor                     Hugging Face Adafactor, beta1 = None: a tensor of two or more
//                                 dimensions keeps the row and column means of the squared
//                                 gradient (lead x rows + lead x cols elements), a vector its full
//                                 second moment (n), in the gradient's dtype.
// Every other optimizer: n x state_bytes_per_param's optimizer bytes. The fp32 master copy of
// mixed precision (4n) is included, as in StateBytes::optimizer_states.
//
// Of a paged optimizer's states, only the state buffers of tensors of at least 100,000 elements
// are in unified memory: bitsandbytes' get_state_buffer makes the others with torch.zeros_like,
// and the absmax of every 8-bit state is a torch.zeros tensor, both PyTorch's memory.
#include <optional>

#include "models/layer.hpp"
#include "sim/core/units.hpp"
#include "sim/scenario/finetune.hpp"
#include "sim/scenario/precision.hpp"

namespace trainsim::scenario {

inline constexpr std::int64_t kMin8bitSize = 4096;         // bitsandbytes min_8bit_size
inline constexpr std::int64_t kPagedMinElements = 100'000;  // get_state_buffer's paged threshold

// The optimizer states of one tensor (all `count` copies); `block`: the 8-bit states' block
// (TrainingSpec::effective_optimizer_block).
core::Bytes tensor_optimizer_bytes(Precision p, Optimizer o, const models::ParamTensor& t,
                                   std::int64_t block);
// Of those, the bytes a paged optimizer keeps in CUDA unified memory (0 for the others).
core::Bytes tensor_paged_bytes(Optimizer o, const models::ParamTensor& t);

// What a layer's trained tensors take on one device: under tensor degree `tensor`, with
// `trainable` the parameters the device trains of it (LayerTraining::trainable). LoRA trains
// its adapters A (r x in) and B (out x r), sliced as layer_training slices them; without LoRA
// every tensor of the layer is trained and a tensor-parallel device holds its share
// (trainable / params) of the whole layer's bytes.
struct LayerOptimizer {
  core::Bytes states{};           // optimizer states and master weights
  core::Bytes paged{};            // of which in unified memory (tensor_paged_bytes)
  std::int64_t largest_tensor = 0;  // elements of the largest trained tensor on the device
};
LayerOptimizer layer_optimizer(Precision p, Optimizer o, std::int64_t block,
                               const models::Layer& l, const std::optional<LoraSpec>& lora,
                               std::int64_t tensor, std::int64_t trainable);

}  // namespace trainsim::scenario
