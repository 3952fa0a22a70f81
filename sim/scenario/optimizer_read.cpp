// training.optimizer and training.optimizer_in_backward, and what they need of the layout.
#include <algorithm>

#include "sim/scenario/validate.hpp"

namespace trainsim::scenario {

void read_optimizer(MapReader& m, TrainingSpec& t) {
  const std::string opt =
      m.choice("optimizer",
               {"sgd", "momentum", "adam", "adamw", "lion", "adamw-8bit", "paged-adamw",
                "paged-adamw-8bit", "adafactor"},
               "adamw");
  const auto& names = optimizer_names();
  t.optimizer = static_cast<Optimizer>(std::find(names.begin(), names.end(), opt) - names.begin());
  t.optimizer_in_backward = m.bool_or("optimizer_in_backward", false);
}

void validate_optimizer(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  const auto& p = s.parallel;
  const auto& t = s.training;
  if (per_tensor_states(t.optimizer) || paged(t.optimizer)) {
    // bitsandbytes and Adafactor keep their states per parameter tensor, which ZeRO's and
    // FSDP's flattened shards and DeepSpeed's CPU Adam do not keep.
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
