#include "sim/scenario/overrides.hpp"

#include <unordered_map>

#include "models/yaml_syntax.hpp"

namespace trainsim::scenario {

namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : path) {
    if (c == '.') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

// Walks/creates maps along `keys` and stores `value` at the end. Copy-constructed YAML::Node
// handles alias the tree; node assignment (`a = b`) would overwrite, so it is used only to
// store values.
void set_at(YAML::Node node, const std::vector<std::string>& keys, std::size_t i,
            const YAML::Node& value) {
  if (i + 1 == keys.size()) {
    node[keys[i]] = value;
    return;
  }
  YAML::Node child = node[keys[i]];
  if (!child.IsDefined() || child.IsNull()) {
    YAML::Node fresh(YAML::NodeType::Map);
    node[keys[i]] = fresh;
  } else if (const auto on = child.IsScalar() ? boolean_word(child.Scalar()) : std::nullopt) {
    // `parallel.fsdp: true` takes every default, as `{}` does: a key set inside it adds to
    // that empty mapping. A `false` has nothing to add to.
    if (!*on)
      throw std::invalid_argument("'" + keys[i] + "' is false, not a mapping; set '" + keys[i] +
                                  "' itself");
    node[keys[i]] = YAML::Node(YAML::NodeType::Map);
  } else if (child.IsScalar()) {
    YAML::Node fresh(YAML::NodeType::Map);
    fresh["preset"] = child;  // the node itself, so errors still point into the file
    node[keys[i]] = fresh;
  } else if (!child.IsMap()) {
    throw std::invalid_argument("'" + keys[i] + "' is a list, not a mapping");
  }
  YAML::Node next = node[keys[i]];
  set_at(next, keys, i + 1, value);
}

// A --set value parsed as YAML. Sweeps apply the same few values to every point, so each
// thread keeps the values it parsed and hands out clones (a clone keeps the parsed node's marks;
// parsing was a third of loading a sweep point). Throws what YAML::Load throws.
YAML::Node parse_value(const std::string& text) {
  thread_local std::unordered_map<std::string, YAML::Node> parsed;
  auto it = parsed.find(text);
  if (it == parsed.end()) {
    YAML::Node value = YAML::Load(text);
    if (parsed.size() >= 4096) parsed.clear();
    it = parsed.emplace(text, value).first;
  }
  return YAML::Clone(it->second);
}

}  // namespace

void apply_overrides(YAML::Node& root, const std::vector<std::string>& sets, YamlContext& ctx) {
  for (const std::string& arg : sets) {
    const auto eq = arg.find('=');
    const core::SourceLocation where{set_argument_file(arg), 1, 1};
    if (eq == std::string::npos || eq == 0)
      throw core::ConfigError(where, "", "expected key.path=value (e.g. training.micro_batch=4)");
    const std::string path = arg.substr(0, eq);
    const std::string text = arg.substr(eq + 1);
    for (const auto& k : split_path(path))
      if (k.empty())
        throw core::ConfigError(where, path, "empty key in path; expected key.path=value");
    YAML::Node value;
    try {
      value = parse_value(text);
    } catch (const YAML::Exception& e) {
      const core::ConfigError located =
          models::yaml_syntax_error(e, where.file, text, path, "malformed value: ");
      throw core::ConfigError({where.file, 1, set_value_column(arg) + located.where().column - 1},
                              path, located.detail());
    }
    if (!value.IsDefined() || value.IsNull())
      throw core::ConfigError({where.file, 1, set_value_column(arg)}, path,
                              "missing value after '='");
    if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    try {
      set_at(root, split_path(path), 0, value);
    } catch (const std::invalid_argument& e) {
      throw core::ConfigError(where, path, e.what());
    }
    ctx.add_override(path, OverrideOrigin{arg, set_value_column(arg)});
  }
}

}  // namespace trainsim::scenario
