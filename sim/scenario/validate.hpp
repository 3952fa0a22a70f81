#pragma once
// Checks that the parallel layout, the cluster and the model fit together, before anything is
// simulated. Each violation is a located ConfigError naming the key to change.
#include <yaml-cpp/yaml.h>

#include "sim/scenario/scenario.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// The YAML nodes errors point at (undefined ones fall back to their parents).
struct LayoutNodes {
  YAML::Node root, training, parallel, cluster;
  bool cluster_given = false;
};

// Largest number of ops one scenario may play before it is refused (limits.max_ops raises it).
// A step's plan and play hold up to about 1 KB per op (Llama 3 8B under ZeRO-3, whose per-layer
// gathers do not fold into macro ops: 3 GB at 3.3 million), so this bounds one point's memory
// to a few GB; a fit doubling the global batch once ran a machine out of memory at 50 million.
inline constexpr std::int64_t kDefaultMaxOps = 5'000'000;

void validate_layout(const YamlContext& ctx, const Scenario& s, const LayoutNodes& nodes,
                     std::int64_t max_ops);

}  // namespace trainsim::scenario
