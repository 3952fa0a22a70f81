// Expert parallelism's layout checks (parallel.expert) and training.expert_imbalance. The expert
// group lies inside the data-parallel ranks, as Megatron-LM's expert_model_parallel_size and
// DeepSpeed-MoE's ep_size do: `expert` consecutive data ranks hold one copy of every expert,
// each rank 1/expert of them.
#include <set>
#include <string>

#include "sim/scenario/validate.hpp"
#include "sim/scenario/precision.hpp"

namespace trainsim::scenario {

namespace {
std::string str(std::int64_t v) { return std::to_string(v); }
}  // namespace

double read_expert_imbalance(MapReader& m) {
  return m.number_or("expert_imbalance", {.min = 1, .max = 1e6},
                     "expected a number >= 1 (the busiest expert's tokens over the balanced share)",
                     1.0);
}

void validate_expert(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  const ParallelSpec& p = s.parallel;
  if (p.expert == 1) return;
  const YAML::Node at = key_or(n.parallel, "expert", n.root);
  std::set<std::int64_t> experts;
  for (auto v : s.model.order)
    if (s.model.graph[v].experts > 1) experts.insert(s.model.graph[v].experts);
  if (experts.empty())
    ctx.fail(at, "parallel.expert",
             "expert parallelism needs a mixture-of-experts model; '" + s.model.name +
                 "' has no MoE layers (use parallel.expert: 1)");
  for (auto e : experts)
    if (e % p.expert != 0)
      ctx.fail(at, "parallel.expert",
               "the expert-parallel degree " + str(p.expert) + " must divide the number of experts (" +
                   str(e) + ")");
  // Context ranks hold the same weights and different tokens, so the expert group may take
  // them too (torchtitan's ep mesh borrows from dp_shard x cp).
  const std::int64_t ranks = p.data * p.context;
  if (ranks % p.expert != 0)
    ctx.fail(at, "parallel.expert",
             "the expert-parallel degree " + str(p.expert) + " must divide parallel.data (" +
                 str(p.data) + ")" +
                 (p.context > 1 ? " x parallel.context (" + str(p.context) + ")" : "") +
                 ": the expert group lies inside the data-parallel ranks");
  // ZeRO-1 is Megatron-Core's distributed optimizer: dense states sharded over data x context,
  // the routed experts' over the expert-data-parallel ranks (sim/parallel/pass_model_states.cpp).
  if (p.zero >= 2)
    ctx.fail(key_or(n.parallel, "zero", n.root), "parallel.zero",
             "expert parallelism is modelled with parallel.zero 0 or 1 (Megatron-Core's "
             "distributed optimizer), got zero " + str(p.zero));
  if (p.zero == 1 && per_tensor_states(s.training.optimizer))
    ctx.fail(key_or(n.training, "optimizer", n.root), "training.optimizer",
             "expert parallelism with parallel.zero 1 is modelled for element-wise optimizer "
             "states; '" + std::string(to_string(s.training.optimizer)) +
                 "' keeps per-tensor states: use parallel.zero 0");
  if (s.training.offload.optimizer_on_cpu() || s.training.offload.parameters_on_cpu())
    ctx.fail(key_or(n.training, "offload", n.root), "training.offload",
             "expert parallelism is modelled without offload");
  // FSDP shards the experts over the expert-data-parallel part of each shard group
  // (torchtitan's dp_shard_mod_ep mesh): the expert group must fit in the shard group.
  if (p.fsdp.enabled && (p.fsdp_shard() * p.context) % p.expert != 0)
    ctx.fail(at, "parallel.expert",
             "with parallel.fsdp the expert-parallel degree " + str(p.expert) +
                 " must divide the FSDP shard group (shard_size " + str(p.fsdp_shard()) +
                 (p.context > 1 ? " x parallel.context " + str(p.context) : "") +
                 "): each shard group holds whole expert groups");
  if (p.fsdp.cpu_offload)
    ctx.fail(at, "parallel.expert",
             "expert parallelism with parallel.fsdp.offload: cpu is not supported yet (the "
             "offloaded shards are modelled for dense units only)");
  if (s.training.lora)
    ctx.fail(key_or(n.training, "lora", n.root), "training.lora",
             "expert parallelism with training.lora is not supported yet");
}

}  // namespace trainsim::scenario
