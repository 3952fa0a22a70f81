#pragma once
// Located reads of a JSON config (parsed by yaml-cpp: JSON is YAML 1.2 flow syntax, so every
// value keeps its line and column). Each object remembers the keys read; `ignore_rest` lists
// the others in the Draft, so no option is dropped silently.
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/importers/draft.hpp"

namespace trainsim::importers {

// The parsed JSON text of `file`: syntax errors and duplicate keys are located ConfigErrors.
YAML::Node parse_json(const std::string& text, const std::string& file);

class JsonObject {
 public:
  // `node` must be a JSON object (else a located error); `path` prefixes its keys in messages.
  JsonObject(YAML::Node node, std::string file, std::string path);

  core::SourceLocation at(const YAML::Node& n) const;
  core::SourceLocation at_key(const std::string& key) const;
  std::string name(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  // The value of `key`, marked read; undefined when absent or null.
  YAML::Node get(const std::string& key);
  bool has(const std::string& key) const;
  // Typed reads; absent (or null) -> nullopt. "auto" (HF's placeholder) -> nullopt when
  // `auto_ok`, else an error.
  // Integers in min..max (default 2^40: any count or size a config holds).
  std::optional<std::int64_t> integer(const std::string& key, std::int64_t min, bool auto_ok = false,
                                      std::int64_t max = std::int64_t{1} << 40);
  std::optional<bool> boolean(const std::string& key, bool auto_ok = false);
  std::optional<std::string> string(const std::string& key);
  std::optional<JsonObject> object(const std::string& key);
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;

  // Lists every key not read (and, inside the objects read, theirs) as ignored.
  void ignore_rest(Draft& d) const;

 private:
  YAML::Node node_;
  std::string file_, path_;
  std::set<std::string> read_;
};

}  // namespace trainsim::importers
