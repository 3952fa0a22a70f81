#pragma once
// Reading `parallel.zero3` (DeepSpeed ZeRO-3's parameter fetch), `cluster.jitter` (per-rank
// variation of compute time) and the pods above the nodes (`cluster.pod_nodes`,
// `cluster.oversubscription`); docs/scenarios.md.
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

// `pod_nodes` (an integer from 1) and `oversubscription` (a ratio from 1 to 1024, as 7 or 7.0,
// or "1:7" as papers write it) of the cluster mapping `m` into c; an oversubscription above 1
// needs pod_nodes (without pods no uplink is shared).
void read_pods(const YamlContext& ctx, MapReader& m, ClusterSpec& c);

}  // namespace trainsim::scenario
