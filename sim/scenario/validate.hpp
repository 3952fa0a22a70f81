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

// `parent[key]` when the mapping has it, else `parent` (an error then points at the section).
YAML::Node child_or(const YAML::Node& parent, const char* key);
// The same, falling back to `fallback` where `parent` itself is undefined (an absent section).
YAML::Node key_or(const YAML::Node& parent, const char* key, const YAML::Node& fallback);

// Checks the parallel layout against the model and the cluster, and refuses a step that is sure
// to hold more than s.limits.max_ops ops (parallel::lower counts the plan's real ones).
void validate_layout(const YamlContext& ctx, const Scenario& s, const LayoutNodes& nodes);

// Expert parallelism (validate_expert.cpp): parallel.expert divides every MoE layer's experts and
// parallel.data, the model has MoE layers, and no ZeRO stage or offload goes with it.
void validate_expert(const YamlContext& ctx, const Scenario& s, const LayoutNodes& nodes);

// training.expert_imbalance: a number >= 1 (1 when absent).
double read_expert_imbalance(MapReader& training);

// training.optimizer and training.optimizer_in_backward (optimizer_read.cpp).
void read_optimizer(MapReader& training, TrainingSpec& t);
// What the optimizers need of the layout: bitsandbytes' and Adafactor's per-tensor states
// without ZeRO, FSDP or offload; optimizer_in_backward without gradient accumulation, data or
// pipeline parallelism or offload.
void validate_optimizer(const YamlContext& ctx, const Scenario& s, const LayoutNodes& nodes);

}  // namespace trainsim::scenario
