#pragma once
// Hugging Face `config.json` import: a transformer's shape from the file its model ships with.
// JSON is YAML 1.2 flow syntax, so yaml-cpp reads it and every problem keeps its line:column.
// Supported model_type values and the fields read per family are listed in docs/models.md.
#include <string>

#include <yaml-cpp/yaml.h>

#include "models/builders.hpp"

namespace trainsim::models {

// The transformer a parsed config.json (`root`, read from `file`) describes. Unknown
// model_type, missing required fields, wrong types and out-of-range values throw
// core::ConfigError located in `file` at the offending value (or at the object for a missing
// field), with key path `key_path` (the scenario's, e.g. "model.hf_config") and the field
// named in the message. The name is left empty for the caller to fill in.
TransformerConfig hf_transformer_config(const YAML::Node& root, const std::string& file,
                                        const std::string& key_path);

// "llama, mistral, ..." for error messages.
std::string hf_model_types();

}  // namespace trainsim::models
