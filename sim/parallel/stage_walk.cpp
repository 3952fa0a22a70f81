// The stage walk: a pipeline stage's units in schedule order, each unit's layers, and the points
// at which the passes add their ops (pass.hpp). What a unit does belongs to the passes; the walk
// owns the order, the arrival of a unit's input and fast play's macro ops.
#include <algorithm>

#include "sim/core/error.hpp"
#include "sim/parallel/pass.hpp"
#include "sim/parallel/unit_copy.hpp"

namespace trainsim::parallel {

std::int32_t StageContext::emit_compute(UnitStep& unit, const Op& op,
                                        std::vector<MemEffect>& allocs,
                                        std::vector<MemEffect>& frees, OpRef ready,
                                        std::int32_t first, std::int32_t last) {
  OpRef arrival{};
  if (unit.arrival_pending) {
    allocs.insert(allocs.begin(), unit.arrival_alloc);
    // A forward's first layer frees the received activation; no earlier tensor of the chunk
    // feeds it, so the free leads its list.
    if (unit.forward()) frees.insert(frees.begin(), unit.arrival_free);
    arrival = B.ref(unit.transfer);
    unit.arrival_pending = false;
  }
  const std::int32_t index = B.emit(op, allocs, frees, {arrival, ready});
  const ComputeOp info{index, op.kind, first, last};
  for (const auto& pass : passes) pass->on_compute(*this, info);
  return index;
}

void StageContext::reduced(UnitStep& unit, std::int32_t op, std::int32_t layer) {
  for (const auto& pass : passes) pass->after_reduction(*this, unit, op, layer);
}

namespace {

using Passes = std::span<const std::unique_ptr<LoweringPass>>;

// Reserve once: a large run has hundreds of thousands of ops, and regrowing the vectors (page
// faults on fresh memory) would cost more than building them. Compressed, a repeated unit is
// a transfer and a macro op; a few units per chunk stay expanded (all of them when a pass
// expands units).
void reserve(StageContext& c, Passes passes, std::size_t units) {
  const LowerContext& L = c.L;
  std::size_t per_layer = 2;
  bool expanded = false;
  for (const auto& pass : passes) {
    per_layer += static_cast<std::size_t>(pass->ops_per_layer(L));
    expanded = expanded || pass->expands_units(L);
  }
  std::size_t per_unit = 4;
  for (std::int32_t g = c.stage(); g < L.chunk_count(); g += L.stages) {
    const auto layers = static_cast<std::size_t>(L.chunks[g].end - L.chunks[g].first);
    per_unit = std::max(per_unit, layers * per_layer + 4);
  }
  const bool units_repeat = L.compress && !expanded;
  const std::size_t expanded_units =
      units_repeat
          ? std::min<std::size_t>(units, 4 * static_cast<std::size_t>(L.virtual_stages) + 4)
          : units;
  c.P.ops.reserve(expanded_units * per_unit + (units - expanded_units) * 2 + 8);
  c.P.effects.reserve(expanded_units * per_unit * 2 + 8);
  c.P.deps.reserve(units * 4 + c.P.ops.capacity() / 4 + 8);
}

// Effect lists of the op being built (reused: most ops name a few tensors).
struct Scratch {
  std::vector<MemEffect> allocs, frees;
};

// One layer's forward or backward: the ops before it, the op with every pass's effects, and the
// ops after it. Returns the op's index.
std::int32_t layer_step(StageContext& c, Passes passes, UnitStep& u, std::int32_t layer,
                        Scratch& x) {
  c.param_ready = -1;
  for (const auto& pass : passes) pass->before_layer(c, u, layer);
  x.allocs.clear();
  x.frees.clear();
  LayerOp lo{layer, Op{}, x.allocs, x.frees};
  for (const auto& pass : passes) pass->layer_op(c, u, lo);
  const std::int32_t index =
      c.emit_compute(u, lo.op, x.allocs, x.frees, c.ref_or_none(c.param_ready), layer, layer);
  c.recent[0] = c.recent[1];
  c.recent[1] = index;
  c.layer_end = index;
  for (const auto& pass : passes) pass->after_layer(c, u, layer, c.layer_end);
  return c.layer_end;
}

}  // namespace

void build_stage(LowerContext& L, Passes passes, Program& P) {
  StageContext c(L, P, passes);
  for (std::int32_t g = P.stage; g < L.chunk_count(); g += L.stages)
    for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) {
      c.params += L.shards[i].params;
      c.trainable += L.shards[i].trainable;
      c.weight_bytes += L.shards[i].weight_bytes;
    }
  c.update_params = c.trainable;
  for (const auto& pass : passes) pass->book_states(c);
  for (const auto& pass : passes) pass->place_states(c);
  for (const auto& pass : passes) pass->begin_stage(c);

  const int per_schedule = static_cast<int>(L.s.parallel.schedule_microbatches(L.microbatches));
  const auto units =
      schedule_step(L.s.parallel.schedule, P.stage, L.stages, L.microbatches, per_schedule,
                    L.virtual_stages, static_cast<int>(L.s.parallel.microbatch_group(L.microbatches)),
                    L.s.parallel.pipeline_engine);
  reserve(c, passes, units.size());
  bool expanded = false;
  for (const auto& pass : passes) expanded = expanded || pass->expands_units(L);
  // Macro template per (global chunk, direction) once a repeatable unit was emitted (fast play).
  std::vector<std::int32_t> macro_of(2 * static_cast<std::size_t>(L.chunk_count()), -1);
  std::vector<int> backward_units_seen(L.virtual_stages, 0);
  Scratch scratch;
  UnitCopier copier(L, passes);
  for (const WorkUnit& unit : units) {
    const std::int32_t g = unit.chunk * L.stages + P.stage;
    UnitStep u{unit, g, L.chunks[g], g == 0, g == L.chunk_count() - 1};
    if (!unit.forward) {
      // The step's first backward of the chunk; the last one of each schedule (the step's last
      // with one schedule per step), after which PyTorch pipelining syncs the gradients.
      u.first_microbatch = ++backward_units_seen[unit.chunk] == 1;
      u.last_microbatch = backward_units_seen[unit.chunk] % per_schedule == 0;
    }
    for (const auto& pass : passes) pass->begin_unit(c, u);
    bool repeatable = L.compress;
    for (const auto& pass : passes) repeatable = repeatable && pass->repeats(c, u);
    std::int32_t& macro = macro_of[2 * g + (unit.forward ? 1 : 0)];
    if (repeatable && macro >= 0) {
      const std::int32_t at = c.B.emit_macro(macro, unit.microbatch, u.transfer);
      if (!unit.forward)
        if (const std::int32_t tap = c.B.emit_taps(macro, at, unit.microbatch); tap >= 0)
          c.last_comm = tap;
      for (const auto& pass : passes) pass->unit_done(c, u, at);
      continue;
    }
    // A unit that stays expanded may be a copy of the last one of its kind (unit_copy.hpp).
    const bool stays_expanded = !repeatable && !(L.compress && !unit.forward && !expanded);
    std::int32_t last = -1;
    if (stays_expanded && copier.copy(c, u, last)) {
      for (const auto& pass : passes) pass->unit_done(c, u, last);
      continue;
    }
    const UnitCopier::Mark mark = copier.mark(c, u);
    const std::size_t unit_first = P.ops.size();
    if (unit.forward)
      for (std::int32_t i = u.range.first; i < u.range.end; ++i)
        last = layer_step(c, passes, u, i, scratch);
    else
      for (std::int32_t i = u.range.end - 1; i >= u.range.first; --i)
        last = layer_step(c, passes, u, i, scratch);
    for (const auto& pass : passes) pass->end_unit(c, u, last);
    if (stays_expanded) copier.lowered(c, u, mark, last);
    if (repeatable) macro = c.B.make_template(unit_first);
    // A one-off backward unit of compute ops (and taps) — the first, which allocates the
    // gradients — still plays as one macro op over its own template, unless a pass keeps units
    // expanded (its later ops may wait for any op of the unit: FSDP's prefetch).
    const std::int32_t own = repeatable ? macro
                             : (L.compress && !unit.forward && !expanded)
                                 ? c.B.make_template(unit_first)
                                 : -1;
    if (own >= 0) {
      std::int32_t tap = -1;
      last = c.B.replace_by_macro(unit_first, own, unit.microbatch, u.transfer, &tap);
      if (tap >= 0) c.last_comm = tap;
    }
    for (const auto& pass : passes) pass->unit_done(c, u, last);
  }
  for (const auto& pass : passes) pass->end_backward(c);
  for (const auto& pass : passes) pass->end_step(c);
  L.units_copied += copier.copied();
}

}  // namespace trainsim::parallel
