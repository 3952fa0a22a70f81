#pragma once
// The work a step would take, estimated before any of it is built: lowering reserves its op
// vectors from the micro-batch count, so a step far over limits.max_ops must be refused before
// that (a ZeRO-3 step of 200,000 micro-batches asked for gigabytes and died of std::bad_alloc).
#include <cstdint>

#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::parallel {

// The fewest ops lower(s, options) builds: each micro-batch runs a forward and a backward unit
// of every model chunk; a unit that stays expanded (every unit of an expanded plan, and under
// ZeRO-3 or parameter offload) holds an op per layer, plus a gather (or fetch) per layer with
// parameters under ZeRO-3 / parameter offload. Saturates at INT64_MAX.
std::int64_t ops_at_least(const scenario::Scenario& s, const LowerOptions& options);

// Throws the scenario's located refusal (core::ConfigError at s.limits.ops_at) when
// ops_at_least exceeds s.limits.max_ops. The player's events and memory records grow with the
// ops (a few per op), so this one limit bounds them too.
void check_work(const scenario::Scenario& s, const LowerOptions& options);

}  // namespace trainsim::parallel
