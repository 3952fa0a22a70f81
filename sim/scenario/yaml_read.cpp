#include "sim/scenario/yaml_read.hpp"

#include <cmath>

#include "models/unique_keys.hpp"
#include "sim/core/text_file.hpp"

#include "models/yaml_syntax.hpp"
#include "sim/core/spelling.hpp"

namespace trainsim::scenario {

std::string set_argument_file(const std::string& argument) { return "--set " + argument; }
int set_value_column(const std::string& argument) { return static_cast<int>(argument.find('=')) + 2; }
bool is_set_argument_file(const std::string& file) { return file.starts_with("--set "); }

std::optional<core::SourceLocation> YamlContext::override_location(const std::string& path,
                                                                   int node_column) const {
  // The longest override that is a prefix of `path` owns the value.
  for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it) {
    const std::string& p = it->first;
    if (path == p || (path.size() > p.size() && path.compare(0, p.size(), p) == 0 &&
                      (path[p.size()] == '.' || path[p.size()] == '['))) {
      // A node without a place was made by set_at (a key, or a map on the way): the key path,
      // which starts the argument.
      const int col = node_column >= 0 ? it->second.value_column + node_column : 1;
      return core::SourceLocation{set_argument_file(it->second.argument), 1, col};
    }
  }
  return std::nullopt;
}

core::SourceLocation YamlContext::locate(const YAML::Node& node, const std::string& path) const {
  const bool placed = node.IsDefined() && node.Mark().line >= 0;
  if (auto at = override_location(path, placed ? node.Mark().column : -1)) return *at;
  if (placed)
    return {file_, node.Mark().line + 1, node.Mark().column + 1};
  // A mapping with no place was made by a --set below it (cluster.nodes=3 makes `cluster`).
  for (const auto& [p, origin] : overrides_)
    if (p.size() > path.size() && p.compare(0, path.size(), path) == 0 && p[path.size()] == '.')
      return {set_argument_file(origin.argument), 1, 1};
  return {file_, 0, 0};
}

void YamlContext::fail(const YAML::Node& node, const std::string& path,
                       const std::string& expected) const {
  throw core::ConfigError(locate(node, path), path, expected);
}

namespace {
std::string describe(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  return "a mapping";
}
}  // namespace

std::string read_string(const YamlContext& ctx, const YAML::Node& n, const std::string& path) {
  if (!n.IsScalar()) ctx.fail(n, path, "expected a string, got " + describe(n));
  return n.Scalar();
}

namespace {
// The integer `n` holds (an integral float such as 1e3 counts when exact); anything else fails
// with "expected <what>, got ...".
std::int64_t parse_int(const YamlContext& ctx, const YAML::Node& n, const std::string& path,
                       const std::string& what) {
  if (!n.IsScalar()) ctx.fail(n, path, "expected " + what + ", got " + describe(n));
  const std::string& s = n.Scalar();
  std::size_t used = 0;
  long long v = 0;
  bool ok = !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+');
  if (ok) {
    try {
      v = std::stoll(s, &used);
    } catch (const std::out_of_range&) {
      ctx.fail(n, path, "expected " + what + " that fits in 64 bits, got '" + s + "'");
    } catch (...) {
      ok = false;
    }
  }
  if (!ok || used != s.size()) {
    // Allow integral floats written as 1e3 only when exact.
    try {
      std::size_t u2 = 0;
      double d = std::stod(s, &u2);
      if (u2 == s.size() && std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e18) {
        v = static_cast<long long>(d);
        ok = true;
        used = s.size();
      } else {
        ok = false;
      }
    } catch (...) {
      ok = false;
    }
  }
  if (!ok) ctx.fail(n, path, "expected " + what + ", got '" + s + "'");
  return v;
}
}  // namespace

std::int64_t read_int(const YamlContext& ctx, const YAML::Node& n, const std::string& path,
                      std::int64_t min_value) {
  const std::string what = min_value >= 1
                               ? "a positive integer"
                               : (min_value == 0 ? "a non-negative integer" : "an integer");
  const std::int64_t v = parse_int(ctx, n, path, what);
  if (v < min_value) ctx.fail(n, path, "expected " + what + ", got " + n.Scalar());
  return v;
}

std::int64_t read_int(const YamlContext& ctx, const YAML::Node& n, const std::string& path,
                      ranges::IntRange range) {
  const std::string what =
      "an integer in " + std::to_string(range.min) + ".." + std::to_string(range.max);
  const std::int64_t v = parse_int(ctx, n, path, what);
  if (v < range.min || v > range.max) ctx.fail(n, path, "expected " + what + ", got " + n.Scalar());
  return v;
}

MapReader::MapReader(const YamlContext& ctx, const YAML::Node& node, std::string path)
    : ctx_(ctx), node_(node), path_(std::move(path)) {
  if (!node_.IsMap())
    ctx_.fail(node_, path_, "expected a mapping (key: value lines), got " + describe(node_));
}

std::string MapReader::path_of(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

bool MapReader::has(const std::string& key) const {
  known_.insert(key);
  const YAML::Node& cn = node_;
  return cn[key].IsDefined();
}

YAML::Node MapReader::node(const std::string& key) {
  read_.insert(key);
  known_.insert(key);
  const YAML::Node& cn = node_;
  return cn[key];
}

void MapReader::require(const std::string& key) const {
  if (!has(key)) fail_missing(key);
}

void MapReader::fail_missing(const std::string& key) const {
  // A slip of the required key is the likelier cause; it is reported where it was written.
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar()) continue;
    const std::string typed = it->first.Scalar();
    if (read_.count(typed) || known_.count(typed) || !core::near_miss(typed, key)) continue;
    ctx_.fail(it->first, path_of(typed),
              "unknown key '" + typed + "' \u2014 did you mean '" + key + "'?");
  }
  ctx_.fail(node_, path_of(key), "missing required key '" + key + "'");
}

std::string MapReader::string(const std::string& key) {
  require(key);
  return read_string(ctx_, node(key), path_of(key));
}

std::string MapReader::string_or(const std::string& key, std::string fallback) {
  return has(key) ? string(key) : fallback;
}

std::int64_t MapReader::positive_int(const std::string& key) {
  require(key);
  return read_int(ctx_, node(key), path_of(key), 1);
}

std::int64_t MapReader::positive_int_or(const std::string& key, std::int64_t fallback) {
  return has(key) ? positive_int(key) : fallback;
}

std::int64_t MapReader::non_negative_int_or(const std::string& key, std::int64_t fallback) {
  return has(key) ? read_int(ctx_, node(key), path_of(key), 0) : fallback;
}

std::int64_t MapReader::int_in(const std::string& key, ranges::IntRange range) {
  require(key);
  return read_int(ctx_, node(key), path_of(key), range);
}

std::int64_t MapReader::int_in_or(const std::string& key, ranges::IntRange range,
                                  std::int64_t fallback) {
  return has(key) ? int_in(key, range) : fallback;
}

std::optional<double> parse_number(const std::string& s, NumberRange range) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size() && range.holds(v)) return v;
  } catch (...) {  // not a number, or out of double's range
  }
  return std::nullopt;
}

double read_number(const YamlContext& ctx, const YAML::Node& n, const std::string& path,
                   NumberRange range, const std::string& expected) {
  const std::string s = read_string(ctx, n, path);
  if (const auto v = parse_number(s, range)) return *v;
  ctx.fail(n, path, expected + ", got '" + s + "'");
}

double MapReader::number_or(const std::string& key, NumberRange range,
                            const std::string& expected, double fallback) {
  return has(key) ? read_number(ctx_, node(key), path_of(key), range, expected) : fallback;
}

double MapReader::fraction_or(const std::string& key, double fallback) {
  return number_or(key, {.min = 0, .max = 1, .min_open = true}, "expected a fraction in (0, 1]",
                   fallback);
}

std::optional<bool> boolean_word(const std::string& text) {
  if (text == "true" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "no" || text == "off") return false;
  return std::nullopt;
}

bool MapReader::bool_or(const std::string& key, bool fallback) {
  if (!has(key)) return fallback;
  YAML::Node n = node(key);
  const std::string s = read_string(ctx_, n, path_of(key));
  if (const auto b = boolean_word(s)) return *b;
  ctx_.fail(n, path_of(key), "expected true or false, got '" + s + "'");
}

template <class T, class F>
static T parse_quantity(const YamlContext& ctx, const YAML::Node& n, const std::string& path,
                        F parse) {
  const std::string s = read_string(ctx, n, path);
  try {
    return parse(s);
  } catch (const std::exception& e) {
    ctx.fail(n, path, e.what());
  }
}

core::Bytes MapReader::bytes(const std::string& key) {
  require(key);
  return parse_quantity<core::Bytes>(ctx_, node(key), path_of(key), core::parse_bytes);
}
core::Bytes MapReader::bytes_or(const std::string& key, core::Bytes fallback) {
  return has(key) ? bytes(key) : fallback;
}
core::Bandwidth MapReader::bandwidth(const std::string& key) {
  require(key);
  return parse_quantity<core::Bandwidth>(ctx_, node(key), path_of(key), core::parse_bandwidth);
}
core::FlopRate MapReader::flop_rate(const std::string& key) {
  require(key);
  return parse_quantity<core::FlopRate>(ctx_, node(key), path_of(key), core::parse_flop_rate);
}
core::Duration MapReader::duration(const std::string& key) {
  require(key);
  return parse_quantity<core::Duration>(ctx_, node(key), path_of(key), core::parse_duration);
}

std::string MapReader::choice(const std::string& key,
                              std::initializer_list<std::string_view> choices,
                              std::string fallback) {
  if (!has(key)) return fallback;
  YAML::Node n = node(key);
  const std::string s = read_string(ctx_, n, path_of(key));
  std::string list;
  for (auto c : choices) {
    if (s == c) return s;
    if (!list.empty()) list += " | ";
    list += c;
  }
  ctx_.fail(n, path_of(key), "expected one of " + list + ", got '" + s + "'");
}

void MapReader::finish(std::initializer_list<std::string_view> allowed) const {
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string("?");
    if (read_.count(key)) continue;
    std::set<std::string> names(known_);
    for (auto a : allowed) names.insert(std::string(a));
    std::string list;
    for (const auto& a : names) list += (list.empty() ? "" : ", ") + a;
    const std::string guess = core::closest_spelling(key, {names.begin(), names.end()});
    const std::string hint = guess.empty() ? "" : " \u2014 did you mean '" + guess + "'?";
    ctx_.fail(
        it->first, path_of(key),
        "unknown key '" + key + "'" + hint + (list.empty() ? "" : "; expected one of: " + list));
  }
}

YAML::Node parse_yaml_text(const std::string& text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw models::yaml_syntax_error(e, path, text, "", "malformed YAML: ");
  }
  models::check_unique_keys(root, path);
  return root;
}

YAML::Node load_yaml_file(const std::string& path, const core::SourceLocation& named_at,
                          const std::string& key_path) {
  return parse_yaml_text(core::read_text_file(path, named_at, key_path), path);
}

YAML::Node load_yaml_file(const std::string& path) {
  return load_yaml_file(path, {path, 0, 0}, "");
}

}  // namespace trainsim::scenario
