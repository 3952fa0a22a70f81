#pragma once
// The lowered plans a sweep thread keeps for its next points (sim/sweep/runner.cpp). Private to
// sim/sweep, except `plans_lowered`, which tests read.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/exec/player.hpp"
#include "sim/parallel/program.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/sweep/spec.hpp"

namespace trainsim::sweep {

// What a plan was lowered from, apart from the settings patched on it for each point
// (parallel::is_plan_setting): the base, the other overrides in order, the cluster's sizes and
// placement.
struct PlanKey {
  std::string path, text, subkey;
  std::vector<std::string> rest;  // the overrides that are not patched, in order
  std::int64_t nodes = 0, gpus_per_node = 0;
  std::array<scenario::ParallelDim, 3> placement{};

  bool operator==(const PlanKey&) const = default;
};

struct KeptPlan {
  PlanKey key;
  parallel::Plan plan;
  exec::PlanDigest digest;  // filled by the plan's first play, kept for the next ones
};

// The plan for a point with overrides `sets` whose scenario `s` was loaded from `base`: a kept
// one that serves it (its patched settings set again for this point), or a new one lowered and
// kept. The reference holds until the thread's next call.
KeptPlan& plan_for(const BaseScenario& base, const std::vector<std::string>& sets,
                   const scenario::Scenario& s);

// Plans this thread has lowered through plan_for (tests count them).
std::int64_t plans_lowered();

}  // namespace trainsim::sweep
