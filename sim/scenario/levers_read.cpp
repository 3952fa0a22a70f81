#include "sim/scenario/levers_read.hpp"

#include <string>

#include "sim/scenario/precision.hpp"

namespace trainsim::scenario {

namespace {

// At most one chunk per token of a long sequence; 2^20 keeps chunk arithmetic far from overflow.
constexpr ranges::IntRange kLossChunks{1, std::int64_t{1} << 20};

// model_init: cloned-layer plays the first block's parameters as built on the GPU in the
// precision's dtype (sim/parallel/pass_load.cpp). A quantized LoRA base is quantized while that
// block is built: played only with quantize_on_load: whole (torchao 0.1's to_nf4, and the copies'
// dequantize and quantize again), refused otherwise. Sharded models are built
// off the GPU (FSDP and ZeRO-3 partition or materialize shards, not a whole block).
void validate_model_init(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  if (s.training.model_init == TrainingSpec::ModelInit::none) return;
  const auto refuse = [&](const std::string& what) {
    ctx.fail(child_or(n.training, "model_init"), "training.model_init",
             "model_init: cloned-layer plays a whole block built on the GPU in the precision's "
             "dtype, which is not what happens " + what + ": drop model_init");
  };
  const auto& lora = s.training.lora;
  if (lora && lora->quantized() && lora->quantize_on_load != QuantizeOnLoad::whole)
    refuse("with a quantized LoRA base (training.lora.base " + std::string(to_string(lora->base)) +
           " is quantized while the block is built: quantize_on_load: whole plays that build)");
  if (s.parallel.fsdp.enabled) refuse("under parallel.fsdp (the shards are built, not the block)");
  if (s.parallel.zero == 3 && s.parallel.data > 1) refuse("under ZeRO-3 (parallel.zero 3)");
}

}  // namespace

void read_levers(MapReader& m, TrainingSpec& t) {
  t.loss_chunks = m.has("loss_chunks") ? m.int_in("loss_chunks", kLossChunks) : 0;
  t.activation_offload = m.bool_or("activation_offload", false);
  t.compile = m.bool_or("compile", false);
  const auto modules = m.choice("modules", {"fused", "eager", "eager-norm-in-dtype"}, "fused");
  t.eager_modules = modules != "fused";
  t.norm_upcast = modules != "eager-norm-in-dtype";
  t.softmax_saves_input = m.bool_or("softmax_saves_input", false);
  t.keep_logits = m.bool_or("keep_logits", false);
  t.model_init = m.choice("model_init", {"none", "cloned-layer"}, "none") == "cloned-layer"
                     ? TrainingSpec::ModelInit::cloned_layer
                     : TrainingSpec::ModelInit::none;
  t.fp8_weight_cache_step = m.choice("fp8_weight_cache", {"microbatch", "step"}, "microbatch") == "step";
  t.fp8_attention = m.bool_or("fp8_attention", false);
}

std::int64_t effective_loss_chunks(const TrainingSpec& t) {
  if (t.loss_chunks > 0) return t.loss_chunks;
  const bool megatron = t.precision == Precision::fp16 || t.precision == Precision::bf16 ||
                        t.precision == Precision::fp8;
  return megatron ? 0 : 1;
}

void validate_levers(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  // softmax_saves_input is about the standard attention's [a, s, s] scores; flash attention
  // keeps none.
  if (s.training.softmax_saves_input && s.training.flash_attention)
    ctx.fail(child_or(n.training, "softmax_saves_input"), "training.softmax_saves_input",
             "softmax_saves_input keeps the standard attention's scores, which training.attention: "
             "flash never materializes: use attention: standard or drop softmax_saves_input");
  // torch.compile is modelled for PyTorch's cross-entropy (sim/parallel/pass_loss.cpp); the
  // Megatron-LM fused loss in effect without loss_chunks under fp16 / bf16 / fp8 is not compiled.
  if (s.training.compile && effective_loss_chunks(s.training) == 0)
    ctx.fail(child_or(n.training, "compile"), "training.compile",
             "compile models torch.compile of PyTorch's cross-entropy (torchtune's compile_loss), "
             "but under precision " + std::string(to_string(s.training.precision)) +
                 " without loss_chunks the loss is Megatron-LM's fused one: give "
                 "training.loss_chunks (1 for the unchunked loss) or drop compile");
  // keep_logits is the eager, unchunked PyTorch loss of torchtune's early recipes.
  if (s.training.keep_logits && (effective_loss_chunks(s.training) != 1 || s.training.compile))
    ctx.fail(child_or(n.training, "keep_logits"), "training.keep_logits",
             "keep_logits models the eager, unchunked cross-entropy of torchtune's recipes before "
             "pytorch/torchtune#1235: it needs the unchunked PyTorch loss (loss_chunks: 1, the "
             "default under fp32, bf16-true, fp16-true and amp-*) without compile");
  // The fp8 weight cache is Transformer Engine's: nothing is quantized under other precisions.
  if (s.training.fp8_weight_cache_step && s.training.precision != Precision::fp8)
    ctx.fail(child_or(n.training, "fp8_weight_cache"), "training.fp8_weight_cache",
             "fp8_weight_cache caches fp8 copies of the weights, but precision is " +
                 std::string(to_string(s.training.precision)) +
                 ": use precision: fp8 or drop fp8_weight_cache");
  validate_model_init(ctx, s, n);
  // fp8_attention quantizes the flash-attention kernels' inputs (Transformer Engine's fp8_dpa).
  if (s.training.fp8_attention && (s.training.precision != Precision::fp8 || !s.training.flash_attention))
    ctx.fail(child_or(n.training, "fp8_attention"), "training.fp8_attention",
             "fp8_attention runs the flash-attention kernels in fp8 (Transformer Engine's fp8_dpa): "
             "it needs precision: fp8 and attention: flash");
  if (!s.training.activation_offload) return;
  // Activation offload's copies are modelled for one stage whose layers' parameters are on the
  // GPU when their backward starts (sim/parallel/pass_activation_offload.cpp).
  const auto refuse = [&](const std::string& what) {
    ctx.fail(child_or(n.training, "activation_offload"), "training.activation_offload",
             "activation offload is not modelled together with " + what +
                 " yet: turn one of them off");
  };
  const auto& p = s.parallel;
  if (p.pipeline > 1) refuse("pipeline parallelism (parallel.pipeline " + std::to_string(p.pipeline) + ")");
  if (p.zero == 3 && p.data > 1) refuse("ZeRO-3 (parallel.zero 3)");
  if (p.fsdp.enabled) refuse("parallel.fsdp");
  if (s.training.offload.parameters_on_cpu()) refuse("training.offload.parameters: cpu");
}

}  // namespace trainsim::scenario
