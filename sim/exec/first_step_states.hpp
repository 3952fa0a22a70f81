#pragma once
// training.optimizer_states: lazy (docs/finetuning.md, "Optimizer states created in the first
// step"): when the first step, played once before the step reported, creates the optimizer
// states (Program::lazy_states). The one rule the allocator replay (allocator_replay.cpp) and the
// memory series (report/memory_series.cpp) both follow, so that they cannot drift.
#include <cstdint>
#include <span>

#include "sim/parallel/program.hpp"

namespace trainsim::exec {

class FirstStepStates {
 public:
  explicit FirstStepStates(const parallel::Program& P);

  // Whether P creates states in its first step (and plays one).
  bool any() const { return !states_.empty(); }
  // Asked before each memory record of the first step, in the player's order: op `op`'s
  // allocations as it starts, or its frees as it ends (the player records an op's effects only
  // when it has some). The states to create now: all of them before the first record of the
  // optimizer step (AllocatorModel::lazy_states_op; torch.optim's `_init_group` makes them as
  // step() begins, before the update's temporaries), else none.
  std::span<const parallel::MemEffect> before(std::int32_t op);
  // At the first step's end: the states not created yet (all of them when the optimizer step
  // allocates and frees nothing, or P has none).
  std::span<const parallel::MemEffect> at_end();

 private:
  std::span<const parallel::MemEffect> take();

  std::span<const parallel::MemEffect> states_;
  std::int32_t op_ = -1;
  bool created_ = false;
};

}  // namespace trainsim::exec
