#pragma once
// Located reads of a JSON config (parsed by yaml-cpp: JSON is YAML 1.2 flow syntax, so every
// value keeps its line and column). Each object remembers the keys read; `ignore_rest` lists
// the others in the Draft, so no option is dropped silently.
#include <cstdint>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/importers/located_map.hpp"

namespace trainsim::importers {

// The parsed JSON text of `file`: syntax errors and duplicate keys are located ConfigErrors.
YAML::Node parse_json(const std::string& text, const std::string& file);

class JsonObject : public LocatedMap {
 public:
  // `node` must be a JSON object (else a located error); `path` prefixes its keys in messages.
  JsonObject(YAML::Node node, std::string file, std::string path);

  // Where `key` itself is written (the object when absent).
  core::SourceLocation at_key(const std::string& key) const;

  // The value of `key`, marked read; undefined when absent or null.
  YAML::Node get(const std::string& key) { return lookup(key); }
  // Typed reads; absent (or null) -> nullopt. "auto" (HF's placeholder) -> nullopt when
  // `auto_ok`, else an error.
  // Integers in min..max (default 2^40: any count or size a config holds).
  std::optional<std::int64_t> integer(const std::string& key, std::int64_t min, bool auto_ok = false,
                                      std::int64_t max = std::int64_t{1} << 40);
  std::optional<bool> boolean(const std::string& key, bool auto_ok = false);
  std::optional<std::string> string(const std::string& key);
  std::optional<JsonObject> object(const std::string& key);
};

}  // namespace trainsim::importers
