#pragma once
// Models from YAML: the layer-graph file format (docs/models.md) and the forms a scenario's
// `model:` value may take. Every problem is a core::ConfigError with file:line:column (1-based),
// a key path such as `model.layers[3].layers[1].heads` and what was expected.
#include <string>

#include <yaml-cpp/yaml.h>

#include "models/model.hpp"

namespace trainsim::models {

// Reads a model file: a layer graph ({name, layers: [...]}) or any form build_model accepts.
// A missing or unreadable file is a ConfigError naming the path.
Model load_model_file(const std::string& path, const BuildOptions& opts);

// Builds the model a scenario's `model:` value describes:
//   gpt2                                  a preset name (see presets.hpp)
//   {preset: gpt2, layers: 36, ...}       a transformer preset with overrides of
//                                         name, layers, hidden, heads, kv_heads, ffn, vocab,
//                                         max_positions (other presets take only name)
//                                         (and experts, top_k)
//   {file: my_model.yaml}                 a model file, relative to base_dir
//   {hf_config: config.json, name?}       a Hugging Face config.json, relative to base_dir
//                                         (hf_config.hpp; errors located in the JSON file)
//   {name: ..., layers: [...]}            an inline layer graph
// `file` and `key_path` locate errors (key_path is the path of model_node, e.g. "model").
Model build_model(const YAML::Node& model_node, const std::string& file,
                  const std::string& key_path, const BuildOptions& opts,
                  const std::string& base_dir);

// Builds a layer graph from its map ({name, sequence_model?, layers}).
Model build_layer_graph(const YAML::Node& model_map, const std::string& file,
                        const std::string& key_path, const BuildOptions& opts);

}  // namespace trainsim::models
