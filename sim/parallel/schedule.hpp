#pragma once
// Pipeline schedules as pure functions: the order in which one pipeline stage runs the forward
// and backward passes of its micro-batches. Data, so it can be printed and tested without time.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace trainsim::parallel {

struct WorkUnit {
  bool forward = true;
  std::int32_t chunk = 0;       // virtual stage index on this device (0 unless interleaved)
  std::int32_t microbatch = 0;
  bool operator==(const WorkUnit&) const = default;
};

// The units of `stage` (0-based) of `stages`, for `microbatches` micro-batches and, for the
// interleaved schedule, `virtual_stages` chunks per device run `group` micro-batches at a time
// (0: `stages`; stages <= group <= microbatches, the last group empty or at least `stages`),
// as `engine`'s runtime orders them (megatron and deepspeed alike):
//   gpipe:       all forwards, then all backwards (newest first; pytorch: oldest first)
//   1f1b:        min(stages - stage - 1, m) warm-up forwards, then one forward / one backward,
//                then the remaining backwards (PipeDream-Flush; PyTorch's Schedule1F1B is the
//                same order)
//   interleaved: Megatron's schedule with (stages - stage - 1) * 2 + (v - 1) * group
//                warm-up forwards over v chunks, all of them when m = group = stages;
//                pytorch: ScheduleInterleaved1F1B, the same table and count without that
//                exception, groups (rounds) of any size dividing m, fewer than stages included
std::vector<WorkUnit> schedule_stage(scenario::Schedule s, int stage, int stages,
                                     int microbatches, int virtual_stages, int group = 0,
                                     scenario::PipelineEngine engine = scenario::PipelineEngine::megatron);

// A step of `microbatches` played as schedules of `per_schedule` micro-batches each (a divisor;
// PyTorch pipelining with accumulation: one schedule per local batch), one after the other, the
// a-th's micro-batches numbered from a x per_schedule. One schedule when they are equal.
std::vector<WorkUnit> schedule_step(scenario::Schedule s, int stage, int stages, int microbatches,
                                    int per_schedule, int virtual_stages, int group,
                                    scenario::PipelineEngine engine);

// "F0 F1 B0 ..." with chunk suffixes ("F0.1") when interleaved — for docs, tests and `--explain`.
std::string describe(const std::vector<WorkUnit>& units);

}  // namespace trainsim::parallel
