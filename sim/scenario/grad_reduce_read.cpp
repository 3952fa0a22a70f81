#include "sim/scenario/grad_reduce_read.hpp"

#include <string>

namespace trainsim::scenario {

std::string_view to_string(GradReduce g) {
  return g == GradReduce::after_backward ? "after_backward" : "overlapped";
}

void read_grad_reduce(MapReader& m, ParallelSpec& p) {
  p.grad_reduce = m.choice("grad_reduce", {"overlapped", "after_backward"}, "overlapped") ==
                          "after_backward"
                      ? GradReduce::after_backward
                      : GradReduce::overlapped;
}

void validate_grad_reduce(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  if (s.parallel.grad_reduce != GradReduce::after_backward) return;
  const auto refuse = [&](const std::string& why) {
    ctx.fail(child_or(n.parallel, "grad_reduce"), "parallel.grad_reduce",
             "grad_reduce: after_backward (Megatron-LM's local DDP) " + why);
  };
  const auto& p = s.parallel;
  if (p.fsdp.enabled)
    refuse("is not modelled with parallel.fsdp, which reduces its own shards per unit");
  if (p.zero != 0)
    refuse("all-reduces whole gradients; ZeRO stage " + std::to_string(p.zero) +
           " reduce-scatters them: use parallel.zero 0 or grad_reduce: overlapped");
  if (p.expert > 1)
    refuse("all-reduces every gradient over the data ranks; with parallel.expert the routed "
           "experts reduce over their own group: use grad_reduce: overlapped");
  if (s.training.offload.optimizer_on_cpu())
    refuse("is not modelled with training.offload.optimizer: cpu, which copies every "
           "micro-batch's gradients to the host");
  if (s.training.accumulate_grads == AccumulateGrads::fp32)
    refuse("is not modelled with training.accumulate_grads: fp32, which all-reduces its own fp32 "
           "copy after each chunk's last backward");
}

}  // namespace trainsim::scenario
