// training.optimizer, optimizer_impl, optimizer_block, zero_grad, optimizer_in_backward and
// optimizer_states, and what they need of the layout.
#include <algorithm>

#include "sim/scenario/lazy_states.hpp"
#include "sim/scenario/validate.hpp"

namespace trainsim::scenario {

void read_optimizer(MapReader& m, TrainingSpec& t) {
  const std::string opt =
      m.choice("optimizer",
               {"sgd", "momentum", "adam", "adamw", "lion", "adamw-8bit", "paged-adamw",
                "paged-adamw-8bit", "adafactor", "adamw-4bit"},
               "adamw");
  const auto& names = optimizer_names();
  t.optimizer = static_cast<Optimizer>(std::find(names.begin(), names.end(), opt) - names.begin());
  t.optimizer_in_backward = m.bool_or("optimizer_in_backward", false);
  const std::string impl = m.choice("optimizer_impl", {"foreach", "for-loop", "fused"}, "");
  for (OptimizerImpl i : {OptimizerImpl::foreach, OptimizerImpl::for_loop, OptimizerImpl::fused})
    if (impl == to_string(i)) t.optimizer_impl = i;
  if (m.has("optimizer_block")) t.optimizer_block = m.positive_int("optimizer_block");
  t.zero_grad = m.choice("zero_grad", {"set_to_none", "zeros"}, "set_to_none") == "zeros"
                    ? ZeroGrad::zeros
                    : ZeroGrad::set_to_none;
  t.lazy_optimizer_states = m.choice("optimizer_states", {"eager", "lazy"}, "eager") == "lazy";
}

namespace {

// training.optimizer_impl names one of torch.optim's paths; bitsandbytes, torchao's low-bit
// AdamW and Hugging Face's Adafactor have one implementation each.
void validate_impl(const YamlContext& ctx, const TrainingSpec& t, const LayoutNodes& n) {
  if (!t.optimizer_impl) return;
  const OptimizerImpl only = default_optimizer_impl(Precision::fp32, t.optimizer);
  const bool single = block_quantized(t.optimizer) || paged(t.optimizer) ||
                      t.optimizer == Optimizer::adafactor;
  if (single && *t.optimizer_impl != only)
    ctx.fail(child_or(n.training, "optimizer_impl"), "training.optimizer_impl",
             std::string(to_string(t.optimizer)) + " has one implementation, " +
                 std::string(to_string(only)) +
                 (t.optimizer == Optimizer::adafactor
                      ? " (Hugging Face's Adafactor loops over the tensors)"
                      : four_bit(t.optimizer)
                            ? " (torchao compiles one fused step per parameter)"
                            : " (bitsandbytes' update kernels)") +
                 ": leave optimizer_impl out or set it to " + std::string(to_string(only)));
}

// optimizer_block is the block of 8-bit states' absmax or 4-bit states' scale: another
// optimizer has none.
void validate_block(const YamlContext& ctx, const TrainingSpec& t, const LayoutNodes& n) {
  if (!t.optimizer_block || block_quantized(t.optimizer)) return;
  ctx.fail(child_or(n.training, "optimizer_block"), "training.optimizer_block",
           "the quantization block of 8-bit or 4-bit optimizer states, which " +
               std::string(to_string(t.optimizer)) +
               " does not keep: leave optimizer_block out or use adamw-8bit, paged-adamw-8bit "
               "or adamw-4bit");
}

// zero_grad: zeros keeps every gradient allocated across steps, which the frameworks that free
// or shard gradients themselves do not do.
void validate_zero_grad(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  const TrainingSpec& t = s.training;
  if (t.zero_grad != ZeroGrad::zeros) return;
  const YAML::Node at = child_or(n.training, "zero_grad");
  const char* key = "training.zero_grad";
  if (t.optimizer_in_backward)
    ctx.fail(at, key, "zeros keeps the gradients between steps, which optimizer_in_backward "
                      "frees in each gradient's hook (torchtune calls zero_grad(set_to_none=True) "
                      "there): use set_to_none");
  if (s.parallel.zero >= 2 || s.parallel.fsdp.enabled)
    ctx.fail(at, key, "zeros is modelled for unsharded gradients: ZeRO-2/3 and FSDP own their "
                      "gradient buffers (use set_to_none, or parallel.zero 0 or 1)");
  if (t.offload.optimizer_on_cpu())
    ctx.fail(at, key, "zeros is modelled for gradients on the GPU: training.offload.optimizer: "
                      "cpu moves them to the host each micro-batch (use set_to_none)");
}

// optimizer_states: lazy, refused where lazy_states_refusal gives a reason.
void validate_lazy_states(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  if (!s.training.lazy_optimizer_states) return;
  if (const auto why = lazy_states_refusal(s))
    ctx.fail(child_or(n.training, "optimizer_states"), "training.optimizer_states", *why);
}

}  // namespace

// optimizer_states: lazy is torch.optim's `_init_group`, zeros_like(param) per buffer in the
// first step(): states of the parameter's own dtype and shape, and no master copy among them.
std::optional<std::string> lazy_states_refusal(const Scenario& s) {
  const TrainingSpec& t = s.training;
  const Optimizer o = t.optimizer;
  if (o != Optimizer::adam && o != Optimizer::adamw && o != Optimizer::momentum &&
      o != Optimizer::lion)
    return "lazy is modelled for torch.optim's adam, adamw, momentum and lion (one or two "
           "buffers shaped as the parameter), not " + std::string(to_string(o)) + ": use eager";
  const StateBytes sb = s.parallel.fsdp.enabled ? fsdp_state_bytes(t.precision, o)
                                                : state_bytes_per_param(t.precision, o);
  if (sb.master > 0)
    return "precision " + std::string(to_string(t.precision)) +
           " keeps fp32 master weights with the optimizer states, which Megatron-LM "
           "and DeepSpeed create at init: lazy needs torch.optim over the parameters "
           "themselves (fp32, amp-*, *-true, or parallel.fsdp)";
  if (t.optimizer_in_backward)
    return "optimizer_in_backward creates each parameter's states in its gradient's hook "
           "during the first backward, which lazy does not model: use eager";
  if (t.lora)
    return "lazy is modelled for full training (every parameter's states); with "
           "training.lora use eager";
  if (s.parallel.zero >= 1)
    return "ZeRO's partitioned optimizer (DeepSpeed, Megatron-LM's distributed "
           "optimizer) allocates its states at init: use eager or parallel.fsdp";
  return std::nullopt;
}

void validate_optimizer(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  const auto& p = s.parallel;
  const auto& t = s.training;
  validate_impl(ctx, t, n);
  validate_block(ctx, t, n);
  validate_zero_grad(ctx, s, n);
  validate_lazy_states(ctx, s, n);
  if (per_tensor_states(t.optimizer) || paged(t.optimizer)) {
    // bitsandbytes, torchao's low-bit AdamW and Adafactor keep their states per parameter
    // tensor, which ZeRO's and FSDP's flattened shards and DeepSpeed's CPU Adam do not keep.
    const YAML::Node at = child_or(n.training, "optimizer");
    const std::string what(to_string(t.optimizer));
    if (p.data > 1 && p.zero >= 1)
      ctx.fail(at, "training.optimizer",
               what + " keeps its states per parameter tensor: use parallel.zero: 0 (ZeRO's "
                      "partitioned states are modelled for sgd, momentum, adam, adamw and lion)");
    if (p.fsdp.enabled)
      ctx.fail(at, "training.optimizer",
               what + " with parallel.fsdp is not modelled: use adamw, adam, sgd, momentum or lion");
    if (t.offload.optimizer_on_cpu())
      ctx.fail(at, "training.optimizer",
               what + " runs on the GPU: training.offload.optimizer: cpu needs adamw, adam, sgd, "
                      "momentum or lion (DeepSpeed's CPU optimizers)");
  }
  if (!t.optimizer_in_backward) return;
  // torchtune's optimizer_in_bwd steps each parameter in its gradient's hook: the gradient of
  // one micro-batch is consumed at once, so nothing accumulates across micro-batches, and the
  // gradient is never reduced across data ranks as a bucket.
  const YAML::Node at = child_or(n.training, "optimizer_in_backward");
  const char* key = "training.optimizer_in_backward";
  if (t.gradient_accumulation > 1)
    ctx.fail(at, key,
             "optimizer_in_backward steps each parameter as soon as its gradient is ready, so "
             "gradients cannot accumulate: gradient_accumulation must be 1 (it is " +
                 std::to_string(t.gradient_accumulation) + "; torchtune refuses the same)");
  if (p.data > 1 || p.fsdp.enabled)
    ctx.fail(at, key,
             "optimizer_in_backward is modelled on one data rank: parallel.data must be 1 (DDP's "
             "bucketed all-reduce and ZeRO/FSDP's reduce-scatter need every gradient of the step)");
  if (p.pipeline > 1)
    ctx.fail(at, key, "optimizer_in_backward with parallel.pipeline > 1 is not modelled");
  if (t.offload.optimizer_on_cpu())
    ctx.fail(at, key, "optimizer_in_backward runs the update on the GPU: it cannot go with "
                      "training.offload.optimizer: cpu");
}

}  // namespace trainsim::scenario
