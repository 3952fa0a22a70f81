#include "sim/validation/memory.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>

#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::validation {

namespace {

std::optional<MemoryKind> kind_from_name(const std::string& name) {
  for (MemoryKind k : {MemoryKind::allocated, MemoryKind::active, MemoryKind::reserved,
                       MemoryKind::nvidia_smi})
    if (kind_name(k) == name) return k;
  return std::nullopt;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::string kind_name(MemoryKind k) {
  switch (k) {
    case MemoryKind::allocated: return "allocated";
    case MemoryKind::active: return "active";
    case MemoryKind::reserved: return "reserved";
    case MemoryKind::nvidia_smi: return "nvidia-smi";
  }
  return "?";
}

std::optional<MemoryKind> classify_kind(const std::string& description) {
  const std::string d = lower(description);
  const auto has = [&](const char* word) { return d.find(word) != std::string::npos; };
  if (has("nvidia-smi") || has("nvml")) return MemoryKind::nvidia_smi;
  // "README does not say active/allocated/reserved", "alloc vs reserved not stated".
  if (has("not say") || has("not stated")) return std::nullopt;
  if (has("reserved")) return MemoryKind::reserved;
  if (has("active")) return MemoryKind::active;
  if (has("alloc")) return MemoryKind::allocated;
  return std::nullopt;
}

std::string scope_name(ThroughputScope s) {
  switch (s) {
    case ThroughputScope::unset: return "unset";
    case ThroughputScope::per_gpu: return "per-gpu";
    case ThroughputScope::total: return "total";
    case ThroughputScope::none: return "none";
  }
  return "?";
}

core::Bytes SimulatedMemory::of(MemoryKind k) const {
  switch (k) {
    case MemoryKind::allocated:
    case MemoryKind::active: return allocated;
    case MemoryKind::reserved: return reserved;
    case MemoryKind::nvidia_smi: return nvidia_smi;
  }
  return {};
}

std::vector<MemoryCase> read_memory_cases(const std::string& path) {
  const YAML::Node root = scenario::load_yaml_file(path);
  scenario::YamlContext ctx(path);
  scenario::MapReader top(ctx, root, "");
  const YAML::Node list = top.node("cases");
  if (!list.IsDefined()) top.require("cases");
  if (!list.IsSequence() || list.size() == 0)
    ctx.fail(list, "cases", "expected a non-empty list of {id, scenario, kind}");
  top.finish({"cases"});
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::vector<MemoryCase> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = "cases[" + std::to_string(i) + "]";
    scenario::MapReader e(ctx, list[i], at);
    MemoryCase c;
    c.at = ctx.locate(list[i], at);
    c.key_path = at;
    c.id = e.string("id");
    if (!seen.insert(c.id).second)
      ctx.fail(e.node("id"), at + ".id", "expected an id not listed before, got '" + c.id + "' again");
    c.scenario = (folder / e.string("scenario")).lexically_normal().string();
    if (e.has("kind")) {
      const std::string k = e.choice("kind", {"allocated", "active", "reserved", "nvidia-smi"}, "");
      c.kind = kind_from_name(k);
    }
    if (e.has("throughput")) {
      const std::string t = e.choice("throughput", {"per-gpu", "total", "none"}, "");
      c.throughput = t == "per-gpu" ? ThroughputScope::per_gpu
                     : t == "total" ? ThroughputScope::total
                                    : ThroughputScope::none;
    }
    e.finish({"id", "scenario", "kind", "throughput"});
    out.push_back(std::move(c));
  }
  return out;
}

std::map<std::string, MeasuredMemory> read_measured_memory(const std::string& path) {
  const YAML::Node root = scenario::load_yaml_file(path);
  scenario::YamlContext ctx(path);
  if (!root.IsMap()) ctx.fail(root, "", "expected a mapping with a 'cases' list");
  const YAML::Node list = root["cases"];
  if (!list.IsDefined() || !list.IsSequence())
    ctx.fail(list.IsDefined() ? list : root, "cases", "expected a list of measured cases");
  std::map<std::string, MeasuredMemory> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node e = list[i];
    const std::string at = "cases[" + std::to_string(i) + "]";
    if (!e.IsMap()) ctx.fail(e, at, "expected a mapping with id and measured");
    MeasuredMemory m;
    m.at = ctx.locate(e, at);
    m.id = scenario::read_string(ctx, e["id"], at + ".id");
    if (e["group"].IsDefined()) m.group = scenario::read_string(ctx, e["group"], at + ".group");
    const YAML::Node meas = e["measured"];
    if (!meas.IsMap()) ctx.fail(meas.IsDefined() ? meas : e, at + ".measured", "expected a mapping");
    const YAML::Node gib = meas["peak_memory_GiB"];
    if (gib.IsDefined() && !gib.IsNull()) {
      double v = 0;
      if (!gib.IsScalar() || !YAML::convert<double>::decode(gib, v) || !(v > 0) || !std::isfinite(v))
        ctx.fail(gib, at + ".measured.peak_memory_GiB", "expected a positive finite number of GiB or null");
      m.gib = v;
    }
    if (meas["kind"].IsDefined())
      m.kind_text = scenario::read_string(ctx, meas["kind"], at + ".measured.kind");
    for (const char* key : {"tokens_per_s", "samples_per_s"}) {
      const YAML::Node n = meas[key];
      if (!n.IsDefined() || n.IsNull()) continue;
      double v = 0;
      if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !(v > 0) || !std::isfinite(v))
        ctx.fail(n, at + ".measured." + key, "expected a positive finite rate or null");
      (std::string(key) == "tokens_per_s" ? m.tokens_per_s : m.samples_per_s) = v;
    }
    if (!out.emplace(m.id, m).second)
      ctx.fail(e["id"], at + ".id", "expected an id not listed before, got '" + m.id + "' again");
  }
  return out;
}

SimulatedMemory simulate_memory(const std::string& scenario_path) {
  const scenario::Scenario s = scenario::load_scenario(scenario_path);
  const parallel::Plan plan = parallel::lower(s, {.compress = true});
  const exec::Timeline tl = exec::play(plan);
  SimulatedMemory out;
  for (std::size_t p = 0; p < plan.programs.size(); ++p) {
    const exec::DeviceTimeline& d = tl.devices[p];
    out.allocated = std::max(out.allocated, d.allocated_peak);
    out.reserved = std::max(out.reserved, d.reserved_peak);
    out.nvidia_smi = std::max(out.nvidia_smi, d.reserved_peak + plan.programs[p].model_states[hw::MemCategory::reserved]);
    out.fits = out.fits && d.fits;
  }
  out.fits = out.fits && tl.host_fits;
  out.step_time_s = core::to_seconds(tl.step_time);
  out.samples = plan.samples;
  out.tokens = plan.tokens;
  out.gpus = plan.devices_total;
  return out;
}

namespace {

// The throughput comparison of one case, once simulated: the source's rate against the
// simulated one of the same scope (per GPU: the step's tokens or samples over the GPUs).
std::optional<MemoryResult::Throughput> compare_throughput(const MeasuredMemory& m, ThroughputScope scope,
                                                           const SimulatedMemory& sim) {
  if (scope == ThroughputScope::none || sim.step_time_s <= 0) return std::nullopt;
  const bool tokens = m.tokens_per_s && sim.tokens > 0;
  if (!tokens && !m.samples_per_s) return std::nullopt;
  MemoryResult::Throughput t;
  t.unit = tokens ? "tokens/s" : "samples/s";
  t.scope = scope == ThroughputScope::total ? ThroughputScope::total : ThroughputScope::per_gpu;
  t.measured = tokens ? *m.tokens_per_s : *m.samples_per_s;
  const double per_step = static_cast<double>(tokens ? sim.tokens : sim.samples);
  const double gpus = t.scope == ThroughputScope::total ? 1.0 : static_cast<double>(sim.gpus);
  t.predicted = per_step / gpus / sim.step_time_s;
  t.step_error = t.measured / t.predicted - 1;
  return t;
}

}  // namespace

std::vector<MemoryResult> compare_memory(const std::vector<MemoryCase>& cases,
                                         const std::map<std::string, MeasuredMemory>& measured,
                                         const std::function<void(int)>& on_progress) {
  // Every case is paired with its measurement before anything is simulated.
  std::vector<MemoryResult> out;
  for (const MemoryCase& c : cases) {
    const auto it = measured.find(c.id);
    if (it == measured.end())
      throw core::ConfigError(c.at, c.key_path + ".id", "expected an id of the measured set; '" + c.id + "' is not in it");
    const MeasuredMemory& m = it->second;
    if (!m.gib)
      throw core::ConfigError(c.at, c.key_path + ".id", "expected a case with a measured peak; '" + c.id +
                                              "' has peak_memory_GiB null in the measured set");
    const auto stated = classify_kind(m.kind_text);
    if (c.kind && stated && *c.kind != *stated)
      throw core::ConfigError(c.at, c.key_path + ".kind", "expected the kind the source states for '" + c.id + "' (" +
                                                kind_name(*stated) + "), got " + kind_name(*c.kind));
    if (!c.kind && !stated)
      throw core::ConfigError(c.at, c.key_path + ".kind", "expected a kind for '" + c.id + "': its source does not say "
                                            "which figure it reports (\"" + m.kind_text + "\")");
    const bool has_rate = m.tokens_per_s || m.samples_per_s;
    if (has_rate && c.throughput == ThroughputScope::unset &&
        scenario::load_scenario(c.scenario).parallel.devices() > 1)
      throw core::ConfigError(c.at, c.key_path + ".throughput", "expected throughput: per-gpu, total or none for '" +
                                    c.id + "': its source prints a rate of a run on several GPUs, which "
                                    "may be one GPU's or the whole run's");
    MemoryResult r;
    r.id = c.id;
    r.throughput_scope = c.throughput;
    r.group = m.group;
    r.scenario = c.scenario;
    r.kind = c.kind ? *c.kind : *stated;
    r.measured_gib = *m.gib;
    out.push_back(std::move(r));
  }
  for (MemoryResult& r : out) {
    r.simulated = simulate_memory(r.scenario);
    r.predicted_gib = core::to_gib(r.simulated.of(r.kind));
    r.error = (r.predicted_gib - r.measured_gib) / r.measured_gib;
    r.throughput = compare_throughput(measured.at(r.id), r.throughput_scope, r.simulated);
    if (on_progress) on_progress(1);
  }
  return out;
}

namespace {

// Error statistics of the results `error` gives a figure for, grouped under "<prefix>all",
// "<prefix>group=<group>" and, with `by_kind`, "<prefix>kind=<kind>".
template <class Error>
std::map<std::string, ErrorStats> subsets(const std::vector<MemoryResult>& results, const std::string& prefix,
                                          bool by_kind, Error error) {
  std::vector<RowResult> rows(results.size());
  std::map<std::string, std::vector<const RowResult*>> groups;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::optional<double> e = error(results[i]);
    if (!e) continue;
    rows[i].row = i + 1;
    rows[i].error = *e;
    groups[prefix + "all"].push_back(&rows[i]);
    if (!results[i].group.empty()) groups[prefix + "group=" + results[i].group].push_back(&rows[i]);
    if (by_kind) groups[prefix + "kind=" + kind_name(results[i].kind)].push_back(&rows[i]);
  }
  std::map<std::string, ErrorStats> out;
  for (const auto& [name, members] : groups) out[name] = stats(members);
  return out;
}

}  // namespace

std::map<std::string, ErrorStats> memory_subsets(const std::vector<MemoryResult>& results) {
  return subsets(results, "", true, [](const MemoryResult& r) { return std::optional<double>(r.error); });
}

std::map<std::string, ErrorStats> throughput_subsets(const std::vector<MemoryResult>& results) {
  return subsets(results, "time:", false, [](const MemoryResult& r) {
    return r.throughput ? std::optional<double>(r.throughput->step_error) : std::nullopt;
  });
}

}  // namespace trainsim::validation
