#pragma once
// Strict reading of a YAML tree into plain values. Every failure is a core::ConfigError that
// names file:line:column, the key path and what was expected. Values that came from a
// `--set key=value` override are located in that argument instead of the file.
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/scenario/ranges.hpp"

namespace trainsim::scenario {

// An error in a `--set key=value` argument names the argument as its file ("--set key=value",
// line 1); its value starts at column set_value_column (1-based).
std::string set_argument_file(const std::string& argument);
int set_value_column(const std::string& argument);
bool is_set_argument_file(const std::string& file);

// The words a boolean key reads as true (true, yes, on) or false (false, no, off); nothing for
// any other text.
std::optional<bool> boolean_word(const std::string& text);

// Where each --set override came from: key path -> the argument text and the column of its value.
struct OverrideOrigin {
  std::string argument;
  int value_column = 1;
};

class YamlContext {
 public:
  explicit YamlContext(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }
  void add_override(const std::string& path, OverrideOrigin origin) { overrides_[path] = origin; }

  core::SourceLocation locate(const YAML::Node& node, const std::string& path) const;
  // Where a value at `path` came from when a --set override supplied it (nullopt otherwise).
  // `node_column` is the node's 0-based column within the value text, -1 when unknown.
  std::optional<core::SourceLocation> override_location(const std::string& path,
                                                        int node_column) const;
  [[noreturn]] void fail(const YAML::Node& node, const std::string& path,
                         const std::string& expected) const;

 private:
  std::string file_;
  std::map<std::string, OverrideOrigin> overrides_;
};

// The bounds of a plain number a key holds (no unit); an open end excludes its bound.
struct NumberRange {
  double min = 0, max = 0;
  bool min_open = false, max_open = false;
  bool holds(double v) const {
    return (min_open ? v > min : v >= min) && (max_open ? v < max : v <= max);
  }
};

// Reads one YAML mapping key by key; `finish()` rejects keys nobody asked for.
class MapReader {
 public:
  MapReader(const YamlContext& ctx, const YAML::Node& node, std::string path);

  bool has(const std::string& key) const;
  YAML::Node node(const std::string& key);  // marks the key as read; undefined if absent
  std::string path_of(const std::string& key) const;
  const YAML::Node& self() const { return node_; }

  std::string string(const std::string& key);  // required
  std::string string_or(const std::string& key, std::string fallback);
  std::int64_t positive_int(const std::string& key);  // required, >= 1
  std::int64_t positive_int_or(const std::string& key, std::int64_t fallback);
  std::int64_t non_negative_int_or(const std::string& key, std::int64_t fallback);
  // An integer within `range` (inclusive); the error names the range.
  std::int64_t int_in(const std::string& key, ranges::IntRange range);  // required
  std::int64_t int_in_or(const std::string& key, ranges::IntRange range, std::int64_t fallback);
  double fraction_or(const std::string& key, double fallback);  // in (0, 1]
  // A plain number within `range` (read_number; `expected` opens the error's text).
  double number_or(const std::string& key, NumberRange range, const std::string& expected,
                   double fallback);
  bool bool_or(const std::string& key, bool fallback);
  core::Bytes bytes(const std::string& key);
  core::Bytes bytes_or(const std::string& key, core::Bytes fallback);
  core::Bandwidth bandwidth(const std::string& key);
  core::FlopRate flop_rate(const std::string& key);
  core::Duration duration(const std::string& key);
  // One of `choices`; the error lists them.
  std::string choice(const std::string& key, std::initializer_list<std::string_view> choices,
                     std::string fallback);

  // Throws unless `key` is present. A key of the mapping that is a near miss for it
  // ("micro_bach") is reported first, as unknown, with the suggestion.
  void require(const std::string& key) const;

  // Throws for the first key that was never read, naming the keys that are allowed (and the
  // nearest one when the key looks like a slip for it).
  void finish(std::initializer_list<std::string_view> allowed = {}) const;

 private:
  [[noreturn]] void fail_missing(const std::string& key) const;

  const YamlContext& ctx_;
  YAML::Node node_;
  std::string path_;
  std::set<std::string> read_;
  mutable std::set<std::string> known_;  // every key asked about, for the error's list
};

// Scalar conversions used by MapReader and by sweeps; `path` is for the message.
std::int64_t read_int(const YamlContext& ctx, const YAML::Node& n, const std::string& path,
                      std::int64_t min_value);
std::int64_t read_int(const YamlContext& ctx, const YAML::Node& n, const std::string& path,
                      ranges::IntRange range);
std::string read_string(const YamlContext& ctx, const YAML::Node& n, const std::string& path);

// The whole of `s` as a number within `range` (NaN never is); nullopt otherwise.
std::optional<double> parse_number(const std::string& s, NumberRange range);
// The number node `n` holds within `range`; otherwise fails at n with "<expected>, got '<s>'".
double read_number(const YamlContext& ctx, const YAML::Node& n, const std::string& path,
                   NumberRange range, const std::string& expected);

// Parses a file's text: a syntax error or a duplicate key is a ConfigError located in `path`.
YAML::Node parse_yaml_text(const std::string& text, const std::string& path);
// Reads (core::read_text_file) and parses a YAML file. A file that cannot be read is located at
// `named_at` under `key_path` (where a scenario named it); the first form names the path itself.
YAML::Node load_yaml_file(const std::string& path);
YAML::Node load_yaml_file(const std::string& path, const core::SourceLocation& named_at,
                          const std::string& key_path);

}  // namespace trainsim::scenario
