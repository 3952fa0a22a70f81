#include "models/yaml_fields.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace trainsim::models::yamlio {

core::SourceLocation location(const YAML::Node& node, const std::string& file) {
  const YAML::Mark m = node.Mark();
  if (m.is_null() || m.line < 0) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string index(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Undefined:
      return "nothing";
  }
  return "an unreadable value";
}

void fail(const YAML::Node& at, const std::string& file, const std::string& path,
          const std::string& detail) {
  throw core::ConfigError(location(at, file), path, detail);
}

MapReader::MapReader(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {
  if (!node_.IsMap()) fail(node_, file_, path_, "expected a map, got " + describe(node_));
}

void MapReader::only(const std::vector<std::string>& allowed) const {
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const YAML::Node key = it->first;
    const std::string k = key.IsScalar() ? key.Scalar() : std::string("<non-scalar key>");
    bool known = false;
    for (const auto& a : allowed) known = known || a == k;
    if (known) continue;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(key, file_, join(path_, k), "unknown key '" + k + "'; expected one of: " + list);
  }
}

YAML::Node MapReader::require(const std::string& key, const std::string& expected) const {
  YAML::Node n = node_[key];
  if (!n.IsDefined()) fail_here("missing required key '" + key + "' (" + expected + ")");
  return n;
}

void MapReader::fail_at(const std::string& key, const std::string& detail) const {
  const YAML::Node n = node_[key];
  fail(n.IsDefined() ? n : node_, file_, join(path_, key), detail);
}

void MapReader::fail_here(const std::string& detail) const {
  fail(node_, file_, path_, detail);
}

std::string MapReader::string(const std::string& key) const {
  const YAML::Node n = require(key, "a string");
  if (!n.IsScalar() || n.Scalar().empty())
    fail_at(key, "expected a non-empty string, got " + describe(n));
  return n.Scalar();
}

std::optional<std::string> MapReader::optional_string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return string(key);
}

std::string MapReader::choice(const std::string& key, std::initializer_list<const char*> choices,
                              const std::string& fallback) const {
  std::string list;
  for (const char* c : choices) list += std::string(list.empty() ? "" : ", ") + c;
  if (!has(key)) {
    if (!fallback.empty()) return fallback;
    fail_here("missing required key '" + key + "' (one of: " + list + ")");
  }
  const YAML::Node n = node_[key];
  if (n.IsScalar())
    for (const char* c : choices)
      if (n.Scalar() == c) return c;
  fail_at(key, "expected one of: " + list + "; got " + describe(n));
}

std::int64_t MapReader::integer(const std::string& key, std::int64_t min,
                                const char* expected) const {
  const YAML::Node n = node_[key];
  std::int64_t v = 0;
  bool ok = n.IsScalar();
  if (ok) {
    const std::string& s = n.Scalar();
    const char* first = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
    const auto [end, ec] = std::from_chars(first, s.data() + s.size(), v);
    ok = ec == std::errc() && end == s.data() + s.size() && !s.empty();
  }
  if (!ok || v < min) fail_at(key, std::string("expected ") + expected + ", got " + describe(n));
  return v;
}

std::int64_t MapReader::positive(const std::string& key) const {
  require(key, "a positive integer");
  return integer(key, 1, "a positive integer");
}

std::int64_t MapReader::positive_or(const std::string& key, std::int64_t fallback) const {
  return has(key) ? integer(key, 1, "a positive integer") : fallback;
}

std::int64_t MapReader::non_negative_or(const std::string& key, std::int64_t fallback) const {
  return has(key) ? integer(key, 0, "an integer >= 0") : fallback;
}

bool MapReader::boolean_or(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const YAML::Node n = node_[key];
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v))
    fail_at(key, "expected true or false, got " + describe(n));
  return v;
}

double MapReader::number_or(const std::string& key, double fallback) const {
  if (!has(key)) return fallback;
  const YAML::Node n = node_[key];
  double v = -1;
  bool ok = n.IsScalar();
  if (ok) {
    try {
      std::size_t used = 0;
      v = std::stod(n.Scalar(), &used);
      ok = used == n.Scalar().size();
    } catch (const std::exception&) {
      ok = false;
    }
  }
  if (!ok || !std::isfinite(v) || v < 0)
    fail_at(key, "expected a finite number >= 0, got " + describe(n));
  return v;
}

core::Bytes MapReader::bytes_or(const std::string& key, core::Bytes fallback) const {
  if (!has(key)) return fallback;
  const YAML::Node n = node_[key];
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size() && v >= 0) return core::Bytes{v};
    try {
      return core::parse_bytes(s);
    } catch (const std::exception& e) {
      fail_at(key, std::string("not a byte count (4096 or \"1.5MiB\"): ") + e.what());
    }
  }
  fail_at(key, "expected a byte count (4096 or \"1.5MiB\"), got " + describe(n));
}

}  // namespace trainsim::models::yamlio
