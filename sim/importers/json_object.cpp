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
    : LocatedMap(node, std::move(file), path) {
  if (!node.IsMap()) throw core::ConfigError(at(node), path, "expected a JSON object");
}

core::SourceLocation JsonObject::at_key(const std::string& key) const {
  for (const auto& kv : node())
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return at(kv.first);
  return at(node());
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
  return JsonObject(n, file(), name(key));
}

}  // namespace trainsim::importers
