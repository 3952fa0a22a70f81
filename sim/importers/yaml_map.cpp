#include "sim/importers/yaml_map.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "models/unique_keys.hpp"
#include "models/yaml_syntax.hpp"

namespace trainsim::importers {

Map::Map(YAML::Node node, std::string file, std::string path, YAML::Node root)
    : LocatedMap(node, std::move(file), std::move(path)) {
  root_.reset(root.IsDefined() && !root.IsNull() ? root : node);
}

Map Map::parse(const std::string& text, const std::string& file, const std::string& what) {
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw models::yaml_syntax_error(e, file, text, "", "malformed YAML: ");
  }
  if (!node.IsMap()) throw core::ConfigError({file, 1, 1}, "", "expected " + what + " (a mapping)");
  models::check_unique_keys(node, file);
  return Map(node, file, "");
}

YAML::Node Map::get(const std::string& key) {
  const YAML::Node n = lookup(key);
  return n.IsDefined() ? resolve(n, key) : n;
}

// A scalar that is exactly `${a.b}`: the value at a.b from the document's root (OmegaConf's
// absolute interpolation), followed through at most 8 such references.
YAML::Node Map::resolve(YAML::Node n, const std::string& key) const {
  // yaml-cpp's Node::operator= writes through to the node it refers to; reset() rebinds.
  for (int depth = 0; n.IsScalar(); ++depth) {
    const std::string s = n.Scalar();
    if (s.size() < 4 || s.compare(0, 2, "${") != 0 || s.back() != '}' || s.find('}') != s.size() - 1) return n;
    if (depth == 8) fail(key, "interpolation '" + s + "' nests deeper than 8 references");
    YAML::Node at;
    at.reset(root_);
    const std::string path = s.substr(2, s.size() - 3);
    for (std::size_t start = 0; start <= path.size();) {
      const std::size_t dot = std::min(path.find('.', start), path.size());
      const std::string part = path.substr(start, dot - start);
      if (part.empty() || !at.IsMap() || !std::as_const(at)[part].IsDefined())
        fail(key, "interpolation '" + s + "' names no value of the file");
      at.reset(std::as_const(at)[part]);
      start = dot + 1;
    }
    if (at.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
    n.reset(at);
  }
  return n;
}

std::optional<std::string> Map::string(const std::string& key) {
  const YAML::Node n = get(key);
  if (!n.IsDefined()) return std::nullopt;
  if (!n.IsScalar()) fail(key, "expected a string");
  return n.Scalar();
}

std::optional<bool> Map::boolean(const std::string& key) {
  const auto s = string(key);
  if (!s) return std::nullopt;
  if (*s == "true" || *s == "True" || *s == "TRUE") return true;
  if (*s == "false" || *s == "False" || *s == "FALSE") return false;
  fail(key, "expected true or false, got '" + *s + "'");
}

std::optional<std::int64_t> Map::integer(const std::string& key, std::int64_t min) {
  constexpr std::int64_t max = std::int64_t{1} << 30;
  const auto s = string(key);
  if (!s) return std::nullopt;
  std::size_t used = 0;
  std::int64_t v = 0;
  try {
    v = std::stoll(*s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s->size() || v < min || v > max)
    fail(key, "expected an integer in " + std::to_string(min) + ".." + std::to_string(max) + ", got '" + *s + "'");
  return v;
}

std::optional<double> Map::number(const std::string& key) {
  const auto s = string(key);
  if (!s) return std::nullopt;
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(*s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s->size() || !std::isfinite(v) || v < 0)
    fail(key, "expected a non-negative number, got '" + *s + "'");
  return v;
}

std::vector<std::string> Map::strings(const std::string& key) {
  const YAML::Node n = get(key);
  std::vector<std::string> out;
  if (!n.IsDefined()) return out;
  if (!n.IsSequence()) fail(key, "expected a list of strings");
  for (const auto& e : n) {
    if (!e.IsScalar()) fail(key, "expected a list of strings");
    out.push_back(e.Scalar());
  }
  return out;
}

std::optional<Map> Map::object(const std::string& key) {
  const YAML::Node n = get(key);
  if (!n.IsDefined()) return std::nullopt;
  if (!n.IsMap()) fail(key, "expected a mapping");
  return Map(n, file(), name(key), root_);
}

}  // namespace trainsim::importers
