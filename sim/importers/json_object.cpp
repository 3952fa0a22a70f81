#include "sim/importers/json_object.hpp"

#include <charconv>
#include <utility>

#include "models/unique_keys.hpp"
#include "models/yaml_syntax.hpp"

namespace trainsim::importers {

YAML::Node parse_json(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw models::yaml_syntax_error(e, file, text, "", "not valid JSON: ");
  }
  models::check_unique_keys(root, file);
  return root;
}

JsonObject::JsonObject(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {
  if (!node_.IsMap())
    throw core::ConfigError(at(node_), path_, "expected a JSON object");
}

core::SourceLocation JsonObject::at(const YAML::Node& n) const {
  const YAML::Mark m = n.Mark();
  if (m.is_null() || m.line < 0) return {file_, 1, 1};
  return {file_, m.line + 1, m.column + 1};
}

core::SourceLocation JsonObject::at_key(const std::string& key) const {
  for (const auto& kv : node_)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return at(kv.first);
  return at(node_);
}

YAML::Node JsonObject::get(const std::string& key) {
  read_.insert(key);
  const YAML::Node n = std::as_const(node_)[key];  // a const lookup never inserts the key
  return n.IsDefined() && !n.IsNull() ? n : YAML::Node(YAML::NodeType::Undefined);
}

bool JsonObject::has(const std::string& key) const {
  const YAML::Node n = std::as_const(node_)[key];
  return n.IsDefined() && !n.IsNull();
}

void JsonObject::fail(const std::string& key, const std::string& what) const {
  const YAML::Node n = std::as_const(node_)[key];
  throw core::ConfigError(n.IsDefined() ? at(n) : at(node_), name(key), what);
}

namespace {
bool is_string(const YAML::Node& n) { return n.IsScalar() && n.Tag() == "!"; }
std::string shown(const YAML::Node& n) {
  if (!n.IsScalar()) return n.IsMap() ? "an object" : "a list";
  return is_string(n) ? "\"" + n.Scalar() + "\"" : n.Scalar();
}
}  // namespace

std::optional<std::int64_t> JsonObject::integer(const std::string& key, std::int64_t min, bool auto_ok,
                                                std::int64_t max) {
  const YAML::Node n = get(key);
  if (!n.IsDefined()) return std::nullopt;
  if (auto_ok && is_string(n) && n.Scalar() == "auto") return std::nullopt;
  std::int64_t v = 0;
  const std::string s = n.IsScalar() ? n.Scalar() : "";
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (!n.IsScalar() || is_string(n) || ec != std::errc{} || end != s.data() + s.size() || v < min || v > max) {
    // DeepSpeed writes bucket sizes as 5e8: a float that is a whole number is accepted.
    double x = 0;
    const auto [fend, fec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (n.IsScalar() && !is_string(n) && fec == std::errc{} && fend == s.data() + s.size() &&
        x >= static_cast<double>(min) && x <= static_cast<double>(max) && x == static_cast<double>(static_cast<std::int64_t>(x)))
      return static_cast<std::int64_t>(x);
    fail(key, "expected an integer in " + std::to_string(min) + ".." + std::to_string(max) + (auto_ok ? " or \"auto\"" : "") +
                  ", got " + shown(n));
  }
  return v;
}

std::optional<bool> JsonObject::boolean(const std::string& key, bool auto_ok) {
  const YAML::Node n = get(key);
  if (!n.IsDefined()) return std::nullopt;
  if (auto_ok && is_string(n) && n.Scalar() == "auto") return std::nullopt;
  if (n.IsScalar() && !is_string(n) && (n.Scalar() == "true" || n.Scalar() == "false"))
    return n.Scalar() == "true";
  fail(key, std::string("expected true or false") + (auto_ok ? " or \"auto\"" : "") + ", got " + shown(n));
}

std::optional<std::string> JsonObject::string(const std::string& key) {
  const YAML::Node n = get(key);
  if (!n.IsDefined()) return std::nullopt;
  if (!is_string(n)) fail(key, "expected a string, got " + shown(n));
  return n.Scalar();
}

std::optional<JsonObject> JsonObject::object(const std::string& key) {
  const YAML::Node n = get(key);
  if (!n.IsDefined()) return std::nullopt;
  if (!n.IsMap()) fail(key, "expected a JSON object, got " + shown(n));
  return JsonObject(n, file_, name(key));
}

void JsonObject::ignore_rest(Draft& d) const {
  for (const auto& kv : node_) {
    const std::string key = kv.first.Scalar();
    if (!read_.count(key)) d.ignore(name(key), at(kv.first));
  }
}

}  // namespace trainsim::importers
