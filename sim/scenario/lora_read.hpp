#pragma once
// Reading `training.lora` (docs/scenarios.md, "Fine-tuning").
#include <string>

#include "sim/scenario/finetune.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// {rank, alpha, dropout, targets: [q, k, v, o, gate, up, down] | all-linear, base}; `path` is
// "training.lora".
LoraSpec read_lora(const YamlContext& ctx, const YAML::Node& node, const std::string& path);

}  // namespace trainsim::scenario
