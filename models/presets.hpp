#pragma once
// Built-in models by name (docs/models.md lists them with their parameter counts and sources).
// Each preset also ships as a YAML file under models/presets/<name>.yaml that builds the same
// graph (tests hold them equal): a layer graph, a preset with overrides or an hf_config import.
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "models/builders.hpp"

namespace trainsim::models {

// Any builder's configuration.
using ModelConfig = std::variant<TransformerConfig, ResNetConfig, MlpConfig, VitConfig, VggConfig>;

struct Preset {
  std::string name;
  std::string description;  // one line, for `trainsim models` listings and error messages
  ModelConfig config;
};

// All presets, in a fixed order.
const std::vector<Preset>& presets();
// The preset called `name`, or nullptr.
const Preset* find_preset(std::string_view name);
// "gpt2, gpt2-medium, ..." for error messages.
std::string preset_names();
// Builds a preset's configuration (any family).
Model build_preset(const Preset& preset, const BuildOptions& opts);
Model build_config(const ModelConfig& config, const BuildOptions& opts);

}  // namespace trainsim::models
