// `trainsim plan`'s node shape: from the scenario's cluster.gpus_per_node when written, else from
// --gpus-per-node (8 by default); tensor parallelism stays within a node and the links are the
// device's defaults for that shape.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/core/error.hpp"
#include "sim/sweep/plan.hpp"

using namespace trainsim;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;
// LLaMA-2 7B, bf16 + AdamW, on one A100-80GB, global batch 1 (no cluster mapping): 16 B x
// 6.74e9 parameters = 108 GB of model states, over the 80 GB device.
const std::string kOneGpu = kRoot + "/scenarios/single_gpu/03_model_state_oom.yaml";

sweep::PlanOptions options(std::int64_t gpus) {
  sweep::PlanOptions o;
  o.gpus = gpus;
  o.top = 3;
  o.jobs = 1;
  return o;
}

bool has_set(const sweep::Candidate& c, const std::string& s) {
  return std::find(c.sets.begin(), c.sets.end(), s) != c.sets.end();
}

}  // namespace

TEST_CASE("plan from a one-GPU scenario on 8 GPUs plans on 8-GPU nodes and finds tensor 8") {
  const auto base = sweep::BaseScenario::from_file(kOneGpu);
  const sweep::PlanResult r = sweep::plan(base, {}, options(8));
  CHECK(r.gpus_per_node == 8);
  CHECK(r.node_shape_source == sweep::NodeShapeSource::default_shape);
  CHECK(sweep::to_string(r.node_shape_source) == "default");
  // By hand: global batch 1 makes data 1, so tensor x pipeline = 8 with tensor a power of two
  // up to 8 and pipeline dividing the 32 blocks: t1 p8, t2 p4, t4 p2, t8 p1 (micro-batch 1,
  // no interleaving: one micro-batch is not a multiple of the pipeline). With one micro-batch a
  // pipeline never fills, so the three with p > 1 are pruned; t8 p1 keeps 108 / 8 = 13.5 GB of
  // model states per GPU and is simulated.
  CHECK(r.layouts == 4);
  CHECK(r.pruned == 3);
  REQUIRE(r.ranked.size() == 1);
  const auto& best = r.ranked[0];
  CHECK(best.layout.tensor == 8);
  CHECK(best.layout.pipeline == 1);
  CHECK(best.layout.data == 1);
  CHECK(best.summary.fits);
  CHECK(has_set(best, "cluster.gpus_per_node=8"));
  CHECK(has_set(best, "cluster.nodes=1"));
  // The layout is played on the A100's default fabric: NVLink 3 within the node, HDR
  // InfiniBand between nodes (as for a scenario without a cluster mapping).
  const scenario::Scenario s = base.load(best.sets);
  CHECK(s.cluster.intra_node.name == "nvlink3");
  CHECK(s.cluster.inter_node.name == "ib-hdr");
}

TEST_CASE("plan on fewer GPUs than a node holds plans on one node of them") {
  const auto base = sweep::BaseScenario::from_file(kOneGpu);
  const sweep::PlanResult r = sweep::plan(base, {}, options(2));
  CHECK(r.gpus_per_node == 2);
  // t1 p2 is pruned (one micro-batch); t2 p1 keeps 54 GB of states per GPU and fits, as
  // `diagnose` finds for tensor 2.
  CHECK(r.layouts == 2);
  REQUIRE(r.ranked.size() == 1);
  CHECK(r.ranked[0].layout.tensor == 2);
  CHECK(r.ranked[0].summary.fits);
}

TEST_CASE("one GPU per node (the option) rules tensor parallelism out, as plan did before") {
  const auto base = sweep::BaseScenario::from_file(kOneGpu);
  auto o = options(8);
  o.gpus_per_node = 1;
  o.gpus_per_node_given = true;
  const sweep::PlanResult r = sweep::plan(base, {}, o);
  CHECK(r.gpus_per_node == 1);
  CHECK(r.node_shape_source == sweep::NodeShapeSource::option);
  // Only t1 p8, pruned: its pipeline never fills. Nothing fits.
  CHECK(r.layouts == 1);
  CHECK(r.pruned == 1);
  CHECK(r.ranked.empty());
}

TEST_CASE("a scenario that writes cluster.gpus_per_node gives the node shape") {
  const auto base = sweep::BaseScenario::from_file(kOneGpu);
  const std::vector<std::string> sets{"cluster.gpus_per_node=4", "cluster.nodes=1",
                                      "parallel.tensor=4"};
  const sweep::PlanResult r = sweep::plan(base, sets, options(8));
  CHECK(r.gpus_per_node == 4);
  CHECK(r.node_shape_source == sweep::NodeShapeSource::scenario);
  // t1 p8, t2 p4, t4 p2: tensor 8 would leave the node; all three pipelines are pruned.
  CHECK(r.layouts == 3);
  CHECK(r.ranked.empty());

  SECTION("an option that contradicts it is refused, naming both") {
    auto o = options(8);
    o.gpus_per_node = 8;
    o.gpus_per_node_given = true;
    CHECK_THROWS_WITH(sweep::plan(base, sets, o),
                      Catch::Contains("cluster.gpus_per_node is 4") && Catch::Contains("--gpus-per-node"));
  }
  SECTION("an option that agrees with it is accepted") {
    auto o = options(8);
    o.gpus_per_node = 4;
    o.gpus_per_node_given = true;
    CHECK(sweep::plan(base, sets, o).gpus_per_node == 4);
  }
}

TEST_CASE("a GPU count that is not a multiple of the node shape is refused") {
  const auto base = sweep::BaseScenario::from_file(kOneGpu);
  CHECK_THROWS_WITH(sweep::plan(base, {}, options(12)),
                    Catch::Contains("multiple of the 8 GPUs per node (--gpus-per-node)"));
}
