#include "sim/sweep/runner.hpp"

#include <algorithm>

#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::sweep {

std::string_view to_string(Status s) {
  switch (s) {
    case Status::fits: return "fits";
    case Status::oom: return "oom";
    case Status::invalid: return "invalid";
  }
  return "?";
}

namespace {
// Overrides whose whole effect on the lowered plan is a setting the lowering passes declare
// (parallel::is_plan_setting: devices, links, the data-parallel algorithm) are set again on the
// plan for each point (parallel::apply_plan_settings), so points that differ in these alone
// lower to the same programs; the cluster's sizes and placement are compared before a plan is
// reused.
bool patched(const std::string& set) { return parallel::is_plan_setting(set.substr(0, set.find('='))); }

// Plans of this thread's last points, each reused by a later point whose base and other
// overrides are the same (a sweep's innermost axes are often the device, the all-reduce
// algorithm and the links) and whose cluster has the same sizes and placement. Several are kept:
// when the device turns outside an axis that changes the plan (global batch, say), the plan a
// point needs is that of a point some plans back. The least recently used goes first.
struct KeptPlan {
  std::string path, text, subkey;
  std::vector<std::string> rest;  // the overrides that are not patched, in order
  std::int64_t nodes = 0, gpus_per_node = 0;
  std::array<scenario::ParallelDim, 3> placement{};
  parallel::Plan plan;
  exec::PlanDigest digest;  // filled by the plan's first play, kept for the next ones

  bool serves(const BaseScenario& base, const std::vector<std::string>& other, const scenario::Scenario& s) const {
    return rest == other && path == base.path && subkey == base.subkey && text == base.text &&
           nodes == s.cluster.nodes && gpus_per_node == s.cluster.gpus_per_node && placement == s.cluster.placement;
  }
};
constexpr std::size_t kKeptPlans = 8;
// Ops the kept plans may hold together besides the newest: a plan and its digest take up to a
// few hundred bytes per op, and a fit doubling the global batch lowers plans of millions of ops,
// none of which a later point reuses.
constexpr std::int64_t kKeptOps = 2'000'000;
thread_local std::vector<KeptPlan> kept_plans;  // most recently used last

KeptPlan& plan_for(const BaseScenario& base, const std::vector<std::string>& sets, const scenario::Scenario& s) {
  std::vector<std::string> rest;
  for (const auto& k : sets)
    if (!patched(k)) rest.push_back(k);
  auto& kept = kept_plans;
  auto it = std::find_if(kept.begin(), kept.end(), [&](const KeptPlan& k) { return k.serves(base, rest, s); });
  if (it == kept.end()) {
    // Lowered first: a lowering that throws leaves the kept plans as they were.
    KeptPlan k{base.path, base.text, base.subkey, std::move(rest), s.cluster.nodes, s.cluster.gpus_per_node,
               s.cluster.placement, parallel::lower(s, {.compress = true}), {}};
    if (kept.size() == kKeptPlans) kept.erase(kept.begin());
    std::int64_t held = 0;
    for (const auto& p : kept) held += p.plan.held_ops();
    while (!kept.empty() && held > kKeptOps) {
      held -= kept.front().plan.held_ops();
      kept.erase(kept.begin());
    }
    kept.push_back(std::move(k));
  } else if (it + 1 != kept.end()) {
    std::rotate(it, it + 1, kept.end());
  }
  parallel::apply_plan_settings(kept.back().plan, s);
  return kept.back();
}
}  // namespace

PointResult run_point(const BaseScenario& base, const std::vector<std::string>& sets, exec::AllocatorMemo* memo) {
  PointResult r;
  try {
    scenario::Scenario s = base.load(sets);
    {
      KeptPlan& kept = plan_for(base, sets, s);
      const exec::Timeline tl = exec::play(kept.plan, {.allocator_memo = memo, .plan_digest = &kept.digest});
      r.summary = report::summarize(s, kept.plan, tl, false);
    }
    r.status = r.summary->fits ? Status::fits : Status::oom;
    base.give_back(std::move(s));
  } catch (const core::ConfigError& e) {
    r.status = Status::invalid;
    r.reason = e.what();
    r.error = e;
  } catch (const core::OverflowError& e) {
    r.status = Status::invalid;
    r.reason = std::string("sizes exceed 64-bit counters (") + e.what() + ")";
  }
  return r;
}

PointResult run_point(const SweepSpec& spec, const Point& p, exec::AllocatorMemo* memo) {
  const std::vector<std::string> sets = point_sets(spec, p);
  PointResult r = run_point(spec.base, sets, memo);
  if (!r.error) return r;
  const core::SourceLocation& at = r.error->where();
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    const Axis& axis = spec.axes[a];
    if (at.file != scenario::set_argument_file(sets[a])) continue;
    // Columns past the value's first character carry over when the file holds the same text.
    const int value_column = scenario::set_value_column(sets[a]);
    core::SourceLocation in_file = axis.value_where[p.choice[a]];
    if (axis.written_as_text && at.column > value_column) in_file.column += at.column - value_column;
    r.error = core::ConfigError(in_file, r.error->key_path(), r.error->detail());
    r.reason = r.error->what();
    break;
  }
  return r;
}

int default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

int max_jobs() {
  return std::clamp(4 * default_jobs(), 4, 256);
}

int worker_threads(int requested, std::size_t items, std::string* note, const char* what) {
  const int want = requested == 0 ? default_jobs() : requested;
  const auto cap = static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(max_jobs()), std::max<std::size_t>(items, 1)));
  if (want <= cap) return std::max(want, 1);
  if (note && requested > 0)
    *note = "-j " + std::to_string(requested) + " lowered to " + std::to_string(cap) +
            " worker threads (" +
            (cap == max_jobs() ? std::string("at most 4 per hardware thread, 256 in all")
                               : std::to_string(items) + " " + what + " to run") +
            ")";
  return cap;
}

}  // namespace trainsim::sweep
