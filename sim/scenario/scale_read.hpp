#pragma once
// Reading `parallel.zero3` (DeepSpeed ZeRO-3's parameter fetch) and `cluster.jitter` (per-rank
// variation of compute time); docs/scenarios.md.
#include <string>

#include "sim/scenario/scenario.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// A mapping of prefetch_bucket_size, max_live_parameters, param_persistence_threshold (element
// counts, as integers or DeepSpeed's 5e7 notation); only with zero: 3 (`zero` as read).
Zero3Spec read_zero3(const YamlContext& ctx, const YAML::Node& node, const std::string& path,
                     int zero);

// A mapping {distribution: normal | lognormal, cv: X}, cv in [0, 1].
cost::Jitter read_jitter(const YamlContext& ctx, const YAML::Node& node, const std::string& path);

}  // namespace trainsim::scenario
