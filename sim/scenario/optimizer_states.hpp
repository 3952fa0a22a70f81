#pragma once
// Optimizer-state bytes tensor by tensor, for the optimizers whose states depend on each
// parameter tensor's shape (docs/finetuning.md, "Optimizers"):
//   adamw-8bit, paged-adamw-8bit  bitsandbytes Optimizer2State: a tensor of n >= 4096 elements
//                                 keeps two uint8 states and one fp32 absmax per 2048-element
//                                 block per state: 2n + 8 x ceil(n / 2048); a smaller one keeps
//                                 two fp32 states: 8n (min_8bit_size = 4096).
//   adafactor                     Hugging Face Adafactor, beta1 = None: a tensor of two or more
//                                 dimensions keeps the row and column means of the squared
//                                 gradient (lead x rows + lead x cols elements), a vector its full
//                                 second moment (n), in the gradient's dtype.
// Every other optimizer: n x state_bytes_per_param's optimizer bytes. The fp32 master copy of
// mixed precision (4n) is included, as in StateBytes::optimizer_states.
#include <optional>

#include "models/layer.hpp"
#include "sim/core/units.hpp"
#include "sim/scenario/finetune.hpp"
#include "sim/scenario/precision.hpp"

namespace trainsim::scenario {

inline constexpr std::int64_t kMin8bitSize = 4096;     // bitsandbytes min_8bit_size
inline constexpr std::int64_t kStateBlock8bit = 2048;  // bitsandbytes block-wise state blocks

// The optimizer states of one tensor (all `count` copies).
core::Bytes tensor_optimizer_bytes(Precision p, Optimizer o, const models::ParamTensor& t);

// What a layer's trained tensors take on one device: under tensor degree `tensor`, with
// `trainable` the parameters the device trains of it (LayerTraining::trainable). LoRA trains
// its adapters A (r x in) and B (out x r), sliced as layer_training slices them; without LoRA
// every tensor of the layer is trained and a tensor-parallel device holds its share
// (trainable / params) of the whole layer's bytes.
struct LayerOptimizer {
  core::Bytes states{};           // optimizer states and master weights
  std::int64_t largest_tensor = 0;  // elements of the largest trained tensor on the device
};
LayerOptimizer layer_optimizer(Precision p, Optimizer o, const models::Layer& l,
                               const std::optional<LoraSpec>& lora, std::int64_t tensor,
                               std::int64_t trainable);

}  // namespace trainsim::scenario
