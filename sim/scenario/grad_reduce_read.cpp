#include "sim/scenario/grad_reduce_read.hpp"

#include <string>

namespace trainsim::scenario {

std::string_view to_string(GradReduce g) {
  switch (g) {
    case GradReduce::after_backward: return "after_backward";
    case GradReduce::after_backward_in_place: return "after_backward_in_place";
    case GradReduce::overlapped: break;
  }
  return "overlapped";
}

void read_grad_reduce(MapReader& m, ParallelSpec& p) {
  const std::string v =
      m.choice("grad_reduce", {"overlapped", "after_backward", "after_backward_in_place"}, "overlapped");
  p.grad_reduce = v == "after_backward"            ? GradReduce::after_backward
                  : v == "after_backward_in_place" ? GradReduce::after_backward_in_place
                                                   : GradReduce::overlapped;
}

void validate_grad_reduce(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  const GradReduce g = s.parallel.grad_reduce;
  if (g == GradReduce::overlapped) return;
  const bool local = g == GradReduce::after_backward;
  const auto refuse = [&](const std::string& why) {
    ctx.fail(child_or(n.parallel, "grad_reduce"), "parallel.grad_reduce",
             std::string("grad_reduce: ") + std::string(to_string(g)) +
                 (local ? " (Megatron-LM's local DDP) " : " (Megatron-Core's DDP without --overlap-grad-reduce) ") +
                 why);
  };
  const auto& p = s.parallel;
  if (p.fsdp.enabled)
    refuse("is not modelled with parallel.fsdp, which reduces its own shards per unit");
  if (local && p.zero != 0)
    refuse("all-reduces whole gradients; ZeRO stage " + std::to_string(p.zero) +
           " reduce-scatters them: use parallel.zero 0 or grad_reduce: overlapped");
  if (!local && p.zero > 1)
    refuse("reduces once per step; ZeRO stage " + std::to_string(p.zero) +
           " reduces every micro-batch: use parallel.zero 0 or 1");
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

std::string_view to_string(ParamGather g) {
  return g == ParamGather::overlapped ? "overlapped" : "after_step";
}

void read_param_gather(MapReader& m, ParallelSpec& p) {
  p.param_gather = m.choice("param_gather", {"after_step", "overlapped"}, "after_step") == "overlapped"
                       ? ParamGather::overlapped
                       : ParamGather::after_step;
}

void validate_param_gather(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  if (s.parallel.param_gather != ParamGather::overlapped) return;
  const auto refuse = [&](const std::string& why) {
    ctx.fail(child_or(n.parallel, "param_gather"), "parallel.param_gather",
             "param_gather: overlapped (Megatron-Core's --overlap-param-gather) " + why);
  };
  const auto& p = s.parallel;
  if (p.fsdp.enabled) refuse("is for ZeRO-1/2; parallel.fsdp gathers its units before each use already");
  if (p.zero != 1 && p.zero != 2)
    refuse("overlaps ZeRO-1/2's all-gather of the updated weights; with parallel.zero " +
           std::to_string(p.zero) + (p.zero == 3 ? " the weights are gathered before each use already"
                                                 : " nothing is gathered") + ": use parallel.zero 1 or 2");
  if (p.expert > 1)
    refuse("is not modelled beside parallel.expert (the routed experts' own optimizer gathers over "
           "another group): use param_gather: after_step");
  if (s.training.offload.optimizer_on_cpu())
    refuse("is not modelled with training.offload.optimizer: cpu (DeepSpeed's ZeRO-Offload copies "
           "the updated weights from the host)");
}

}  // namespace trainsim::scenario
