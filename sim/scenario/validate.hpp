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
inline constexpr std::int64_t kDefaultMaxOps = 50'000'000;

void validate_layout(const YamlContext& ctx, const Scenario& s, const LayoutNodes& nodes,
                     std::int64_t max_ops);

}  // namespace trainsim::scenario
