#pragma once
// parallel.tp_comm_overlap: a compute op's sequence-parallel all-gather and reduce-scatter
// overlapped with the GEMMs that consume and produce them, as Transformer Engine's userbuffers
// run them (docs/devices.md, "Tensor-parallel communication overlapped with GEMMs").
#include "sim/cost/nccl.hpp"
#include "sim/parallel/program.hpp"

namespace trainsim::exec {

// A collective of the tensor group as the player prices it without overlap (op_durations.cpp).
core::Duration tp_collective_time(const parallel::Plan& plan, cost::NcclColl coll,
                                  const parallel::CommWork& w);

// The op's exposed tensor-parallel time under overlap: the chunk schedules' end
// (cost::play_overlap) less the GEMMs' own time, for the all-gather and the reduce-scatter.
// Requires op.tp_overlap != none.
core::Duration overlapped_tp_time(const parallel::Plan& plan, const parallel::Program& P,
                                  const parallel::Op& op);

}  // namespace trainsim::exec
