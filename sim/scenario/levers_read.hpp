#pragma once
// Reading the fine-tuning memory levers of `training` (docs/scenarios.md, "training"):
// loss_chunks.
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// Reads training.loss_chunks from the training mapping `m` into `t`.
void read_levers(MapReader& m, TrainingSpec& t);

}  // namespace trainsim::scenario
