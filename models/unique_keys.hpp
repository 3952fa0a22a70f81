#pragma once
// Duplicate keys in YAML mappings and JSON objects. yaml-cpp 0.7 keeps every pair of a mapping
// but lookups find the first, so `model:` written twice silently drops the second. Every loader
// of a user's file (scenarios, sweep specs, model YAML, Hugging Face config.json) calls this once
// right after parsing the file's text, before any lookup.
#include <string>

#include <yaml-cpp/yaml.h>

namespace trainsim::models {

// Throws core::ConfigError at the second occurrence of the first repeated key of any mapping in
// `root` (block or flow, at any depth): "file:L:C: PARENT: duplicate key 'k' (first at line L1,
// column C1)", where PARENT is the mapping's key path below `root_path` ("" at the top). Keys
// compare by their text; non-scalar keys are not compared. Each node is visited once, so a
// document of aliases costs its size, not its expansion.
void check_unique_keys(const YAML::Node& root, const std::string& file,
                       const std::string& root_path = "");

}  // namespace trainsim::models
