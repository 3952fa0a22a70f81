#pragma once
// Context parallelism's keys (parallel.context, parallel.context_attention) and their checks
// against the training setup and the model (docs/scenarios.md, "Context parallelism").
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/validate.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// Reads parallel.context and parallel.context_attention from the parallel section.
void read_context(MapReader& m, ParallelSpec& p);

// A context degree above 1 needs a model with attention, flash attention (no s x s scores: the
// ring computes one chunk pair at a time) and a sequence of 2 x context equal halves (the
// load-balanced causal split). Located errors at the key to change.
void validate_context(const YamlContext& ctx, const Scenario& s, const LayoutNodes& nodes);

}  // namespace trainsim::scenario
