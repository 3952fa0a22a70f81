#include "sim/scenario/precision.hpp"

#include <string>

namespace trainsim::scenario {

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
    case Precision::fp16_true: return "fp16-true";
    case Precision::bf16_true: return "bf16-true";
    case Precision::amp_fp16: return "amp-fp16";
    case Precision::amp_bf16: return "amp-bf16";
    case Precision::fp8: return "fp8";
  }
  return "?";
}

std::string_view to_string(Optimizer o) {
  switch (o) {
    case Optimizer::sgd: return "sgd";
    case Optimizer::momentum: return "momentum";
    case Optimizer::adam: return "adam";
    case Optimizer::adamw: return "adamw";
    case Optimizer::lion: return "lion";
    case Optimizer::adamw_8bit: return "adamw-8bit";
    case Optimizer::paged_adamw: return "paged-adamw";
    case Optimizer::paged_adamw_8bit: return "paged-adamw-8bit";
    case Optimizer::adafactor: return "adafactor";
    case Optimizer::adamw_4bit: return "adamw-4bit";
  }
  return "?";
}

std::string_view to_string(OptimizerImpl i) {
  switch (i) {
    case OptimizerImpl::foreach: return "foreach";
    case OptimizerImpl::for_loop: return "for-loop";
    case OptimizerImpl::fused: return "fused";
  }
  return "?";
}

std::string_view to_string(ZeroGrad z) {
  return z == ZeroGrad::zeros ? "zeros" : "set_to_none";
}

OptimizerImpl default_optimizer_impl(Precision p, Optimizer o) {
  if (block_quantized(o) || paged(o) || master_weights(p)) return OptimizerImpl::fused;
  return o == Optimizer::adafactor ? OptimizerImpl::for_loop : OptimizerImpl::foreach;
}

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int i = 0; i <= static_cast<int>(Optimizer::adamw_4bit); ++i)
      v.emplace_back(to_string(static_cast<Optimizer>(i)));
    return v;
  }();
  return names;
}

bool eight_bit(Optimizer o) { return o == Optimizer::adamw_8bit || o == Optimizer::paged_adamw_8bit; }
bool paged(Optimizer o) { return o == Optimizer::paged_adamw || o == Optimizer::paged_adamw_8bit; }
bool four_bit(Optimizer o) { return o == Optimizer::adamw_4bit; }
bool block_quantized(Optimizer o) { return eight_bit(o) || four_bit(o); }
bool per_tensor_states(Optimizer o) {
  return block_quantized(o) || paged(o) || o == Optimizer::adafactor;
}

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int i = 0; i <= static_cast<int>(Precision::fp8); ++i)
      v.emplace_back(to_string(static_cast<Precision>(i)));
    return v;
  }();
  return names;
}

bool autocast(Precision p) { return p == Precision::amp_fp16 || p == Precision::amp_bf16; }

bool master_weights(Precision p) {
  return p == Precision::fp16 || p == Precision::bf16 || p == Precision::fp8;
}

models::DType activation_dtype(Precision p) {
  switch (p) {
    case Precision::fp32: return models::DType::fp32;
    case Precision::fp16:
    case Precision::fp16_true:
    case Precision::amp_fp16: return models::DType::fp16;
    default: return models::DType::bf16;
  }
}

cost::MathMode math_mode(Precision p) {
  if (p == Precision::fp32) return cost::MathMode::fp32;
  return p == Precision::fp8 ? cost::MathMode::fp8 : cost::MathMode::half;
}

int weight_cast_bytes(Precision p) {
  if (autocast(p)) return 2;
  return p == Precision::fp8 ? 1 : 0;
}

StateBytes fsdp_state_bytes(Precision p, Optimizer o) {
  const bool built_16bit = p == Precision::bf16_true || p == Precision::fp16_true;
  return state_bytes_per_param(built_16bit ? p : Precision::fp32, o);
}

StateBytes state_bytes_per_param(Precision p, Optimizer o) {
  // Optimizer buffers per parameter: momentum and Lion keep one, Adam two (m and v); 8-bit
  // Adam two of one byte; Adafactor none per element (its factored rows and columns are
  // counted per tensor).
  const int buffers =
      o == Optimizer::sgd || o == Optimizer::adafactor
          ? 0
          : (o == Optimizer::momentum || o == Optimizer::lion ? 1 : 2);
  if (eight_bit(o) || o == Optimizer::paged_adamw) {
    // bitsandbytes keeps its states in the optimizer's bits whatever the parameter dtype: two
    // uint8 buffers (8-bit) or two fp32 ones (optim_bits = 32; Optimizer2State.init_state).
    const StateBytes w = state_bytes_per_param(p, Optimizer::sgd);
    return {w.weights, w.gradients, w.optimizer_states + (eight_bit(o) ? 2 : 8), w.master};
  }
  if (four_bit(o)) {
    // torchao's AdamW4bit: two states of 4-bit codes, two to a uint8 byte (OptimState4bit).
    const StateBytes w = state_bytes_per_param(p, Optimizer::sgd);
    return {w.weights, w.gradients, w.optimizer_states + 1, w.master};
  }
  switch (p) {
    case Precision::fp32:
    case Precision::amp_fp16:
    case Precision::amp_bf16:
      // Autocast leaves the parameters fp32: the optimizer updates them in place, no master.
      return {4, 4, 4 * buffers, 0};
    case Precision::fp16_true:
    case Precision::bf16_true:
      // torch.optim keeps its states in the parameter's dtype (zeros_like(param)).
      return {2, 2, 2 * buffers, 0};
    case Precision::fp16:
    case Precision::bf16:
    case Precision::fp8:
      break;
  }
  return {2, 2, 4 + 4 * buffers, 4};  // mixed precision: fp32 master weights live with the optimizer
}

}  // namespace trainsim::scenario
