#pragma once
// Fine-tuning: what a layer trains, what it keeps frozen and in which format, and what LoRA's
// adapters add to its activations and FLOPs (docs/finetuning.md has every formula and its
// source). Without `training.lora` every parameter is trained, as in pretraining.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "models/layer.hpp"
#include "models/model.hpp"
#include "sim/core/units.hpp"

namespace trainsim::scenario {

// How LoRA's frozen base linear weights are stored (`training.lora.base`).
// - precision: the precision's weight dtype (2 bytes in fp16/bf16, 4 in fp32), as PEFT leaves them
// - bf16: 2 bytes whatever the precision
// - nf4: bitsandbytes 4-bit NormalFloat, one fp32 absmax per block of 64 weights (QLoRA)
// - nf4_dq: nf4 with the absmaxes double-quantized: 8 bits each, one fp32 scale per 256 of them
//   and one fp32 offset per tensor (bitsandbytes compress_statistics)
// - int8: LLM.int8: 1 byte per weight and one fp32 scale per output row
enum class BaseWeights { precision, bf16, nf4, nf4_dq, int8 };
std::string_view to_string(BaseWeights b);

// `training.lora.quantize_on_load`: how loading the model quantizes the base weights on the GPU
// before the step (docs/finetuning.md, "Quantizing at load").
// - none: not modelled (the step starts with the model states alone in the allocator)
// - whole: each base weight in one piece, as torchao 0.1's to_nf4 does it; the intermediates'
//   segments stay cached in the allocator into the step
enum class QuantizeOnLoad { none, whole };

// `training.lora.quantizer`: the library whose autograd function runs a quantized base linear
// (docs/finetuning.md, "Backward and activations").
// - torchao: torchao's NF4Tensor (`linear_nf4`, torchtune's QLoRA) keeps no input for backward
// - bitsandbytes: bnb's MatMul4Bit (Linear4bit: Hugging Face PEFT's QLoRA, Lightning's
//   BitsandbytesPrecision) keeps its input A whenever A or B needs a gradient, though its
//   backward reads only B; MatMul8bitLt (int8) keeps A and A's int8 transpose CAt
enum class Quantizer { torchao, bitsandbytes };

// `training.lora.layout`: how the adapters of a fused attention input projection are built.
// - separate: one LoraLayer per targeted linear, each with its own dropout (PEFT, torchtune)
// - fused-qkv: LitGPT's LoRAQKVLinear (lit_gpt/lora.py at 8641822): one lora_A over the
//   enabled q/k/v parts behind one dropout of the shared input
enum class LoraLayout { separate, fused_qkv };

// `training.lora`: adapters A (rank x in) and B (out x rank) beside each targeted linear
// (Hu et al. 2021; PEFT's LoraLayer); everything else is frozen.
struct LoraSpec {
  std::int64_t rank = 8;
  double alpha = 8;    // scaling = alpha / rank: no effect on memory or time
  double dropout = 0;  // lora_dropout: > 0 keeps a dropout output per targeted linear
  std::array<bool, models::kLinearRoles> targets{};
  BaseWeights base = BaseWeights::precision;
  QuantizeOnLoad quantize_on_load = QuantizeOnLoad::none;
  // bitsandbytes unless stated (Hugging Face PEFT's and Lightning's QLoRA, and the larger of the
  // two); torchao with quantize_on_load: whole. int8 is bitsandbytes' whatever this says.
  Quantizer quantizer = Quantizer::bitsandbytes;
  LoraLayout layout = LoraLayout::separate;
  bool targets_role(models::LinearRole r) const { return targets[static_cast<std::size_t>(r)]; }
  bool quantized() const { return base == BaseWeights::nf4 || base == BaseWeights::nf4_dq || base == BaseWeights::int8; }
  // The library that runs the quantized base: int8 is bitsandbytes' LLM.int8, quantize_on_load:
  // whole is torchao's to_nf4, else `quantizer`.
  Quantizer runs_on() const {
    if (base == BaseWeights::int8) return Quantizer::bitsandbytes;
    return quantize_on_load == QuantizeOnLoad::whole ? Quantizer::torchao : quantizer;
  }
  // The base linears' autograd function keeps their input (bitsandbytes' MatMul4Bit, MatMul8bitLt).
  bool base_keeps_input() const { return quantized() && runs_on() == Quantizer::bitsandbytes; }
};

// Bytes one frozen linear weight of `in` x `out` elements takes stored as `base`, the
// precision's weight dtype being `precision_bytes`.
core::Bytes base_weight_bytes(BaseWeights base, std::int64_t in, std::int64_t out,
                              int precision_bytes);

// What one device holds and does for one layer under fine-tuning, after tensor sharding (the
// adapters shard with their base linear: a column-parallel linear's B splits and its A is
// replicated, a row-parallel one's A splits and its B is replicated).
struct LayerTraining {
  std::int64_t trainable = 0;    // parameters trained: the adapters, or every parameter
  core::Bytes weight_bytes{};    // weights held: trained at the precision's bytes, frozen as stored
  core::Bytes adapter_saved{};   // per sample: the rank-r intermediates [+ dropout outputs, masks]
  // Per sample, what the layer formula books as the input of a frozen linear (or the normalized
  // tensor of a frozen norm weight's product) and autograd does not keep: `replicated` as the
  // layer's replicated saved bytes (divided by t only under sequence parallelism), `split`
  // already this device's.
  core::Bytes unkept_replicated{};
  core::Bytes unkept_split{};
  // Per sample, this device's: bitsandbytes' MatMul8bitLt keeps A's int8 transpose CAt
  // (1 byte per input element) per int8 base linear.
  core::Bytes quantized_saved{};
  double adapter_flops = 0;      // per sample: the adapters' forward GEMMs
  core::Bytes dequantized{};     // the largest quantized linear weight in the compute dtype
  // What dequantizing the NF4 linears costs each pass that runs them (forward, its replay and
  // backward): each weight written in the compute dtype and read back by its GEMM (the packed
  // read is in weight_bytes), and the kernels that do it (bitsandbytes' dequantize_4bit, with
  // its absmax dequantize_blockwise first under double quantization).
  core::Bytes dequant_traffic{};
  std::int32_t dequant_launches = 0;
  bool frozen = false;           // the layer's own parameters are frozen (LoRA)
};

// `params` is the layer's base parameter count on this device (sim/parallel/shard.cpp's rule);
// `weight_bytes` and `act_bytes` the precision's weight and activation dtype sizes.
// `style` says how the layer's forward runs (what its formula and an eager module keep);
// `input_grad` false for the lowest adapted layer, whose input needs no gradient.
struct ModuleStyle {
  int gemm_input_bytes = 2;
  bool eager = false;        // training.modules: eager (or eager-norm-in-dtype)
  bool compiled = false;     // training.compile with eager modules
  bool norm_upcast = true;   // eager RMSNorm's x.float()
};
LayerTraining layer_training(const models::Layer& l, std::int64_t params,
                             const std::optional<LoraSpec>& lora, int weight_bytes, int act_bytes,
                             std::int64_t tensor, const ModuleStyle& style = {},
                             bool input_grad = true);

// Parameters trained in the whole model (every tensor rank's shard together): the adapters'
// r x (in + out) per targeted linear, or every parameter without LoRA. This is the figure PEFT's
// print_trainable_parameters prints.
std::int64_t trainable_parameters(const models::Model& m, const std::optional<LoraSpec>& lora);

}  // namespace trainsim::scenario
