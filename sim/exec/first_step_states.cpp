#include "sim/exec/first_step_states.hpp"

#include "sim/exec/allocator_model.hpp"

namespace trainsim::exec {

FirstStepStates::FirstStepStates(const parallel::Program& P)
    : states_(P.lazy_states), op_(AllocatorModel::lazy_states_op(P)) {}

std::span<const parallel::MemEffect> FirstStepStates::take() {
  if (created_) return {};
  created_ = true;
  return states_;
}

std::span<const parallel::MemEffect> FirstStepStates::before(std::int32_t op) {
  return op == op_ ? take() : std::span<const parallel::MemEffect>{};
}

std::span<const parallel::MemEffect> FirstStepStates::at_end() { return take(); }

}  // namespace trainsim::exec
