#pragma once
// The layouts `trainsim plan` searches (sim/sweep/plan.cpp walks them): the product of one list
// per dimension — tensor x pipeline x context x micro-batch x virtual stages x sharding — less
// the combinations that do not divide or compose. Each comes at ZeRO 0 without recomputation;
// the planner sets its rung.
#include <cstdint>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/sweep/plan.hpp"

namespace trainsim::sweep {

// Every layout of n GPUs with gpn GPUs per node, in the axes' order (tensor slowest). Throws
// core::ConfigError naming each way the search was cut when there is none (`source`: where the
// node shape came from, named in that message).
std::vector<Layout> candidate_layouts(const scenario::Scenario& s0, std::int64_t n, std::int64_t gpn,
                                      const PlanOptions& o, NodeShapeSource source);

}  // namespace trainsim::sweep
