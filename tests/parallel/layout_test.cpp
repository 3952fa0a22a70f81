// Lowering of the layout keys: cluster.placement decides which groups cross nodes and how many
// members share a node; parallel.stage_devices gives stages their own device; parallel.allreduce
// picks the data-parallel all-reduce algorithm.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../support/fixtures.hpp"
#include "sim/cost/cost.hpp"
#include "sim/cost/nccl.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/summary.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;

namespace {

const std::string kFile = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/korthikanti.yaml";

// tensor 2 x pipeline 2 x data 4 = 16 devices on two 8-GPU nodes.
scenario::Scenario layout(std::vector<std::string> extra = {}) {
  std::vector<std::string> sets = {"parallel={tensor: 2, pipeline: 2, data: 4}",
                                   "cluster={nodes: 2, gpus_per_node: 8}"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return scenario::load_scenario(kFile, sets);
}

struct Spans {
  bool tp_inter = false, dp_inter = false, pp_inter = false;
  int tp_per_node = 0, dp_per_node = 0;
};

// Reads the spans back from the lowered ops: a compute op's tensor-parallel collectives, the
// data-parallel all-reduces and stage 1's received activations.
Spans spans_of(const parallel::Plan& plan) {
  Spans sp;
  bool tp = false, dp = false, pp = false;
  for (const auto& P : plan.programs)
    for (const auto& op : P.ops) {
      if (op.tp_collectives > 0 && !tp) {
        tp = true;
        sp.tp_inter = op.comm.inter_node;
        sp.tp_per_node = op.comm.ranks_per_node;
      }
      if (op.kind == parallel::OpKind::all_reduce && !dp) {
        dp = true;
        sp.dp_inter = op.comm.inter_node;
        sp.dp_per_node = op.comm.ranks_per_node;
      }
      if (op.kind == parallel::OpKind::p2p && P.stage == 1 && !pp) {
        pp = true;
        sp.pp_inter = op.comm.inter_node;
      }
    }
  REQUIRE(tp);
  REQUIRE(dp);
  REQUIRE(pp);
  return sp;
}

}  // namespace

TEST_CASE("the default placement keeps tensor groups and the pipeline inside a node", "[parallel][placement]") {
  // Strides: tensor 1, pipeline 2, data 4. Data: 4 x 4 = 16 > 8 crosses, 8 / 4 = 2 per node.
  const auto sp = spans_of(parallel::lower(layout()));
  CHECK_FALSE(sp.tp_inter);
  CHECK(sp.tp_per_node == 2);
  CHECK(sp.dp_inter);
  CHECK(sp.dp_per_node == 2);
  CHECK_FALSE(sp.pp_inter);
}

TEST_CASE("an explicit default placement lowers exactly as no placement", "[parallel][placement]") {
  const auto a = layout();
  const auto b = layout({"cluster.placement=[tensor, pipeline, data]"});
  const auto ta = exec::play(parallel::lower(a)), tb = exec::play(parallel::lower(b));
  CHECK(ta.step_time.ns == tb.step_time.ns);
  CHECK(ta.devices[0].peak == tb.devices[0].peak);
}

TEST_CASE("placement data first puts the data group in a node and splits the pipeline", "[parallel][placement]") {
  // Strides: data 1, tensor 4, pipeline 8: stage 1's rank 0 is rank 8, on the second node.
  const auto sp = spans_of(parallel::lower(layout({"cluster.placement=[data, tensor, pipeline]"})));
  CHECK_FALSE(sp.dp_inter);
  CHECK(sp.dp_per_node == 4);
  CHECK_FALSE(sp.tp_inter);  // ranks 0 and 4: 4 x 2 = 8 fits one node
  CHECK(sp.tp_per_node == 2);
  CHECK(sp.pp_inter);
}

TEST_CASE("placement tensor last makes the tensor group span nodes one member each", "[parallel][placement]") {
  // Strides: pipeline 1, data 2, tensor 8.
  auto s = layout({"cluster.placement=[pipeline, data, tensor]"});
  const auto plan = parallel::lower(s);
  const auto sp = spans_of(plan);
  CHECK(sp.tp_inter);
  CHECK(sp.tp_per_node == 1);
  CHECK_FALSE(sp.dp_inter);
  CHECK(sp.dp_per_node == 4);
  CHECK_FALSE(sp.pp_inter);
  // Tensor collectives over the network are slower than over NVLink. The scenario's layers are
  // small enough for the host's kernel dispatch to hide either (docs/devices.md, "Host
  // dispatch"), so both are timed without it to compare the collectives themselves.
  s.device.host_dispatch = core::Duration{0};
  auto nvlink = layout();
  nvlink.device.host_dispatch = core::Duration{0};
  const auto fast = exec::play(parallel::lower(nvlink));
  CHECK(exec::play(parallel::lower(s)).step_time.ns > fast.step_time.ns);
}

TEST_CASE("stage_devices gives a pipeline stage its own device", "[parallel][stage_devices]") {
  const auto s = layout({"parallel.stage_devices=[{stages: [1], device: {preset: h100-80gb, memory: 900GiB}}]"});
  const auto plan = parallel::lower(s);
  REQUIRE(plan.programs.size() == 2);
  const auto& d0 = plan.programs[0].device;
  const auto& d1 = plan.programs[1].device;
  CHECK(d0.name == "a100-80gb");
  CHECK(d1.name == "h100-80gb");
  CHECK(plan.programs[0].persistent[hw::MemCategory::reserved] == hw::find_device("a100-80gb")->reserved);
  CHECK(plan.programs[1].persistent[hw::MemCategory::reserved] == hw::find_device("h100-80gb")->reserved);
  const auto tl = exec::play(plan);
  CHECK(tl.devices[0].capacity == core::Bytes{1000 * core::kGiB});
  CHECK(tl.devices[1].capacity == core::Bytes{900 * core::kGiB});
  const auto r = report::summarize(s, plan, tl, false);
  CHECK(r.devices[0].device == "a100-80gb");
  CHECK(r.devices[1].device == "h100-80gb");
  // MFU divides by the peak of every device: 8 x A100 + 8 x H100.
  const double capacity = (8 * d0.peak_16bit.per_s + 8 * d1.peak_16bit.per_s) * r.step_time_s;
  CHECK(r.mfu == Approx(plan.model_flops / capacity).epsilon(1e-12));
}

TEST_CASE("without stage_devices MFU is unchanged: devices x peak", "[parallel][stage_devices]") {
  const auto s = layout();
  const auto plan = parallel::lower(s);
  const auto r = report::summarize(s, plan, exec::play(plan), false);
  const double capacity = static_cast<double>(plan.devices_total) * s.device.peak_16bit.per_s * r.step_time_s;
  CHECK(r.mfu == plan.model_flops / capacity);  // bit-for-bit
  for (const auto& d : r.devices) CHECK(d.device == "a100-80gb");
}

TEST_CASE("allreduce ring or tree forces NCCL's algorithm for data-parallel all-reduces, auto lets it choose",
          "[parallel][allreduce]") {
  const auto best = parallel::lower(layout());
  const auto ring = parallel::lower(layout({"parallel.allreduce=ring"}));
  const auto tree = parallel::lower(layout({"parallel.allreduce=tree"}));
  CHECK_FALSE(best.data_allreduce.has_value());
  CHECK(ring.data_allreduce == cost::CollectiveAlgo::ring);
  CHECK(tree.data_allreduce == cost::CollectiveAlgo::tree);
  const auto& P = tree.programs[0];
  bool seen = false;
  for (const auto& op : P.ops) {
    if (op.kind != parallel::OpKind::all_reduce) continue;
    seen = true;
    // Inside a node NCCL's model prices it; a group across nodes keeps the alpha-beta formulas
    // over the spanning link (docs/collectives.md).
    const hw::LinkSpec link = cost::spanning_link(tree.intra_node, tree.inter_node, op.comm.ranks_per_node);
    auto priced = [&](cost::CollectiveAlgo only) {
      if (op.comm.inter_node) return cost::all_reduce_time(op.comm.bytes, op.comm.ranks, link, only).ns;
      return cost::nccl_best(cost::NcclColl::all_reduce, op.comm.bytes, {op.comm.ranks, 1}, tree.intra_node,
                             tree.intra_node, only).time.ns;
    };
    CHECK(exec::op_duration(tree, P, op).ns == priced(cost::CollectiveAlgo::tree));
    CHECK(exec::op_duration(ring, ring.programs[0], op).ns == priced(cost::CollectiveAlgo::ring));
    const auto chosen = exec::op_duration(best, best.programs[0], op).ns;
    if (op.comm.inter_node) CHECK(chosen == priced(cost::CollectiveAlgo::ring));
    else CHECK(chosen == std::min(priced(cost::CollectiveAlgo::tree), priced(cost::CollectiveAlgo::ring)));
  }
  CHECK(seen);
}
