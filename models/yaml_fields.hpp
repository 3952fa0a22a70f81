#pragma once
// Typed, located reads of one YAML map for the model loader: every failure is a
// core::ConfigError at the offending node (1-based line:column), with the key path and what
// was expected. Internal to models/ (sim/scenario has its own reader for scenario files).
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace trainsim::models::yamlio {

// yaml-cpp marks are 0-based; ours are 1-based (0 = unknown).
core::SourceLocation location(const YAML::Node& node, const std::string& file);
// "a.b" / "a[3]", tolerating an empty root.
std::string join(const std::string& path, const std::string& key);
std::string index(const std::string& path, std::size_t i);
// A short rendering of a node for "got ..." parts of messages.
std::string describe(const YAML::Node& node);

[[noreturn]] void fail(const YAML::Node& at, const std::string& file, const std::string& path,
                       const std::string& detail);

class MapReader {
 public:
  // Throws unless `node` is a map.
  MapReader(YAML::Node node, std::string file, std::string path);

  const YAML::Node& node() const { return node_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  std::string path_of(const std::string& key) const { return join(path_, key); }

  // Rejects any key not in `allowed`, at the key, listing the allowed ones.
  void only(const std::vector<std::string>& allowed) const;
  bool has(const std::string& key) const { return node_[key].IsDefined(); }
  YAML::Node get(const std::string& key) const { return node_[key]; }
  // The node for a required key; a missing key fails at the map.
  YAML::Node require(const std::string& key, const std::string& expected) const;

  std::string string(const std::string& key) const;
  std::optional<std::string> optional_string(const std::string& key) const;
  // One of `choices`; `fallback` when absent (required when fallback is empty).
  std::string choice(const std::string& key, std::initializer_list<const char*> choices,
                     const std::string& fallback = "") const;
  std::int64_t positive(const std::string& key) const;
  std::int64_t positive_or(const std::string& key, std::int64_t fallback) const;
  std::int64_t non_negative_or(const std::string& key, std::int64_t fallback) const;
  bool boolean_or(const std::string& key, bool fallback) const;
  double number_or(const std::string& key, double fallback) const;  // finite, >= 0
  // An integer byte count or a quantity with a unit ("1.5MiB"); >= 0.
  core::Bytes bytes_or(const std::string& key, core::Bytes fallback) const;

  [[noreturn]] void fail_at(const std::string& key, const std::string& detail) const;
  [[noreturn]] void fail_here(const std::string& detail) const;

 private:
  std::int64_t integer(const std::string& key, std::int64_t min, const char* expected) const;

  YAML::Node node_;
  std::string file_;
  std::string path_;
};

}  // namespace trainsim::models::yamlio
