#include "sim/parallel/lower.hpp"

#include <algorithm>

#include "sim/core/error.hpp"
#include "sim/parallel/eager_modules.hpp"
#include "sim/parallel/softmax_input.hpp"
#include "sim/parallel/pass.hpp"
#include "sim/parallel/work_estimate.hpp"
#include "sim/scenario/stage_blocks.hpp"

namespace trainsim::parallel {

std::span<const PassEntry> lowering_passes() {
  // One concern each, in the order they act at each point of the stage walk: the compute op
  // before what recomputation adds to it; context parallelism's K/V exchange before parameter
  // fetches and gathers, which then follow it; parameter fetches (offload) before gathers
  // (ZeRO-3); ZeRO-1/2's overlapped weight gathers before every gate a later pass puts behind
  // them on the comm stream (an expert all-to-all, context's K/V exchange); the replay of
  // recomputation after all that a layer's backward waits for (an offloaded checkpoint's copy
  // back, the parameters' fetch and gather), since it waits too;
  // the optimizer step, on the host or the GPU, before ZeRO-1/2's all-gather that follows it;
  // a backward's gradient accumulation before the reduction that waits for it.
  // The model states and their gradients' reduction belong to model_states and data, or under
  // FSDP to fsdp (PassEntry::owner): lower() builds one side.
  static const PassEntry passes[] = {
      compute_pass(),   loss_pass(),         tensor_pass(),    gemm_pass(),
      softmax_pass(),   batch_host_pass(),   param_gather_pass(), expert_pass(),
      activation_offload_pass(),             pipeline_pass(),
      context_pass(),   offload_pass(),
      optimizer_pass(), model_states_pass(), zero3_pass(),    fsdp_pass(),
      recompute_pass(), accumulate_pass(),   data_pass(),
      devices_pass(),   jitter_pass(),      load_pass(),
  };
  return passes;
}

void LowerContext::check_size(const Program& P, std::int32_t microbatch) const {
  const std::int64_t held = held_before + P.held_ops();
  if (held <= s.limits.max_ops) return;
  throw s.limits.refusal(
      "this step's plan would hold more than limits.max_ops = " + std::to_string(s.limits.max_ops) +
          " ops (reached at stage " + std::to_string(P.stage) + " of " + std::to_string(stages) +
          (microbatch >= 0 ? ", micro-batch " + std::to_string(microbatch + 1) + " of " +
                                 std::to_string(microbatches)
                           : "") +
          ")" + (compress ? "" : ", expanded for a trace or memory series: every layer an op"),
      " (a plan and its play take about 300-500 bytes per op)");
}

namespace {

// The layer data every pass reads: tensor shards, the pipeline's chunks, the graph's producers
// and last consumers in topological order, and what each forward keeps (before recomputation).
void prepare_layers(LowerContext& L) {
  const auto& s = L.s;
  const auto& m = L.m;
  L.stages = static_cast<int>(s.parallel.pipeline);
  L.virtual_stages = s.parallel.schedule == scenario::Schedule::interleaved
                         ? static_cast<int>(s.parallel.virtual_stages)
                         : 1;
  L.tensor = s.parallel.tensor;
  // Gradients reduce (and ZeRO shards) over data x context ranks: context ranks hold the same
  // weights and see different tokens of the same samples.
  L.data = s.parallel.data * s.parallel.context;
  L.zero = L.data > 1 ? s.parallel.zero : 0;
  L.states_owner = s.parallel.fsdp.enabled ? StatesOwner::fsdp : StatesOwner::data_parallel;
  L.mb_samples = s.training.micro_batch;
  L.microbatches = static_cast<std::int32_t>(s.training.gradient_accumulation);
  L.state_bytes = s.state_bytes();
  L.tensor_span = group_span(s, scenario::ParallelDim::tensor);
  L.data_span = group_span(s, scenario::ParallelDim::data);
  L.shards = shard_layers(m, L.tensor, s.parallel.sequence_parallel && L.tensor > 1,
                          s.parallel.expert);
  apply_modules(s, L.tensor, s.parallel.sequence_parallel && L.tensor > 1, L.shards);
  apply_softmax_input(s, L.tensor, L.shards);
  apply_training(s, L.tensor, L.shards, s.parallel.sequence_parallel && L.tensor > 1);
  const int G = L.chunk_count();
  L.chunks = partition_layers(m, L.shards, G, s.parallel.split_points,
                              scenario::stage_blocks(s.parallel, m.num_blocks).per_chunk);

  const auto n = static_cast<std::int32_t>(m.order.size());
  std::vector<std::int32_t> pos(boost::num_vertices(m.graph), -1);
  for (std::int32_t i = 0; i < n; ++i) pos[m.order[i]] = i;
  L.producers.assign(n, {});
  L.last_consumer.assign(n, -1);
  L.chunk_of.assign(n, 0);
  L.kept.assign(n, {});
  for (int g = 0; g < G; ++g)
    for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) L.chunk_of[i] = g;
  for (std::int32_t i = 0; i < n; ++i) {
    for (auto [e, end] = boost::in_edges(m.order[i], m.graph); e != end; ++e)
      L.producers[i].push_back(pos[boost::source(*e, m.graph)]);
    for (auto [e, end] = boost::out_edges(m.order[i], m.graph); e != end; ++e)
      L.last_consumer[i] = std::max(L.last_consumer[i], pos[boost::target(*e, m.graph)]);
    L.kept[i].saved = L.shards[i].saved;
  }
}

// FLOPs of the whole job for one step (MFU counts model work; HFU adds recomputation). With
// LoRA the model work is what fine-tuning does: adapters added, frozen GEMMs' backward halved,
// nothing below the lowest adapter (apply_training on the unsharded layers). With context
// parallelism the layers hold seq_len / C tokens: a sample's queries meet C times the keys of
// one chunk, and C ranks share the sample (LoRA with context parallelism is refused).
void count_flops(const scenario::Scenario& s, Plan& plan) {
  const models::Model& m = s.model;
  const std::int64_t context = s.parallel.context;
  double per_sample = 0, recompute_per_sample = 0;
  if (s.training.lora) {
    auto whole = shard_layers(m, 1, false, 1);
    apply_training(s, 1, whole);
    for (const auto& l : whole) per_sample += l.flops * (1 + l.backward_factor);
  } else {
    for (const auto v : m.order) {
      const models::Layer& l = m.graph[v];
      per_sample += l.flops * (1 + l.backward_factor);
      per_sample += l.attention_core_flops * static_cast<double>(context - 1) * (1 + l.backward_factor);
    }
  }
  per_sample *= static_cast<double>(context);
  for (const auto& P : plan.programs) {
    // Each macro template's replayed FLOPs, summed once.
    std::vector<double> template_recompute(P.macros.size(), 0.0);
    for (std::size_t t = 0; t < P.macros.size(); ++t)
      for (auto k = P.macros[t].begin; k < P.macros[t].end; ++k)
        if (P.macro_ops[k].kind == OpKind::recompute)
          template_recompute[t] += P.macro_ops[k].work.flops;
    for (const auto& op : P.ops) {
      if (op.kind == OpKind::recompute)
        recompute_per_sample += op.work.flops * static_cast<double>(P.count);
      if (op.macro >= 0)
        recompute_per_sample += template_recompute[op.macro] * static_cast<double>(P.count);
    }
  }
  plan.model_flops = per_sample * static_cast<double>(plan.samples);
  // Recompute ops were counted per micro-batch on one pipeline; scale to every data replica.
  plan.hardware_flops = plan.model_flops + recompute_per_sample;
}

bool under(std::string_view key, std::string_view prefix) {
  return key == prefix ||
         (key.size() > prefix.size() && key.starts_with(prefix) && key[prefix.size()] == '.');
}

}  // namespace

Plan lower(const scenario::Scenario& s, const LowerOptions& options) {
  check_work(s, options);  // before anything is reserved (sim/parallel/work_estimate.hpp)
  LowerContext L(s);
  L.compress = options.compress;
  L.copy_units = options.compress && options.copy_units;
  prepare_layers(L);
  std::vector<std::unique_ptr<LoweringPass>> passes;
  for (const PassEntry& e : lowering_passes())
    if (!e.owner || *e.owner == L.states_owner) passes.push_back(e.make());
  for (const auto& pass : passes) pass->prepare(L);

  Plan plan;
  plan.devices_total = s.parallel.devices();
  plan.microbatches = L.microbatches;
  plan.samples = s.training.global_batch;
  plan.tokens = s.model.sequence_model ? core::checked_mul(plan.samples, s.training.seq_len) : 0;
  plan.math = scenario::math_mode(s.training.precision);
  plan.compressed = options.compress;
  plan.caching_allocator = s.training.caching_allocator;
  plan.programs.resize(L.stages);
  for (int stage = 0; stage < L.stages; ++stage) {
    Program& P = plan.programs[stage];
    P.stage = stage;
    P.count = L.data * L.tensor;
    P.first_layer = L.chunks[stage].first;
    P.last_layer = L.chunks[stage].end - 1;
    build_stage(L, passes, P);
    L.held_before += P.held_ops();
  }
  plan.units_copied = L.units_copied;
  apply_plan_settings(plan, s);
  for (const auto& pass : passes) pass->finish(L, plan);
  count_flops(s, plan);
  return plan;
}

std::vector<PassKeys> lowering_keys() {
  std::vector<PassKeys> out;
  for (const PassEntry& e : lowering_passes()) out.push_back({e.name, e.keys, e.settings});
  return out;
}

bool is_plan_setting(std::string_view key) {
  for (const PassEntry& e : lowering_passes())
    for (std::string_view k : e.settings)
      if (under(key, k)) return true;
  return false;
}

void apply_plan_settings(Plan& plan, const scenario::Scenario& s) {
  for (const PassEntry& e : lowering_passes())
    if (e.apply_settings) e.apply_settings(plan, s);
}

}  // namespace trainsim::parallel
