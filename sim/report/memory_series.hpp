#pragma once
// Memory in use over the step, per device role and category, rebuilt from a played Timeline:
// each op's allocations are booked at its start time and its frees released at its finish time,
// on top of Program::persistent booked at time 0. The basis of the trace counters and the plot.
#include <cstdint>
#include <vector>

#include "sim/exec/timeline.hpp"
#include "sim/parallel/program.hpp"

namespace trainsim::report {

// Memory in use from `time` until the next sample's time.
struct MemorySample {
  core::TimePoint time{};
  hw::MemBreakdown in_use;
};

// One device role's memory over the step. Samples are in time order; several may share a time
// (a transient peak within one instant is kept, followed by the state the instant ends in), so
// the largest sample total equals the player's peak exactly — with the caching-allocator model,
// samples include what it holds beyond the tensors (MemCategory::allocator_cache).
struct MemorySeries {
  std::int32_t program = 0;
  core::Bytes capacity{};
  core::Bytes peak{};  // max over samples of in_use.total()
  std::vector<MemorySample> samples;
};

// One series per Program. Events at the same instant are taken in the player's order (finish
// events by (time, start order); an op starts right after the finish that made it ready), which
// is reconstructed from the timeline in O(ops log ops). Throws core::InternalError when the
// timeline does not belong to the plan.
std::vector<MemorySeries> memory_series(const parallel::Plan& plan, const exec::Timeline& tl);

}  // namespace trainsim::report
