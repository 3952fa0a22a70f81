#pragma once
// Built-in models by name. Each preset also ships as a layer-graph YAML file under
// models/presets/<name>.yaml that builds the same graph (tests hold them equal).
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "models/builders.hpp"

namespace trainsim::models {

struct Preset {
  std::string name;
  std::string description;  // one line, for `trainsim models` listings and error messages
  std::variant<TransformerConfig, ResNetConfig, MlpConfig> config;
};

// All presets, in a fixed order.
const std::vector<Preset>& presets();
// The preset called `name`, or nullptr.
const Preset* find_preset(std::string_view name);
// "gpt2, gpt2-medium, ..." for error messages.
std::string preset_names();
// Builds a preset's configuration (any of the three families).
Model build_preset(const Preset& preset, const BuildOptions& opts);
Model build_config(const std::variant<TransformerConfig, ResNetConfig, MlpConfig>& config,
                   const BuildOptions& opts);

}  // namespace trainsim::models
