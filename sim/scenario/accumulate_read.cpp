#include "sim/scenario/accumulate_read.hpp"

#include <string>

#include "sim/scenario/precision.hpp"

namespace trainsim::scenario {

std::string_view to_string(AccumulateGrads a) {
  switch (a) {
    case AccumulateGrads::fused: return "fused";
    case AccumulateGrads::autograd: return "autograd";
    case AccumulateGrads::fp32: return "fp32";
    case AccumulateGrads::fused_fp32: return "fused-fp32";
  }
  return "?";
}

void read_accumulate(MapReader& m, TrainingSpec& t) {
  const std::string v =
      m.choice("accumulate_grads", {"fused", "autograd", "fp32", "fused-fp32"}, "fused");
  t.accumulate_grads = v == "autograd"     ? AccumulateGrads::autograd
                       : v == "fp32"       ? AccumulateGrads::fp32
                       : v == "fused-fp32" ? AccumulateGrads::fused_fp32
                                           : AccumulateGrads::fused;
}

void validate_accumulate(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  const AccumulateGrads a = s.training.accumulate_grads;
  if (a == AccumulateGrads::fused) return;
  const auto refuse = [&](const std::string& why) {
    ctx.fail(child_or(n.training, "accumulate_grads"), "training.accumulate_grads",
             "accumulate_grads: " + std::string(to_string(a)) + " " + why);
  };
  const auto& p = s.parallel;
  if (p.fsdp.enabled)
    refuse("is not modelled with parallel.fsdp, which accumulates its own unsharded gradients");
  // fused-fp32 has no pass of its own: under ZeRO-2/3 each micro-batch's 4-byte gradients are
  // reduce-scattered in fp32 into 4-byte shards (Megatron-FSDP's optim_grads, DeepSpeed's
  // grad_accum_dtype fp32), and optimizer offload copies them to the host as it does 16-bit ones.
  const bool per_micro_batch_ok = a == AccumulateGrads::fused_fp32;
  if (p.zero >= 2 && p.data > 1 && !per_micro_batch_ok)
    refuse("describes gradients reduced once per step; ZeRO stage " + std::to_string(p.zero) +
           " reduces every micro-batch: use parallel.zero 0 or 1");
  if (s.training.offload.optimizer_on_cpu() && !per_micro_batch_ok)
    refuse("is not modelled with training.offload.optimizer: cpu, which copies every "
           "micro-batch's gradients to the host");
  if (a == AccumulateGrads::fp32 && p.expert > 1)
    refuse("all-reduces every gradient over the data ranks; with parallel.expert the routed "
           "experts reduce over their own group, which it does not model: use fused");
  const Precision pr = s.training.precision;
  if (a == AccumulateGrads::fused_fp32 && pr != Precision::fp16 && pr != Precision::bf16 &&
      pr != Precision::fp8)
    refuse("keeps fp32 gradients beside 16-bit weights (Megatron-Core's main_grad): it needs "
           "training.precision fp16, bf16 or fp8, got " + std::string(to_string(pr)));
  if (a == AccumulateGrads::fp32 && pr != Precision::fp16 && pr != Precision::bf16)
    refuse("adds 16-bit gradients into an fp32 copy (DeepSpeed's BF16_Optimizer): it needs "
           "training.precision fp16 or bf16, got " + std::string(to_string(pr)));
}

}  // namespace trainsim::scenario
