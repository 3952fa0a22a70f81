#pragma once
// What `training.precision` and `training.optimizer` mean for bytes: the dtype of each model
// state and of the activations, as each framework spends them (docs/scenarios.md, "Precision").
//   fp32              everything fp32.
//   fp16 / bf16       mixed precision as Megatron-LM and DeepSpeed do it: 16-bit weights and
//                     gradients, an fp32 master copy counted with the optimizer states.
//   fp16-true /       everything 16-bit, optimizer states in the parameter dtype, no master
//   bf16-true         (Lightning's precision="bf16-true").
//   amp-fp16 /        PyTorch autocast (Hugging Face Trainer fp16=True / bf16=True): fp32
//   amp-bf16          weights, gradients and states; 16-bit copies of the weights cast per
//                     forward; 16-bit activations where autocast runs the op in 16 bits.
//   fp8               Transformer Engine / torchao float8 linears over bf16 mixed precision:
//                     GEMM inputs kept in fp8 for backward, an fp8 copy of each GEMM weight.
#include <string_view>
#include <vector>

#include "models/layer.hpp"
#include "sim/cost/cost.hpp"

namespace trainsim::scenario {

enum class Precision { fp32, fp16, bf16, fp16_true, bf16_true, amp_fp16, amp_bf16, fp8 };
// lion: one momentum buffer (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms").
// adamw-8bit: bitsandbytes' block-wise 8-bit AdamW (Dettmers et al. 2022, "8-bit Optimizers via
// Block-wise Quantization"); paged-adamw / paged-adamw-8bit: bitsandbytes' paged AdamW, 32-bit
// or 8-bit states in CUDA unified memory; adafactor: Hugging Face's Adafactor with beta1=None
// (Shazeer & Stern 2018); adamw-4bit: torchao's low_bit_optim.AdamW4bit (Li et al. 2023,
// "Memory Efficient Optimizers with 4-bit States", without their rank-1 normalization). Their
// exact bytes depend on each parameter tensor's shape (sim/scenario/optimizer_states.hpp).
enum class Optimizer {
  sgd, momentum, adam, adamw, lion, adamw_8bit, paged_adamw, paged_adamw_8bit, adafactor,
  adamw_4bit
};

// training.optimizer_impl: how the update walks the parameter list, named as torch.optim names
// its paths (docs/finetuning.md, "The optimizer step's temporaries"):
//   foreach   each elementwise op over every tensor of a device/dtype group at once
//             (_multi_tensor_adamw, torch's default on CUDA);
//   for-loop  one tensor after another (foreach=False, _single_tensor_adamw; Hugging Face's
//             transformers.AdamW and Adafactor loop the same way);
//   fused     one kernel per group keeping the update in registers (fused=True; apex,
//             DeepSpeed and Transformer Engine FusedAdam; bitsandbytes' update kernels).
enum class OptimizerImpl { foreach, for_loop, fused };
// training.zero_grad: what optimizer.zero_grad() leaves between steps. set_to_none (PyTorch >=
// 2.0's default) frees the gradients after the update; zeros (set_to_none=False, the default
// before 2.0) keeps them allocated, zeroed, through the next step's forward.
enum class ZeroGrad { set_to_none, zeros };

std::string_view to_string(Precision p);
std::string_view to_string(Optimizer o);
std::string_view to_string(OptimizerImpl i);
std::string_view to_string(ZeroGrad z);
// The implementation a scenario without training.optimizer_impl runs: fused for the
// Megatron-LM/DeepSpeed mixed-precision recipes (fp16, bf16, fp8) and bitsandbytes' optimizers,
// for-loop for Adafactor, foreach (torch.optim's default) otherwise.
OptimizerImpl default_optimizer_impl(Precision p, Optimizer o);
// Every optimizer's scenario spelling, in enum order.
const std::vector<std::string>& optimizer_names();
// bitsandbytes' block-wise 8-bit states keep one fp32 absmax per block of this many elements:
// 256 since bitsandbytes 0.44.0 (2024-09, PR #1365 "Change 8bit optimizer blocksize
// 2048->256"), 2048 before; torchao's low_bit_optim AdamW8bit uses 256 too. Scenarios of
// older runs say training.optimizer_block: 2048.
inline constexpr std::int64_t kStateBlock8bit = 256;
// torchao's AdamW4bit keeps one fp32 scale per block of 128 elements (its block_size default,
// torchao/prototype/low_bit_optim/adam.py since PR #478, 2024-07).
inline constexpr std::int64_t kStateBlock4bit = 128;
bool eight_bit(Optimizer o);  // adamw-8bit, paged-adamw-8bit
bool four_bit(Optimizer o);   // adamw-4bit
// The optimizers whose states are quantized per block (training.optimizer_block applies).
bool block_quantized(Optimizer o);
bool paged(Optimizer o);      // paged-adamw, paged-adamw-8bit
// The optimizers whose state bytes depend on each tensor's shape, not only on the count (and
// the paged ones, whose unified-memory share does).
bool per_tensor_states(Optimizer o);
// Every precision's scenario spelling, in enum order.
const std::vector<std::string>& precision_names();

bool autocast(Precision p);        // amp-fp16, amp-bf16
bool master_weights(Precision p);  // fp16, bf16, fp8: an fp32 master copy beside 16-bit weights
// The activation dtype a model is built with (the 16-bit type of the GEMMs for autocast).
models::DType activation_dtype(Precision p);
// The tensor-core mode the GEMMs run in.
cost::MathMode math_mode(Precision p);
// Bytes of the low-precision copy of each GEMM weight made per forward and kept by the GEMM for
// its backward: 2 under autocast (its cast cache), 1 for fp8; 0 where the weights are already
// in the GEMM's dtype.
int weight_cast_bytes(Precision p);

// Bytes per parameter of each model-state category for a precision x optimizer pair.
// Mixed precision keeps 16-bit weights and gradients plus an fp32 master copy counted with the
// optimizer states (ZeRO's K = 12 for Adam): 2 + 2 + 12 = 16 bytes per parameter.
// For the per-tensor optimizers this is the large-tensor figure (8-bit: 1 byte per state,
// the block absmaxes left out; 4-bit: half a byte per state, the scales left out; adafactor: 0, its factored rows and columns left out); what
// lowering books comes from optimizer_states.hpp's exact per-tensor bytes.
struct StateBytes {
  int weights = 0;
  int gradients = 0;
  int optimizer_states = 0;  // the master copy included
  int master = 0;            // of which the fp32 master weights
  int total() const { return weights + gradients + optimizer_states; }
};
StateBytes state_bytes_per_param(Precision p, Optimizer o);

// Bytes per parameter of FSDP's sharded parameters, gradients and optimizer states: the dtype
// the model is built in. Under mixed precision (fp16, bf16, fp8) and autocast the model is fp32
// and MixedPrecisionPolicy casts the gathered copy (torchtitan); with `bf16-true`/`fp16-true`
// the model is built in 16 bits (torchtune's dtype: bf16), so are its shards, their gradients
// and torch.optim's states (zeros_like(param)).
StateBytes fsdp_state_bytes(Precision p, Optimizer o);

}  // namespace trainsim::scenario
