// `plan`'s pruning of dominated candidates: a rung that ran out of memory at micro-batch b is not
// screened at 2b (nor any rung of a layout whose every rung ran out). The exhaustive search is
// the oracle: the ranked layouts and their figures are the same, with fewer simulations.
#include <catch2/catch.hpp>

#include "sim/sweep/plan.hpp"

using namespace trainsim;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;
// Llama 2 7B on one node of eight A100-80GB, global batch 32, sequences of 4096: its wider
// micro-batches run out of memory at the cheap rungs.
const std::string kSmall = kRoot + "/tests/sweep/data/plan_small.yaml";

sweep::PlanOptions options(sweep::Objective objective, bool exhaustive, std::int64_t gpus = 8) {
  sweep::PlanOptions o;
  o.gpus = gpus;
  o.top = 3;
  o.jobs = 2;
  o.max_micro_batch = 4;
  o.objective = objective;
  o.exhaustive = exhaustive;
  return o;
}

void check_same_result(const sweep::PlanResult& pruned, const sweep::PlanResult& oracle) {
  CHECK(pruned.layouts == oracle.layouts);
  REQUIRE(pruned.ranked.size() == oracle.ranked.size());
  REQUIRE_FALSE(pruned.ranked.empty());
  for (std::size_t i = 0; i < pruned.ranked.size(); ++i) {
    const sweep::Candidate &a = pruned.ranked[i], &b = oracle.ranked[i];
    INFO("rank " << i + 1 << ": " << sweep::describe(a.layout) << " vs " << sweep::describe(b.layout));
    CHECK(sweep::describe(a.layout) == sweep::describe(b.layout));
    CHECK(a.sets == b.sets);
    CHECK(a.summary.step_time_s == b.summary.step_time_s);
    CHECK(a.summary.peak.value == b.summary.peak.value);
    CHECK(a.estimated_step_s == b.estimated_step_s);
  }
}

}  // namespace

TEST_CASE("plan's pruned search ranks what the exhaustive search ranks, with fewer simulations", "[sweep][plan]") {
  const auto base = sweep::BaseScenario::from_file(kSmall);
  for (auto objective : {sweep::Objective::throughput, sweep::Objective::memory}) {
    INFO("objective " << (objective == sweep::Objective::memory ? "memory" : "throughput"));
    const sweep::PlanResult pruned = sweep::plan(base, {}, options(objective, false));
    const sweep::PlanResult oracle = sweep::plan(base, {}, options(objective, true));
    check_same_result(pruned, oracle);
    // d8 t1 p1 with ZeRO-1 and no recomputation runs out of memory already at micro-batch 1
    // (a 91.5 GB peak, `trainsim run plan_small.yaml --set parallel.zero=1`), so its micro-batches
    // 2 and 4 start at the next rung.
    CHECK(pruned.simulations < oracle.simulations);
    CHECK(pruned.screened < oracle.screened);
  }
}

TEST_CASE("plan's pruned search over two nodes (HSDP after FSDP) ranks what the exhaustive search ranks", "[sweep][plan]") {
  const auto base = sweep::BaseScenario::from_file(kSmall);
  const std::vector<std::string> sets{"cluster.nodes=2", "parallel.data=16"};
  for (auto objective : {sweep::Objective::throughput, sweep::Objective::memory}) {
    INFO("objective " << (objective == sweep::Objective::memory ? "memory" : "throughput"));
    auto pruned_options = options(objective, false, 16), oracle_options = options(objective, true, 16);
    pruned_options.max_micro_batch = oracle_options.max_micro_batch = 2;
    const sweep::PlanResult pruned = sweep::plan(base, sets, pruned_options);
    const sweep::PlanResult oracle = sweep::plan(base, sets, oracle_options);
    check_same_result(pruned, oracle);
    // d16 t1 p1 at micro-batch 2 without recomputation: FSDP over all 16 ranks runs out of
    // memory (a 111.6 GB peak; `trainsim run` with parallel.fsdp.shard_size 16) and so does HSDP
    // over a node's 8 (116.7 GB): the pruned search starts HSDP at selective, one screen fewer.
    CHECK(pruned.screened < oracle.screened);
  }
}
