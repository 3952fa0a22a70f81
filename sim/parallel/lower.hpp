#pragma once
// Lowering: (model, training, parallel config) -> one Program per pipeline stage. Chooses the
// stage partition, shards layers over tensor ranks and model states over ZeRO ranks, orders the
// work with the pipeline schedule and attaches every memory effect and cost input.
#include "sim/parallel/program.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::parallel {

struct LowerOptions {
  // Fast play: every pipeline unit that repeats an earlier one exactly (same chunk and direction,
  // compute work only, no first-time gradient allocation or gradient reduction) becomes one
  // macro op over a shared template. Playing it gives the same report as the expanded plan
  // (tests/exec/fast_play_test.cpp) at a fraction of the cost; traces and memory series need
  // every op and use the expanded plan.
  bool compress = false;
};

// Throws core::ConfigError, located at s.limits.ops_at, once the plan would hold more than
// s.limits.max_ops ops.
Plan lower(const scenario::Scenario& s, const LowerOptions& options = {});

}  // namespace trainsim::parallel
