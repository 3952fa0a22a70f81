#include "sim/sweep/kept_plans.hpp"

#include <algorithm>

#include "sim/parallel/lower.hpp"

namespace trainsim::sweep {

namespace {
// Overrides whose whole effect on the lowered plan is a setting the lowering passes declare
// (parallel::is_plan_setting: devices, links, the data-parallel algorithm) are set again on the
// plan for each point (parallel::apply_plan_settings), so points that differ in these alone
// lower to the same programs; the cluster's sizes and placement are compared before a plan is
// reused.
bool patched(const std::string& set) { return parallel::is_plan_setting(set.substr(0, set.find('='))); }

// At most this many plans are kept, the newest included. Several serve a sweep whose device
// turns outside an axis that changes the plan (global batch, say): the plan a point needs is that
// of a point some plans back. The least recently used goes first.
constexpr std::size_t kKeptPlans = 8;
// Ops the kept plans may hold together besides the newest: a plan and its digest take up to a
// few hundred bytes per op, and a fit doubling the global batch lowers plans of millions of ops,
// none of which a later point reuses.
constexpr std::int64_t kKeptOps = 2'000'000;

// A thread keeps its newest plan alone until a point asks for one it gave up, and from then on
// up to kKeptPlans. A plan kept for nothing costs its pages: the next plan lowered cannot reuse
// them, and the process touches as many fresh ones (a ZeRO-3 plan of GPT-3 175B on the
// Megatron layout holds about 140 MB with its digest, some 35,000 page faults, where lowering
// it again takes 20-70 ms). A sweep whose patched axes are its innermost meets each plan's
// points one after another and never asks for an older one.
struct Kept {
  std::vector<KeptPlan> plans;   // most recently used last
  std::vector<PlanKey> given_up;  // keys of the last kKeptPlans plans let go, most recent last
  std::size_t keep = 1;
  std::int64_t lowered = 0;
};
thread_local Kept kept;

// Makes room for one more plan: lets the least recently used go while the kept ones fill the
// thread's share or hold more than kKeptOps. Before lowering, so the pages of those let go serve
// the new plan.
void make_room() {
  std::int64_t held = 0;
  for (const auto& p : kept.plans) held += p.plan.held_ops();
  while (!kept.plans.empty() && (kept.plans.size() >= kept.keep || held > kKeptOps)) {
    held -= kept.plans.front().plan.held_ops();
    if (kept.given_up.size() == kKeptPlans) kept.given_up.erase(kept.given_up.begin());
    kept.given_up.push_back(std::move(kept.plans.front().key));
    kept.plans.erase(kept.plans.begin());
  }
}
}  // namespace

KeptPlan& plan_for(const BaseScenario& base, const std::vector<std::string>& sets, const scenario::Scenario& s) {
  PlanKey key{base.path, base.text, base.subkey, {}, s.cluster.nodes, s.cluster.gpus_per_node, s.cluster.placement};
  for (const auto& k : sets)
    if (!patched(k)) key.rest.push_back(k);
  auto& plans = kept.plans;
  auto it = std::find_if(plans.begin(), plans.end(), [&](const KeptPlan& k) { return k.key == key; });
  if (it == plans.end()) {
    if (std::find(kept.given_up.begin(), kept.given_up.end(), key) != kept.given_up.end())
      kept.keep = kKeptPlans;
    make_room();
    parallel::Plan plan = parallel::lower(s, {.compress = true});
    ++kept.lowered;
    plans.push_back({std::move(key), std::move(plan), {}});
  } else if (it + 1 != plans.end()) {
    std::rotate(it, it + 1, plans.end());
  }
  parallel::apply_plan_settings(plans.back().plan, s);
  return plans.back();
}

std::int64_t plans_lowered() { return kept.lowered; }

}  // namespace trainsim::sweep
