#pragma once
// Lowering: (model, training, parallel config) -> one Program per pipeline stage. Chooses the
// stage partition, shards layers over tensor ranks and model states over ZeRO ranks, orders the
// work with the pipeline schedule and attaches every memory effect and cost input.
#include "sim/parallel/program.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::parallel {

Plan lower(const scenario::Scenario& s);

}  // namespace trainsim::parallel
