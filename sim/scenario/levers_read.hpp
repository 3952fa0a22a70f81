#pragma once
// Reading the fine-tuning memory levers of `training` (docs/scenarios.md, "training"):
// loss_chunks and activation_offload.
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/validate.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// Reads training.loss_chunks and training.activation_offload from the training mapping `m`.
void read_levers(MapReader& m, TrainingSpec& t);

// Refuses, located at training.activation_offload, the layouts its model does not cover:
// pipeline parallelism, ZeRO-3, FSDP and parameter offload.
void validate_levers(const YamlContext& ctx, const Scenario& s, const LayoutNodes& nodes);

}  // namespace trainsim::scenario
