#include "sim/scenario/validate.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include "sim/scenario/levers_read.hpp"
#include "sim/scenario/packed_read.hpp"
#include "sim/scenario/accumulate_read.hpp"
#include "sim/scenario/grad_reduce_read.hpp"
#include "sim/scenario/stage_blocks.hpp"

namespace trainsim::scenario {

YAML::Node child_or(const YAML::Node& parent, const char* key) {
  if (parent.IsDefined() && parent.IsMap()) {
    const YAML::Node& cp = parent;
    if (cp[key].IsDefined()) return cp[key];
  }
  return parent;
}

YAML::Node key_or(const YAML::Node& parent, const char* key, const YAML::Node& fallback) {
  const YAML::Node child = child_or(parent, key);
  return child.IsDefined() ? child : fallback;
}

namespace {
std::string str(std::int64_t v) { return std::to_string(v); }

// The parallel mapping's node, or the root when the file has none.
YAML::Node parallel_node(const LayoutNodes& n) { return n.parallel.IsDefined() ? n.parallel : n.root; }

// LoRA's targets, and the attention heads tensor parallelism splits.
void validate_targets_and_heads(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  const auto& p = s.parallel;
  const auto& m = s.model;
  const YAML::Node par = parallel_node(n);

  // PEFT refuses a LoRA config whose target modules match nothing in the model.
  if (s.training.lora && trainable_parameters(m, s.training.lora) == 0)
    ctx.fail(child_or(child_or(n.training, "lora"), "targets"), "training.lora.targets",
             "targets that name a linear layer of the model (" + m.name +
                 " has none of them: attention and MLP blocks or linear layers)");

  // Tensor parallelism splits attention heads (and KV heads) across ranks.
  std::set<std::int64_t> heads, kv_heads;
  for (auto v : m.order) {
    const auto& l = m.graph[v];
    if (l.heads > 0) heads.insert(l.heads);
    if (l.kv_heads > 0) kv_heads.insert(l.kv_heads);
  }
  for (auto h : heads)
    if (h % p.tensor != 0)
      ctx.fail(child_or(par, "tensor"), "parallel.tensor",
               "attention heads (" + str(h) + ") must be divisible by the tensor-parallel degree " +
                   str(p.tensor));
  for (auto h : kv_heads)
    if (h % p.tensor != 0 && p.tensor % h != 0)
      ctx.fail(child_or(par, "tensor"), "parallel.tensor",
               "key/value heads (" + str(h) + ") and the tensor-parallel degree " + str(p.tensor) +
                   " must divide one another");
}

// How the layers split over the pipeline chunks: split points, Megatron-Core's uneven split, or
// the even split of the blocks.
void validate_pipeline_split(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  const auto& p = s.parallel;
  const auto& m = s.model;
  const YAML::Node par = parallel_node(n);
  const std::int64_t v = p.schedule == Schedule::interleaved ? p.virtual_stages : 1;
  const std::int64_t chunks = core::checked_mul(p.pipeline, v);
  const auto layers = static_cast<std::int64_t>(m.order.size());
  if (!p.split_points.empty()) {
    if (static_cast<std::int64_t>(p.split_points.size()) != chunks - 1)
      ctx.fail(child_or(par, "split_points"), "parallel.split_points",
               "expected " + str(chunks - 1) + " split points for " + str(chunks) +
                   " pipeline chunks, got " + str(static_cast<std::int64_t>(p.split_points.size())));
    std::int64_t prev = 0;
    for (auto sp : p.split_points) {
      if (sp <= prev || sp >= layers)
        ctx.fail(child_or(par, "split_points"), "parallel.split_points",
                 "split points must increase strictly within 1.." + str(layers - 1) +
                     " (layer indices in topological order)");
      prev = sp;
    }
  }
  // Megatron-Core's uneven split (first / last stage blocks, the embedding or loss as a block).
  const StageBlocks uneven = stage_blocks(p, m.num_blocks);
  if (!uneven.error.empty())
    ctx.fail(child_or(par, uneven.key.c_str()), "parallel." + uneven.key, uneven.error);
  if (!uneven.per_chunk.empty() && models::block_bounds(m).empty())
    ctx.fail(child_or(par, uneven.key.c_str()), "parallel." + uneven.key,
             uneven.key + " counts transformer blocks, and this model's blocks do not follow one "
             "another in its layer order: give split_points");
  // A chunk left without blocks holds the embedding (first) or the loss (last): it must exist.
  if (!uneven.per_chunk.empty() && (uneven.per_chunk.front() == 0 || uneven.per_chunk.back() == 0)) {
    const bool first = uneven.per_chunk.front() == 0;
    const auto at = [&](std::size_t i) { return m.graph[m.order[i]].block; };
    if ((first && at(0) >= 0) || (!first && at(m.order.size() - 1) >= 0))
      ctx.fail(child_or(par, uneven.key.c_str()), "parallel." + uneven.key,
               uneven.key + ": the " + (first ? "first" : "last") + " chunk would hold no block, and the "
               "model has no layer " + (first ? "before its first" : "after its last") + " block");
  }
  if (!uneven.per_chunk.empty() && !p.split_points.empty())
    ctx.fail(child_or(par, "split_points"), "parallel.split_points",
             "give either split_points or Megatron-Core's uneven split (" + uneven.key + "), not both");
  if (p.split_points.empty() && uneven.per_chunk.empty() && chunks > 1) {
    if (m.num_blocks > 0 && m.num_blocks % chunks != 0)
      ctx.fail(child_or(par, "pipeline"), "parallel.pipeline",
               "the model's " + str(m.num_blocks) + " blocks are not divisible by pipeline x "
               "virtual_stages = " + str(chunks) + "; change the degree or give split_points");
    if (chunks > layers)
      ctx.fail(child_or(par, "pipeline"), "parallel.pipeline",
               "pipeline x virtual_stages = " + str(chunks) + " exceeds the model's " + str(layers) +
                   " layers");
  }
}

// The micro-batches the pipeline schedules take: schedules per step, interleaved groups.
void validate_pipeline_schedule(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  const auto& p = s.parallel;
  const YAML::Node par = parallel_node(n);
  if (p.microbatches_per_schedule > 0 &&
      s.training.gradient_accumulation % p.microbatches_per_schedule != 0)
    ctx.fail(child_or(par, "microbatches_per_schedule"), "parallel.microbatches_per_schedule",
             "the step's " + str(s.training.gradient_accumulation) +
                 " micro-batches are not a whole number of schedules of " +
                 str(p.microbatches_per_schedule));
  if (p.schedule == Schedule::interleaved && p.virtual_stages > 1) {
    if (p.pipeline < 2)
      ctx.fail(child_or(par, "schedule"), "parallel.schedule",
               "the interleaved schedule needs pipeline >= 2");
    const std::int64_t mb = s.training.gradient_accumulation, group = p.microbatch_group(mb);
    // PyTorch's ScheduleInterleaved1F1B raises the same (torch/distributed/pipelining/schedules.py).
    const std::int64_t per = p.schedule_microbatches(mb);
    const std::int64_t rounds = std::max<std::int64_t>(1, per / p.pipeline);
    if (p.pipeline_engine == PipelineEngine::pytorch && per % rounds != 0)
      ctx.fail(child_or(n.training, "global_batch"), "training.gradient_accumulation",
               "the pytorch engine's Interleaved1F1B runs a schedule's " + str(per) +
                   " micro-batches in " + str(rounds) +
                   " rounds (micro-batches / pipeline) and needs a multiple of them");
    if (p.pipeline_engine != PipelineEngine::pytorch && p.microbatch_group_size == 0 &&
        mb % p.pipeline != 0)
      ctx.fail(child_or(n.training, "global_batch"), "training.gradient_accumulation",
               "the interleaved schedule needs the number of micro-batches (" + str(mb) +
                   ") to be a multiple of pipeline (" + str(p.pipeline) + ")");
    // Megatron-Core's schedules.py refuses the same (forward_backward_pipelining_with_interleaving).
    if (p.microbatch_group_size > 0 && (group < p.pipeline || group > mb))
      ctx.fail(child_or(par, "microbatch_group_size"), "parallel.microbatch_group_size",
               "microbatch_group_size " + str(group) + " must lie between pipeline (" +
                   str(p.pipeline) + ") and the micro-batches per step (" + str(mb) + ")");
    if (p.microbatch_group_size > 0 && mb % group != 0 && mb % group < p.pipeline)
      ctx.fail(child_or(par, "microbatch_group_size"), "parallel.microbatch_group_size",
               "the micro-batches per step (" + str(mb) + ") leave a last group of " +
                   str(mb % group) + ", fewer than pipeline (" + str(p.pipeline) +
                   "): Megatron-Core refuses a group that would stall the pipeline");
  }
}

}  // namespace

void validate_layout(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  const auto& p = s.parallel;
  validate_targets_and_heads(ctx, s, n);
  validate_pipeline_split(ctx, s, n);
  validate_pipeline_schedule(ctx, s, n);

  // Parameter offload is ZeRO-3's (DeepSpeed's offload_param, ZeRO-Infinity): each rank keeps
  // its 1/data shard in host memory and fetches it per layer; trainsim models it together with
  // optimizer offload, which runs the update where the shard lives.
  if (s.training.offload.parameters_on_cpu()) {
    const YAML::Node at = child_or(child_or(n.training, "offload"), "parameters");
    if (p.zero != 3)
      ctx.fail(at, "training.offload.parameters",
               "parameter offload needs parallel.zero: 3 (parameters are offloaded as ZeRO-3 "
               "shards), got zero " + str(p.zero));
    if (!s.training.offload.optimizer_on_cpu())
      ctx.fail(at, "training.offload.parameters",
               "parameter offload needs optimizer offload too (training.offload.optimizer: cpu)");
  }

  // training.offload is DeepSpeed's ZeRO-Offload; FSDP offloads its own shards
  // (parallel.fsdp.offload: cpu, PyTorch's CPUOffloadPolicy).
  if (p.fsdp.enabled && s.training.offload.optimizer_on_cpu())
    ctx.fail(child_or(n.training, "offload"), "training.offload",
             "training.offload is DeepSpeed's ZeRO-Offload and needs parallel.zero; with "
             "parallel.fsdp write parallel.fsdp.offload: cpu (PyTorch's CPUOffloadPolicy)");
  validate_expert(ctx, s, n);
  validate_levers(ctx, s, n);
  validate_packed_documents(ctx, s, n);
  validate_accumulate(ctx, s, n);
  validate_grad_reduce(ctx, s, n);
  validate_param_gather(ctx, s, n);
  validate_optimizer(ctx, s, n);

  if (n.cluster_given) {
    const std::int64_t slots = core::checked_mul(s.cluster.nodes, s.cluster.gpus_per_node);
    if (p.devices() != slots)
      ctx.fail(n.cluster, "cluster",
               "data x tensor x pipeline = " + str(p.data) + " x " + str(p.tensor) + " x " +
                   str(p.pipeline) + " = " + str(p.devices()) +
                   " devices, but the cluster has nodes x gpus_per_node = " + str(slots));
  }

  // Refuse a step sure to exceed the op limit before anything is lowered: each stage plays at
  // least a forward and a backward op per micro-batch and model chunk. The lowering counts the
  // real ops (macro ops fold repeated layers) and refuses at the same place past the limit.
  std::int64_t at_least = std::numeric_limits<std::int64_t>::max();
  try {
    at_least = core::checked_mul(core::checked_mul(s.training.gradient_accumulation, 2),
                                 core::checked_mul(p.pipeline, p.schedule == Schedule::interleaved ? p.virtual_stages : 1));
  } catch (const core::OverflowError&) {
    // More than 64 bits of ops is certainly above the limit.
  }
  if (at_least > s.limits.max_ops)
    throw s.limits.refusal("this step would hold at least " + str(at_least) +
                           " ops (micro-batches x pipeline chunks x forward and backward), above limits.max_ops = " +
                           str(s.limits.max_ops));
}

}  // namespace trainsim::scenario
