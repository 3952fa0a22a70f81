// Pods and their oversubscribed uplinks as lowered and played (cluster.pod_nodes,
// cluster.oversubscription; docs/scale.md): which groups span pods, how many of their members
// share a pod, and what the shared uplinks cost their collectives.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/parallel/topology.hpp"
#include "sim/report/summary.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;

namespace {

const std::string kFile = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/korthikanti.yaml";

// tensor 8 x data 8 = 64 GPUs on 8 nodes of 8: each data-parallel group has one member per node,
// ranks 8 apart. With pod_nodes 4: two pods of 32 GPUs, 4 members of each group in each.
scenario::Scenario pods(std::vector<std::string> extra = {}) {
  std::vector<std::string> sets = {"parallel={tensor: 8, data: 8}",
                                   "cluster={nodes: 8, gpus_per_node: 8}"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  auto s = scenario::load_scenario(kFile, sets);
  // Without latency the ring's time is its bandwidth term alone, so the ratio below is exact.
  s.cluster.inter_node.latency = core::Duration{0};
  return s;
}

report::CommSummary data_parallel(const scenario::Scenario& s) {
  const auto plan = parallel::lower(s);
  const auto r = report::summarize(s, plan, exec::play(plan), false);
  for (const auto& c : r.comm)
    if (c.kind == "data_parallel") return c;
  FAIL("no data-parallel communication");
  return {};
}

double data_parallel_s(const scenario::Scenario& s) { return data_parallel(s).time_s; }

}  // namespace

TEST_CASE("a group spanning pods has its members per pod, a group inside one has none", "[parallel][congestion]") {
  const auto s = pods({"cluster.pod_nodes=4", "cluster.oversubscription=7"});
  const auto data = parallel::group_span(s, scenario::ParallelDim::data);
  CHECK(data.inter_node);
  CHECK(data.per_node == 1);
  CHECK(data.pod_members == 4);  // 32 GPUs per pod / stride 8
  CHECK(parallel::group_span(s, scenario::ParallelDim::tensor).pod_members == 0);
  // Pods as large as the cluster: nothing spans pods.
  CHECK(parallel::group_span(pods({"cluster.pod_nodes=8"}), scenario::ParallelDim::data).pod_members == 0);
  // Pods of one node: one member of the group in each.
  CHECK(parallel::group_span(pods({"cluster.pod_nodes=1"}), scenario::ParallelDim::data).pod_members == 1);

  const auto plan = parallel::lower(s);
  CHECK(plan.oversubscription == 7);
  bool found = false;
  for (const auto& op : plan.programs[0].ops)
    if (op.kind == parallel::OpKind::all_reduce) {
      found = true;
      CHECK(op.comm.pod_members == 4);
      CHECK(op.comm.ranks_per_node == 1);
    }
  CHECK(found);
}

TEST_CASE("the data-parallel all-reduce across pods is 7/4 slower at 1:7 with 4 nodes per pod", "[parallel][congestion]") {
  // The inter-node ring's bandwidth term scales with 1 / bandwidth: 4 x B_nic / 7 in place of
  // B_nic (docs/scale.md), so 7/4 of the time, to the nanosecond each all-reduce is rounded to.
  const double full = data_parallel_s(pods());
  const double congested = data_parallel_s(pods({"cluster.pod_nodes=4", "cluster.oversubscription=7"}));
  REQUIRE(full > 0);
  CHECK(congested / full == Approx(7.0 / 4).epsilon(1e-6));
  // The report says so: the kind's congestion factor, 1 where nothing congests.
  CHECK(data_parallel(pods({"cluster.pod_nodes=4", "cluster.oversubscription=7"})).congestion ==
        Approx(7.0 / 4).epsilon(1e-12));
  CHECK(data_parallel(pods()).congestion == 1);
  // Full bisection between the pods, or pods holding the whole cluster: unchanged to the bit.
  CHECK(data_parallel_s(pods({"cluster.pod_nodes=4"})) == full);
  CHECK(data_parallel_s(pods({"cluster.pod_nodes=8", "cluster.oversubscription=7"})) == full);
  // 1:3 with 4 nodes of each group per pod: 4 x B_nic / 3 > B_nic, the NICs stay the limit.
  CHECK(data_parallel_s(pods({"cluster.pod_nodes=4", "cluster.oversubscription=3"})) == full);
}
