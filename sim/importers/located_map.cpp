#include "sim/importers/located_map.hpp"

#include <utility>

namespace trainsim::importers {

LocatedMap::LocatedMap(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}

core::SourceLocation LocatedMap::at(const YAML::Node& n) const {
  const YAML::Mark m = n.Mark();
  if (m.is_null() || m.line < 0) return {file_, 1, 1};
  return {file_, m.line + 1, m.column + 1};
}

bool LocatedMap::has(const std::string& key) const {
  const YAML::Node n = std::as_const(node_)[key];
  return n.IsDefined() && !n.IsNull();
}

YAML::Node LocatedMap::lookup(const std::string& key) {
  read_.insert(key);
  const YAML::Node n = std::as_const(node_)[key];  // a const lookup never inserts the key
  return n.IsDefined() && !n.IsNull() ? n : YAML::Node(YAML::NodeType::Undefined);
}

core::SourceLocation LocatedMap::where(const std::string& key) const {
  const YAML::Node n = std::as_const(node_)[key];
  return n.IsDefined() ? at(n) : at(node_);
}

void LocatedMap::fail(const std::string& key, const std::string& what) const {
  throw core::ConfigError(where(key), name(key), what);
}

void LocatedMap::ignore_rest(Draft& d) const {
  for (const auto& kv : node_)
    if (!read_.count(kv.first.Scalar())) d.ignore(name(kv.first.Scalar()), at(kv.first));
}

}  // namespace trainsim::importers
