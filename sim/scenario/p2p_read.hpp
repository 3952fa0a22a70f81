#pragma once
// parallel.p2p: how the megatron engine's pipeline transfers hold the stages (docs/scenarios.md,
// "parallel"; sim/parallel/pipeline_sync.hpp).
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// Reads parallel.p2p (async | sync) after the schedule and the pipeline engine: `sync` plays
// Megatron-LM's own schedules (1f1b or interleaved) on the megatron engine; DeepSpeed's engine
// has blocking transfers of its own and Megatron-LM has no GPipe schedule, so both are refused
// with a pipeline.
void read_p2p(const YamlContext& ctx, MapReader& m, ParallelSpec& p);

}  // namespace trainsim::scenario
