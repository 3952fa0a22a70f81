// Expert parallelism (pass_expert.cpp) against hand counts on a small mixture-of-experts model:
// 1/E of the routed experts' parameters per device, the all-to-all bytes of the routed tokens,
// the expert-data-parallel gradient reduction, and the imbalance factor.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "../support/fixtures.hpp"
#include "../support/plan_bytes.hpp"
#include "models/builders.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/summary.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

scenario::Scenario moe_scenario(std::int64_t data, std::int64_t expert, double imbalance = 1) {
  scenario::TrainingSpec t = tiny_moe_training();
  t.expert_imbalance = imbalance;
  scenario::ParallelSpec p;
  p.data = data;
  p.expert = expert;
  return make_scenario(tiny_moe(), ideal_device(1LL << 40), t, p);
}

}  // namespace

TEST_CASE("expert parallelism holds 1/E of the routed experts per device", "[parallel][expert]") {
  const auto one = parallel::lower(moe_scenario(4, 1));
  const auto four = parallel::lower(moe_scenario(4, 4));
  const std::int64_t all = tiny_moe().parameters();
  CHECK(one.programs[0].parameters == all);
  // 2 MoE layers x 98,304 routed parameters, of which a device keeps 1/4: 2 x 73,728 fewer.
  CHECK(four.programs[0].parameters == all - 2 * 73'728);
  // Model states follow: 16 bytes per parameter for mixed-precision AdamW.
  CHECK(four.programs[0].model_states.total().value == 16 * (all - 2 * 73'728));
}

TEST_CASE("each MoE layer's tokens travel by all-to-all, four per micro-batch", "[parallel][expert]") {
  const auto plan = parallel::lower(moe_scenario(4, 4));
  const auto a2a = ops_of(plan, parallel::OpKind::all_to_all);
  // 2 MoE layers x 2 micro-batches x (dispatch + combine) x (forward + backward) = 16.
  REQUIRE(a2a.size() == 16);
  for (const auto* op : a2a) {
    // micro-batch 2 x 32 tokens x top-2 x h 64 x 2 bytes = 16,384 bytes, over the 4 expert ranks.
    CHECK(op->comm.bytes.value == 16'384);
    CHECK(op->comm.ranks == 4);
    CHECK(op->purpose == parallel::CommPurpose::all_to_all);
    CHECK(op->stream == parallel::StreamKind::comm);
  }
  // No all-to-all without expert parallelism.
  CHECK(ops_of(parallel::lower(moe_scenario(4, 1)), parallel::OpKind::all_to_all).empty());
}

TEST_CASE("routed experts' gradients reduce over data / E ranks", "[parallel][expert]") {
  const auto plan = parallel::lower(moe_scenario(8, 4));
  std::int64_t expert_bytes = 0, dense_bytes = 0;
  for (const auto* op : ops_of(plan, parallel::OpKind::all_reduce)) {
    if (op->comm.ranks == 2)
      expert_bytes += op->comm.bytes.value;
    else if (op->comm.ranks == 8)
      dense_bytes += op->comm.bytes.value;
  }
  // Each MoE layer: 98,304 / 4 = 24,576 parameters x 2 bytes (bf16 gradients) = 49,152 bytes,
  // over 8 / 4 = 2 ranks; 2 layers.
  CHECK(expert_bytes == 2 * 49'152);
  // Everything else over all 8 data ranks: the rest of the device's parameters.
  const std::int64_t all = tiny_moe().parameters();
  CHECK(dense_bytes == 2 * (all - 2 * 98'304));
}

TEST_CASE("without expert parallelism every gradient reduces over all data ranks", "[parallel][expert]") {
  // Expert degree 1: the routed experts' gradients go in the data pass's buckets with the rest:
  // every parameter's bf16 gradient (2 bytes) over the 4 data ranks, once per step.
  const auto plan = parallel::lower(moe_scenario(4, 1));
  std::int64_t bytes = 0;
  for (const auto* op : ops_of(plan, parallel::OpKind::all_reduce)) {
    CHECK(op->comm.ranks == 4);
    bytes += op->comm.bytes.value;
  }
  CHECK(bytes == 2 * tiny_moe().parameters());
}

TEST_CASE("expert imbalance scales the busiest rank's routed work and all-to-all",
          "[parallel][expert]") {
  const auto even = parallel::lower(moe_scenario(4, 4, 1.0));
  const auto skew = parallel::lower(moe_scenario(4, 4, 1.5));
  // Routed FLOPs of one MoE forward: top-2 x 6 x 32 x 64 x 128 = 3,145,728 per sample; the
  // busiest rank does 0.5 x that more, x 2 samples per micro-batch = 3,145,728 more.
  auto moe_forward = [](const parallel::Plan& p) {
    // The MoE forward is the compute op right after its dispatch.
    for (std::size_t k = 1; k < p.programs[0].ops.size(); ++k)
      if (p.programs[0].ops[k - 1].kind == parallel::OpKind::all_to_all &&
          p.programs[0].ops[k].kind == parallel::OpKind::forward)
        return p.programs[0].ops[k].work.flops;
    return 0.0;
  };
  CHECK(moe_forward(skew) - moe_forward(even) == Approx(3'145'728.0));
  CHECK(ops_of(skew, parallel::OpKind::all_to_all)[0]->comm.bytes.value == 24'576);  // 1.5 x
}

TEST_CASE("a step with expert parallelism reports all_to_all time", "[parallel][expert]") {
  auto s = moe_scenario(4, 4);
  s.cluster.intra_node.bandwidth = core::Bandwidth{1e9};  // 1 GB/s: visible all-to-all time
  const auto plan = parallel::lower(s);
  const auto tl = exec::play(plan);
  const auto r = report::summarize(s, plan, tl, false);
  bool found = false;
  for (const auto& c : r.comm)
    if (c.kind == "all_to_all") {
      found = true;
      // 8 all-to-alls per micro-batch x 2 micro-batches x 3/4 x 16,384 B / 1 GB/s = 196.608 us.
      CHECK(c.time_s == Approx(16 * 0.75 * 16'384 / 1e9).epsilon(1e-6));
    }
  CHECK(found);
}

namespace {

scenario::Scenario capped(double factor, double imbalance) {
  auto s = moe_scenario(4, 4, imbalance);
  for (auto v : s.model.order)
    if (s.model.graph[v].experts > 1) s.model.graph[v].capacity_factor = factor;
  return s;
}

double moe_forward_flops(const parallel::Plan& p) {
  const auto& ops = p.programs[0].ops;
  for (std::size_t k = 1; k < ops.size(); ++k)
    if (ops[k - 1].kind == parallel::OpKind::all_to_all && ops[k].kind == parallel::OpKind::forward)
      return ops[k].work.flops;
  return 0.0;
}

}  // namespace

TEST_CASE("a capacity factor pads every expert's buffer to its capacity", "[parallel][expert]") {
  const auto even = parallel::lower(moe_scenario(4, 4, 1.0));
  // A micro-batch on a rank: T = 2 samples x 32 tokens = 64 tokens, top-2: 128 routed, 32 per
  // expert when balanced. Factor 1.1: capacity = ceil(1.1 x 128 / 4) = ceil(35.2) = 36 tokens per
  // expert, 4 x 36 = 144 routed tokens: 144 / 128 = 1.125 times the balanced work.
  const auto pad = parallel::lower(capped(1.1, 1.0));
  // Routed FLOPs per micro-batch: 3,145,728 x 2 samples = 6,291,456; 0.125 x that = 786,432 more.
  CHECK(moe_forward_flops(pad) - moe_forward_flops(even) == Approx(786'432.0));
  // All-to-all: 144 tokens x h 64 x 2 bytes = 18,432 bytes.
  for (const auto* op : ops_of(pad, parallel::OpKind::all_to_all)) CHECK(op->comm.bytes.value == 18'432);
  // The padded buffers are saved for the backward: the peak rises.
  const auto peak = [](const parallel::Plan& p) {
    const auto tl = exec::play(p);
    return tl.devices[0].peak.value;
  };
  CHECK(peak(pad) > peak(even));
}

TEST_CASE("the capacity caps the busiest expert whatever the imbalance", "[parallel][expert]") {
  const auto even = parallel::lower(moe_scenario(4, 4, 1.0));
  // Factor 0.5: capacity = ceil(0.5 x 128 / 4) = 16 tokens per expert, 64 routed tokens of 128:
  // half the balanced work and bytes; an imbalance of 1.5 past it is dropped.
  const auto drop = parallel::lower(capped(0.5, 1.5));
  CHECK(moe_forward_flops(even) - moe_forward_flops(drop) == Approx(3'145'728.0));
  // 64 tokens x 64 x 2 bytes.
  CHECK(ops_of(drop, parallel::OpKind::all_to_all)[0]->comm.bytes.value == 8'192);
  // Factor 1.0 on an even split: capacity 32 = the balanced share, nothing changes.
  const auto exact = parallel::lower(capped(1.0, 1.5));
  CHECK(moe_forward_flops(exact) == Approx(moe_forward_flops(even)));
  CHECK(ops_of(exact, parallel::OpKind::all_to_all)[0]->comm.bytes.value == 16'384);
}

TEST_CASE("capacity_factor next to a preset reaches every MoE layer, and only those", "[parallel][expert]") {
  const auto s = scenario::load_scenario_tree(
      YAML::Load("model: {preset: mixtral-8x7b, layers: 2, capacity_factor: 1.25}\n"
                 "device: h100-80gb\n"
                 "training: {micro_batch: 1, seq_len: 128}\n"),
      "capacity.yaml");
  int moe = 0;
  for (auto v : s.model.order) {
    const auto& l = s.model.graph[v];
    CHECK(l.capacity_factor == (l.experts > 1 ? 1.25 : 0.0));
    moe += l.experts > 1;
  }
  CHECK(moe == 2);  // one MoE MLP per block
}
