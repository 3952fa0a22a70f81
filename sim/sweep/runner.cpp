#include "sim/sweep/runner.hpp"

#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

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
// Overrides that reach the lowered plan only as Plan::intra_node, inter_node and data_allreduce
// (parallel::lower reads the links and the data-parallel algorithm nowhere else): points that
// differ in these alone lower to the same programs.
bool timing_only(const std::string& set) {
  const std::string key = set.substr(0, set.find('='));
  for (const char* link : {"cluster.intra_node", "cluster.inter_node"})
    if (key == link || key.starts_with(std::string(link) + ".")) return true;
  return key == "parallel.allreduce";
}

// The plan of this thread's last point, reused by the next whose base and other overrides are
// the same (a sweep's innermost axes are often the all-reduce algorithm and the links).
struct PlanCache {
  std::string path, text, subkey;
  std::vector<std::string> rest;  // the overrides that are not timing_only, in order
  std::optional<parallel::Plan> plan;
};
thread_local PlanCache plan_cache;

const parallel::Plan& plan_for(const BaseScenario& base, const std::vector<std::string>& sets,
                               const scenario::Scenario& s) {
  std::vector<std::string> rest;
  for (const auto& k : sets)
    if (!timing_only(k)) rest.push_back(k);
  PlanCache& c = plan_cache;
  if (!c.plan || c.rest != rest || c.path != base.path || c.subkey != base.subkey || c.text != base.text) {
    c.plan.reset();  // (a lowering that throws leaves no stale plan behind)
    c.plan = parallel::lower(s, {.compress = true});
    c.path = base.path;
    c.text = base.text;
    c.subkey = base.subkey;
    c.rest = std::move(rest);
  }
  c.plan->intra_node = s.cluster.intra_node;
  c.plan->inter_node = s.cluster.inter_node;
  c.plan->data_allreduce = s.parallel.allreduce;
  return *c.plan;
}
}  // namespace

PointResult run_point(const BaseScenario& base, const std::vector<std::string>& sets, exec::AllocatorMemo* memo) {
  PointResult r;
  try {
    scenario::Scenario s = base.load(sets);
    {
      const parallel::Plan& plan = plan_for(base, sets, s);
      const exec::Timeline tl = exec::play(plan, {.allocator_memo = memo});
      r.summary = report::summarize(s, plan, tl, false);
    }
    r.status = r.summary->fits ? Status::fits : Status::oom;
    base.give_back(std::move(s));
  } catch (const core::ConfigError& e) {
    r.status = Status::invalid;
    r.reason = e.what();
  } catch (const core::OverflowError& e) {
    r.status = Status::invalid;
    r.reason = std::string("sizes exceed 64-bit counters (") + e.what() + ")";
  }
  return r;
}

int default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace trainsim::sweep
