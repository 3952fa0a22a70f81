#include "sim/sweep/spec.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "sim/core/text_file.hpp"
#include "models/yaml_syntax.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::sweep {

namespace {

core::SourceLocation mark_of(const std::string& file, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.line < 0) return {file, 0, 0};
  // A quoted scalar's mark is its opening quote; columns count from the text inside.
  const int quoted = n.IsScalar() && n.Tag() == "!" ? 1 : 0;
  return {file, m.line + 1, m.column + 1 + quoted};
}

// A value as --set takes it: a scalar's text, anything else in YAML flow style.
std::string value_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

Axis read_axis(const scenario::YamlContext& ctx, const YAML::Node& key, const YAML::Node& v) {
  Axis a;
  a.key = key.Scalar();
  a.where = mark_of(ctx.file(), key);
  const std::string path = "axes." + a.key;
  std::size_t start = 0;
  for (std::size_t dot = 0;; start = dot + 1) {
    dot = a.key.find('.', start);
    if (a.key.substr(start, dot - start).empty())
      ctx.fail(key, path, "expected a scenario key path such as training.micro_batch");
    if (dot == std::string::npos) break;
  }
  if (v.IsSequence()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i].IsNull()) ctx.fail(v[i], path + "[" + std::to_string(i) + "]", "expected a value");
      a.values.push_back(value_text(v[i]));
      a.value_where.push_back(mark_of(ctx.file(), v[i]));
    }
    a.written_as_text = std::all_of(v.begin(), v.end(), [](const YAML::Node& n) { return n.IsScalar(); });
  } else if (v.IsMap()) {
    scenario::MapReader m(ctx, v, path);
    YAML::Node r = m.node("range");
    if (!m.has("range") || !r.IsSequence() || r.size() != 2)
      ctx.fail(m.has("range") ? r : v, path + ".range", "expected range: [lo, hi] (integers)");
    const long long lo = scenario::read_int(ctx, r[0], path + ".range[0]", -(1LL << 62));
    const long long hi = scenario::read_int(ctx, r[1], path + ".range[1]", -(1LL << 62));
    const std::string step = m.has("step") ? scenario::read_string(ctx, m.node("step"), path + ".step") : "1";
    try {
      for (long long x : range_values(lo, hi, step)) a.values.push_back(std::to_string(x));
      a.value_where.assign(a.values.size(), mark_of(ctx.file(), v));
    } catch (const std::invalid_argument& e) {
      ctx.fail(m.has("step") ? m.node("step") : r, path, e.what());
    }
    m.finish({"range", "step"});
  } else {
    ctx.fail(v, path, "expected a list of values or {range: [lo, hi], step: x2 | N}");
  }
  if (a.values.empty()) ctx.fail(v, path, "an axis needs at least one value");
  return a;
}

}  // namespace

std::vector<long long> range_values(long long lo, long long hi, const std::string& step) {
  if (lo > hi) throw std::invalid_argument("range [lo, hi] needs lo <= hi");
  const bool mult = !step.empty() && (step[0] == 'x' || step[0] == '*');
  const Value f = parse_value(mult ? step.substr(1) : step);
  if (!f.is_number || f.number != static_cast<double>(static_cast<long long>(f.number)) ||
      f.number < (mult ? 2 : 1) || f.number > 1e12)
    throw std::invalid_argument("step must be xF (multiply by an integer F >= 2) or N (add an integer N >= 1), got '" + step + "'");
  if (mult && lo <= 0) throw std::invalid_argument("a multiplicative range needs lo >= 1");
  const auto s = static_cast<long long>(f.number);
  std::vector<long long> out;
  for (long long x = lo; x <= hi; x = mult ? x * s : x + s) {
    out.push_back(x);
    if (out.size() > 100000) throw std::invalid_argument("the range has more than 100000 values");
    if ((mult && x > hi / s) || (!mult && x > hi - s)) break;
  }
  return out;
}

namespace {
thread_local scenario::ModelCache model_cache;  // see BaseScenario::give_back
}  // namespace

void BaseScenario::give_back(scenario::Scenario&& s) const { model_cache.give_back(std::move(s.model)); }

scenario::Scenario BaseScenario::load(const std::vector<std::string>& sets) const {
  // Every point starts from the same base text: each worker thread parses it once and clones
  // the tree per point (overrides edit it). yaml-cpp nodes are not shared across threads.
  // Points whose sections were all read before under the same overrides are put together from
  // those readings (scenario::ScenarioMemo), without a tree.
  thread_local std::string parsed_text, parsed_subkey, parsed_path, model_text;
  thread_local YAML::Node parsed;
  thread_local scenario::ScenarioMemo memo;
  const bool same_base =
      parsed_text == text && parsed_subkey == subkey && parsed_path == path && parsed.IsDefined();
  YAML::Node root;
  if (!same_base) {
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw models::yaml_syntax_error(e, path, text, "", "");
    }
    parsed = YAML::Clone(root);
    parsed_text = text;
    parsed_subkey = subkey;
    parsed_path = path;
    memo.clear();
    // The base's model node as the model cache keys it (scenario::ModelCache::node_text).
    const YAML::Node& whole = root;  // const: lookups must not insert keys
    const YAML::Node top = subkey.empty() || !whole.IsMap() ? whole : whole[subkey];
    model_text = top.IsMap() && top["model"] ? YAML::Dump(top["model"]) : std::string();
  }
  // Valid while no override reaches into the model.
  const bool model_set = std::any_of(sets.begin(), sets.end(), [](const std::string& k) {
    return k.starts_with("model=") || k.starts_with("model.");
  });
  model_cache.node_text = model_set ? std::string() : model_text;
  if (auto s = memo.load(path, sets, &model_cache)) return std::move(*s);
  if (same_base) root = YAML::Clone(parsed);
  if (subkey.empty()) return scenario::load_scenario_tree(root, path, sets, &model_cache, &memo);
  YAML::Node sub = root[subkey];
  return scenario::load_scenario_tree(sub, path, sets, &model_cache, &memo);
}

bool BaseScenario::scalar_at(const std::string& key_path, std::string& out) const {
  YAML::Node n = YAML::Load(text);
  if (!subkey.empty()) n.reset(n[subkey]);
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = key_path.find('.', start);
    if (!n.IsMap()) return false;
    n.reset(n[key_path.substr(start, dot - start)]);
    if (!n.IsDefined()) return false;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!n.IsScalar()) return false;
  out = n.Scalar();
  return true;
}

BaseScenario BaseScenario::from_file(const std::string& path) {
  BaseScenario b;
  b.path = path;
  b.text = core::read_text_file(path, {path, 0, 0}, "");
  scenario::parse_yaml_text(b.text, path);  // a syntax error or duplicate key, located
  return b;
}

SweepSpec load_sweep(const std::string& path) {
  return load_sweep_text(core::read_text_file(path, {path, 0, 0}, ""), path);
}

SweepSpec load_sweep_text(const std::string& text, const std::string& path) {
  SweepSpec spec;
  spec.file = path;
  const YAML::Node root = scenario::parse_yaml_text(text, path);
  scenario::YamlContext ctx(path);
  if (!root.IsMap()) ctx.fail(root, "", "a sweep file is a mapping with base: and axes:");
  scenario::MapReader top(ctx, root, "");
  if (!top.has("base")) ctx.fail(root, "base", "missing required key 'base' (a scenario mapping or {file: path})");
  if (!top.has("axes")) ctx.fail(root, "axes", "missing required key 'axes'");

  const YAML::Node base = top.node("base");
  if (!base.IsMap()) ctx.fail(base, "base", "expected a scenario mapping or {file: path}");
  if (base["file"].IsDefined()) {
    scenario::MapReader b(ctx, base, "base");
    const std::string rel = b.string("file");
    b.finish({"file"});
    const auto full = std::filesystem::path(path).parent_path() / rel;
    spec.base.path = std::filesystem::path(rel).is_absolute() ? rel : full.lexically_normal().string();
    spec.base.text = core::read_text_file(spec.base.path, mark_of(path, base["file"]), "base.file");
    scenario::parse_yaml_text(spec.base.text, spec.base.path);
  } else {
    spec.base.path = path;
    spec.base.text = text;
    spec.base.subkey = "base";
  }

  const YAML::Node axes = top.node("axes");
  if (!axes.IsMap() || axes.size() == 0) ctx.fail(axes, "axes", "expected a mapping of scenario key path -> values");
  std::map<std::string, std::size_t> by_name;
  for (auto it = axes.begin(); it != axes.end(); ++it) {
    Axis a = read_axis(ctx, it->first, it->second);
    if (by_name.count(a.key)) ctx.fail(it->first, "axes." + a.key, "axis listed twice");
    by_name[a.key] = spec.axes.size();
    spec.axes.push_back(std::move(a));
  }

  // Zip groups: each axis in at most one group; a group is one dimension at its first member.
  std::vector<int> group_of(spec.axes.size(), -1);
  std::vector<std::vector<std::size_t>> groups;
  if (top.has("zip")) {
    const YAML::Node zip = top.node("zip");
    if (!zip.IsSequence()) ctx.fail(zip, "zip", "expected a list of groups, e.g. [[parallel.tensor, parallel.pipeline]]");
    for (std::size_t g = 0; g < zip.size(); ++g) {
      const std::string gpath = "zip[" + std::to_string(g) + "]";
      if (!zip[g].IsSequence() || zip[g].size() < 2) ctx.fail(zip[g], gpath, "expected a list of two or more axis names");
      std::vector<std::size_t> members;
      for (std::size_t k = 0; k < zip[g].size(); ++k) {
        const std::string name = scenario::read_string(ctx, zip[g][k], gpath);
        auto it = by_name.find(name);
        if (it == by_name.end()) ctx.fail(zip[g][k], gpath, "'" + name + "' is not an axis");
        if (group_of[it->second] >= 0) ctx.fail(zip[g][k], gpath, "axis '" + name + "' is already in a zip group");
        if (spec.axes[it->second].values.size() != spec.axes[members.empty() ? it->second : members[0]].values.size())
          ctx.fail(zip[g][k], gpath, "zipped axes need equal lengths: '" + name + "' has " +
                   std::to_string(spec.axes[it->second].values.size()) + " values, '" +
                   spec.axes[members[0]].key + "' has " + std::to_string(spec.axes[members[0]].values.size()));
        group_of[it->second] = static_cast<int>(groups.size());
        members.push_back(it->second);
      }
      groups.push_back(members);
    }
  }
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    if (group_of[a] < 0) spec.dims.push_back({a});
    else if (groups[static_cast<std::size_t>(group_of[a])][0] == a) {
      auto members = groups[static_cast<std::size_t>(group_of[a])];
      std::sort(members.begin(), members.end());
      spec.dims.push_back(members);
    }
  }
  std::size_t total = 1;
  for (const auto& d : spec.dims) {
    total *= spec.axes[d[0]].values.size();
    if (total > spec.max_points)
      ctx.fail(axes, "axes", "the sweep has more than " + std::to_string(spec.max_points) +
               " points; split it into smaller sweeps or use where:");
  }

  if (top.has("where")) {
    const YAML::Node w = top.node("where");
    std::vector<YAML::Node> rules;
    if (w.IsScalar()) rules.push_back(w);
    else if (w.IsSequence()) for (std::size_t i = 0; i < w.size(); ++i) rules.push_back(w[i]);
    else ctx.fail(w, "where", "expected a list of rules such as \"parallel.tensor * parallel.pipeline <= 64\"");
    for (std::size_t i = 0; i < rules.size(); ++i) {
      const std::string rpath = "where[" + std::to_string(i) + "]";
      const std::string text = scenario::read_string(ctx, rules[i], rpath);
      auto known = [&](const std::string& name) {
        std::string s;
        if (by_name.count(name)) return true;
        if (!spec.base.scalar_at(name, s)) return false;
        spec.base_values[name] = parse_value(s);
        return true;
      };
      spec.where.push_back(Expr::parse(text, mark_of(path, rules[i]), rpath, known));
    }
  }
  top.finish({"base", "axes", "zip", "where"});
  return spec;
}

std::vector<Point> expand(const SweepSpec& spec) {
  std::map<std::string, std::size_t> by_name;
  for (std::size_t a = 0; a < spec.axes.size(); ++a) by_name[spec.axes[a].key] = a;
  std::vector<std::vector<Value>> values(spec.axes.size());
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    for (const auto& v : spec.axes[a].values) values[a].push_back(parse_value(v));

  // A rule's verdict depends only on the values of the axes it names (the base's are fixed), so
  // each combination of those is evaluated once, when a point first meets it, and kept in a
  // table (a million-point grid filtered by a rule on three axes evaluates it 160 times). The
  // first point to meet a combination is the one that would have evaluated it first, so a rule
  // that fails (a type error, a division by zero) fails at the same point as before.
  struct Table {
    std::vector<std::size_t> axes;  // the axes the rule names
    std::vector<std::int8_t> verdict;  // by mixed-radix index over `axes`: -1 not yet, 0, 1; empty: no table
  };
  constexpr std::size_t kMaxTable = std::size_t{1} << 20;
  std::vector<Table> tables(spec.where.size());
  for (std::size_t r = 0; r < spec.where.size(); ++r) {
    std::size_t size = 1;
    for (const auto& name : spec.where[r].names()) {
      auto it = by_name.find(name);
      if (it == by_name.end()) continue;
      tables[r].axes.push_back(it->second);
      size = size > kMaxTable ? size : size * values[it->second].size();
    }
    if (size <= kMaxTable) tables[r].verdict.assign(size, -1);
  }

  std::vector<Point> out;
  std::vector<std::size_t> odo(spec.dims.size(), 0);
  std::vector<std::size_t> choice(spec.axes.size(), 0);
  auto lookup = [&](const std::string& name) {
    auto it = by_name.find(name);
    if (it != by_name.end()) return values[it->second][choice[it->second]];
    return spec.base_values.at(name);
  };
  auto keeps = [&](std::size_t r) {
    Table& t = tables[r];
    if (t.verdict.empty()) return spec.where[r].test(lookup);
    std::size_t at = 0;
    for (std::size_t a : t.axes) at = at * values[a].size() + choice[a];
    if (t.verdict[at] < 0) t.verdict[at] = spec.where[r].test(lookup) ? 1 : 0;
    return t.verdict[at] == 1;
  };
  for (;;) {
    for (std::size_t d = 0; d < spec.dims.size(); ++d)
      for (std::size_t a : spec.dims[d]) choice[a] = odo[d];
    bool keep = true;
    for (std::size_t r = 0; keep && r < spec.where.size(); ++r) keep = keeps(r);
    if (keep) out.push_back({out.size(), choice});
    // Odometer: the last dimension turns fastest.
    std::size_t d = spec.dims.size();
    while (d > 0) {
      --d;
      if (++odo[d] < spec.axes[spec.dims[d][0]].values.size()) break;
      odo[d] = 0;
      if (d == 0) return out;
    }
    if (spec.dims.empty()) return out;
  }
}

std::vector<std::string> point_sets(const SweepSpec& spec, const Point& p) {
  std::vector<std::string> sets;
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    sets.push_back(spec.axes[a].key + "=" + spec.axes[a].values[p.choice[a]]);
  return sets;
}

void check_axis_keys(const SweepSpec& spec, const Point& first) {
  try {
    spec.base.load(point_sets(spec, first));
  } catch (const core::ConfigError& e) {
    if (!scenario::is_set_argument_file(e.where().file) || e.detail().find("unknown key") == std::string::npos) return;
    for (const auto& a : spec.axes)
      if (e.key_path().rfind(a.key, 0) == 0 || a.key.rfind(e.key_path(), 0) == 0)
        throw core::ConfigError(a.where, "axes." + a.key, e.detail());
  }
}

}  // namespace trainsim::sweep
