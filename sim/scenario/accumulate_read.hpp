#pragma once
// Reading and checking training.accumulate_grads (docs/scenarios.md, "training"): how each
// micro-batch's weight gradients join the step's gradients, as the framework runs it.
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/validate.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// Reads training.accumulate_grads from the training mapping `m`.
void read_accumulate(MapReader& m, TrainingSpec& t);

// Refuses, located at training.accumulate_grads, the layouts whose gradients accumulate
// elsewhere: autograd and fp32 describe data-parallel ranks reducing once per step (ZeRO 0/1,
// no FSDP, no optimizer offload), and fp32 adds 16-bit gradients (precision fp16 or bf16) and
// all-reduces them over every data rank (no expert parallelism).
void validate_accumulate(const YamlContext& ctx, const Scenario& s, const LayoutNodes& nodes);

}  // namespace trainsim::scenario
