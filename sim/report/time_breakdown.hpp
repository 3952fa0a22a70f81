#pragma once
// Where each nanosecond of the step goes on the device that finishes last: compute kernels by
// op kind, communication the compute stream waits for by purpose, and the rest of the time the
// compute stream is idle (pipeline bubble, waiting on other ranks). Parts sum exactly to the
// step time (docs/report.md, "time_breakdown").
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/exec/timeline.hpp"
#include "sim/parallel/program.hpp"

namespace trainsim::report {

struct TimePart {
  std::string kind;  // compute.forward ... | contention | exposed_comm.<purpose> | idle
  core::Duration time{};
};

struct TimeBreakdown {
  std::int32_t stage = 0;  // the pipeline stage of the device that finishes last
  core::Duration step{};
  std::vector<TimePart> parts;  // nonzero parts, in a fixed order; sum == step
};

TimeBreakdown time_breakdown(const parallel::Plan& plan, const exec::Timeline& tl);

}  // namespace trainsim::report
