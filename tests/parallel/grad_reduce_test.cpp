// parallel.grad_reduce (sim/parallel/pass_data.cpp): PyTorch DDP's buckets overlapping the
// backward, or Megatron-LM's local DDP of 2021 (megatron/training.py train_step,
// megatron/model/distributed.py allreduce_gradients), which reduces each model chunk's gradients
// in one flattened buffer once the schedule returned.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "../support/adam_layers.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/summary.hpp"
#include "sim/report/time_breakdown.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using parallel::OpKind;
using scenario::GradReduce;

namespace {

constexpr std::int64_t kParams = kAdamLayerParams;

// One layer of 250,000,000 parameters (one tensor), 1 GFLOP per sample, fp16 with Adam, four
// micro-batches of one sample over data 2 on free links, on a 1 TFLOP/s device with 1 TB/s of
// memory bandwidth (launches free).
scenario::Scenario one_layer(GradReduce g) {
  auto s = adam_layers(scenario::AccumulateGrads::fused, 2);
  s.parallel.grad_reduce = g;
  return s;
}

// The interleaved schedule of tests/parallel/pipeline_sync_test.cpp (2 stages x 2 virtual
// stages, one layer of 1 GFLOP per chunk: tf = 1 ms, tb = 2 ms; 1 MB outputs over a 1 GB/s
// link: d = 1 ms; four micro-batches; synchronous exchanges), fp32 SGD, each layer now of
// 250,000,000 parameters (1 GB of fp32 gradients per chunk) over data 2, with 1 TB/s of memory
// bandwidth.
scenario::Scenario interleaved(GradReduce g) {
  std::vector<models::Layer> ls;
  for (int i = 0; i < 4; ++i)
    ls.push_back(plain_layer("l" + std::to_string(i), kParams, 0, 1'000'000, 1e9));
  hw::DeviceSpec d = ideal_device(1LL << 40);
  d.memory_bandwidth = core::Bandwidth{1e12};
  scenario::TrainingSpec t;
  t.precision = scenario::Precision::fp32;
  t.optimizer = scenario::Optimizer::sgd;
  t.micro_batch = 1;
  t.global_batch = 8;
  t.gradient_accumulation = 4;
  scenario::ParallelSpec p;
  p.pipeline = 2;
  p.data = 2;
  p.schedule = scenario::Schedule::interleaved;
  p.virtual_stages = 2;
  p.p2p = scenario::P2pMode::sync;
  p.grad_reduce = g;
  auto s = make_scenario(chain_model(ls), d, t, p);
  const hw::LinkSpec link{"test", core::Bandwidth{1e9}, core::Duration{0}, ""};
  s.cluster.intra_node = link;
  s.cluster.inter_node = link;
  return s;
}

// one_layer over a 1 GB/s link: the reduction takes time.
scenario::Scenario slow_layer(GradReduce g, int zero = 0) {
  auto s = one_layer(g);
  s.parallel.zero = zero;
  const hw::LinkSpec link{"test", core::Bandwidth{1e9}, core::Duration{0}, ""};
  s.cluster.intra_node = link;
  s.cluster.inter_node = link;
  return s;
}

double ms(core::TimePoint t) { return core::to_seconds(t) * 1e3; }
double ms(core::Duration t) { return core::to_seconds(t) * 1e3; }

bool data_reduction(const parallel::Op& op) {
  return op.kind == OpKind::all_reduce && op.purpose == parallel::CommPurpose::data;
}

// Local DDP's flatten and copy back: optimizer-phase work of the step's last micro-batch (the
// optimizer step's own ops are of no micro-batch).
bool ddp_copy(const parallel::Op& op) {
  return op.kind == OpKind::optimizer && op.microbatch >= 0;
}

core::Duration part(const report::TimeBreakdown& b, const std::string& kind) {
  for (const auto& p : b.parts)
    if (p.kind == kind) return p.time;
  return {};
}

}  // namespace

TEST_CASE("after_backward flattens, scales, all-reduces and copies back each chunk's gradients",
          "[parallel][grad_reduce]") {
  const auto overlapped = parallel::lower(one_layer(GradReduce::overlapped));
  const auto after = parallel::lower(one_layer(GradReduce::after_backward));
  const auto& ops = after.programs[0].ops;
  std::vector<std::size_t> reduces, copies;
  std::size_t last_backward = 0, optimizer = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (data_reduction(ops[i])) reduces.push_back(i);
    if (ops[i].kind == OpKind::backward && ops[i].work.flops > 0) last_backward = i;
    if (ddp_copy(ops[i])) copies.push_back(i);
    if (ops[i].kind == OpKind::optimizer && ops[i].microbatch < 0) optimizer = i;
  }
  // One all-reduce of the chunk's 2 x 250,000,000 bytes of fp16 gradients.
  REQUIRE(reduces.size() == 1);
  CHECK(ops[reduces[0]].comm.bytes.value == 2 * kParams);
  // Flatten and scale: 2 kernels reading and writing 500 MB each (2 GB); the copy back: one
  // copy_ for the one tensor, reading and writing 500 MB (1 GB).
  REQUIRE(copies.size() == 2);
  CHECK(ops[copies[0]].work.bytes.value == 8 * kParams);
  CHECK(ops[copies[0]].work.launches == 2);
  CHECK(ops[copies[1]].work.bytes.value == 4 * kParams);
  CHECK(ops[copies[1]].work.launches == 1);
  const auto r = exec::play(after);
  const auto& d = r.devices[0];
  CHECK(d.start[copies[0]] >= d.finish[last_backward]);
  CHECK(d.start[reduces[0]] == d.finish[copies[0]]);
  CHECK(d.start[copies[1]] >= d.finish[reduces[0]]);
  CHECK(d.start[optimizer] >= d.finish[copies[1]]);
  // The link is free, so the all-reduce costs nothing either way: the step is longer by the
  // copies alone, 2 GB + 1 GB at 1 TB/s = 3 ms.
  CHECK(ms(r.step_time) - ms(exec::play(overlapped).step_time) == Approx(3.0).epsilon(1e-6));
}

TEST_CASE("after_backward's flatten and copy back count as optimizer-phase work, outside the "
          "bubble", "[parallel][grad_reduce]") {
  // The one-layer step over a 1 GB/s link: the all-reduce now takes time, during which the
  // compute stream waits. Megatron-LM's train_step runs allreduce_gradients after the schedule
  // (forward_backward_func) returned, timed apart from 'backward-compute'.
  auto slow = [](GradReduce g) {
    auto s = one_layer(g);
    const hw::LinkSpec link{"test", core::Bandwidth{1e9}, core::Duration{0}, ""};
    s.cluster.intra_node = link;
    s.cluster.inter_node = link;
    return s;
  };
  const auto s_after = slow(GradReduce::after_backward), s_over = slow(GradReduce::overlapped);
  const auto after = parallel::lower(s_after), over = parallel::lower(s_over);
  const auto ra = exec::play(after), ro = exec::play(over);
  const auto ba = report::time_breakdown(after, ra), bo = report::time_breakdown(over, ro);
  // The backward kernels are the same four; the flatten (2 GB at 1 TB/s) and the copy back
  // (1 GB) add 3 ms to the optimizer phase.
  CHECK(part(ba, "compute.backward") == part(bo, "compute.backward"));
  CHECK(ms(part(ba, "compute.optimizer")) - ms(part(bo, "compute.optimizer")) ==
        Approx(3.0).epsilon(1e-6));
  // The compute stream idles through the all-reduce, which the breakdown counts as exposed
  // data-parallel communication: its whole span, nothing else running then.
  const auto& ops = after.programs[0].ops;
  core::Duration reduce{};
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (data_reduction(ops[i])) reduce += ra.devices[0].finish[i] - ra.devices[0].start[i];
  CHECK(reduce.ns > 0);
  CHECK(part(ba, "exposed_comm.data_parallel") == reduce);
  CHECK(part(ba, "idle").ns == 0);
  // One stage whose forwards and backwards run back to back: no bubble. Were the copies backward
  // work, the forward/backward phase would run to the copy back and count the all-reduce's wait
  // as bubble.
  CHECK(report::summarize(s_after, after, ra, false).bubble_fraction == 0);
}

TEST_CASE("after_backward reduces an interleaved stage's chunks in model order once its last "
          "backward and exchange ended", "[parallel][grad_reduce]") {
  const auto plan = parallel::lower(interleaved(GradReduce::after_backward));
  const auto r = exec::play(plan);
  // Stage 0's last backward ends at 38 ms (pipeline_sync_test.cpp, by hand), stage 1's at 35;
  // stage 1's last exchange sends that backward's gradient to stage 0 (1 ms), so it is held to
  // 36 ms.
  const double ends[2] = {38, 36};
  for (int stage = 0; stage < 2; ++stage) {
    const auto& P = plan.programs[stage];
    const auto& d = r.devices[stage];
    double last_compute = 0;
    std::vector<std::size_t> reduces, copies;
    for (std::size_t i = 0; i < P.ops.size(); ++i) {
      if (data_reduction(P.ops[i])) reduces.push_back(i);
      if (P.ops[i].kind == OpKind::backward && P.ops[i].work.flops > 0)
        last_compute = std::max(last_compute, ms(d.finish[i]));
      if (ddp_copy(P.ops[i])) copies.push_back(i);
    }
    CHECK(last_compute == Approx(stage == 0 ? 38 : 35).epsilon(1e-9));
    // One all-reduce per chunk (1 GB of fp32 gradients each), chunk 0 first (Megatron's
    // `for model_module in model`).
    REQUIRE(reduces.size() == 2);
    REQUIRE(copies.size() == 4);
    CHECK(P.ops[reduces[0]].chunk == 0);
    CHECK(P.ops[reduces[1]].chunk == 1);
    CHECK(P.ops[reduces[0]].comm.bytes.value == 4 * kParams);
    // Flatten and scale of chunk 0: 4 GB at 1 TB/s, 4 ms after the stage's last exchange.
    CHECK(ms(d.start[copies[0]]) == Approx(ends[stage]).epsilon(1e-9));
    CHECK(ms(d.start[reduces[0]]) == Approx(ends[stage] + 4).epsilon(1e-9));
    // Chunk 1 flattens only once chunk 0's gradients were copied back (2 ms after its
    // all-reduce), on the one compute stream.
    CHECK(ms(d.start[copies[1]]) == Approx(ms(d.finish[reduces[0]])).epsilon(1e-9));
    CHECK(ms(d.start[copies[2]]) == Approx(ms(d.finish[reduces[0]]) + 2).epsilon(1e-9));
    CHECK(d.start[reduces[1]] >= d.finish[copies[2]]);
  }
  // Fast play (lower's compress, steady-state skipping) plays the same step.
  CHECK(exec::play(parallel::lower(interleaved(GradReduce::after_backward), {.compress = true}))
            .step_time == r.step_time);
  // Overlapped buckets: a stage's first reduction starts before its last backward ends.
  const auto overlapped = parallel::lower(interleaved(GradReduce::overlapped));
  const auto o = exec::play(overlapped);
  const auto& P = overlapped.programs[0];
  double first_reduce = 1e300, last_backward = 0;
  for (std::size_t i = 0; i < P.ops.size(); ++i) {
    if (data_reduction(P.ops[i])) first_reduce = std::min(first_reduce, ms(o.devices[0].start[i]));
    if (P.ops[i].kind == OpKind::backward)
      last_backward = std::max(last_backward, ms(o.devices[0].finish[i]));
  }
  CHECK(first_reduce < last_backward);
}

TEST_CASE("after_backward_in_place reduces the gradient buffer in place once the backward ended",
          "[parallel][grad_reduce]") {
  // Megatron-Core's DDP without --overlap-grad-reduce: one collective over the chunk's whole
  // buffer after the schedule, no flatten and no copy back.
  const auto in_place = parallel::lower(slow_layer(GradReduce::after_backward_in_place));
  const auto& ops = in_place.programs[0].ops;
  std::vector<std::size_t> reduces;
  std::size_t last_backward = 0, optimizer = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (data_reduction(ops[i])) reduces.push_back(i);
    if (ops[i].kind == OpKind::backward && ops[i].work.flops > 0) last_backward = i;
    if (ops[i].kind == OpKind::optimizer && ops[i].microbatch < 0) optimizer = i;
    CHECK_FALSE(ddp_copy(ops[i]));
  }
  REQUIRE(reduces.size() == 1);
  CHECK(ops[reduces[0]].comm.bytes.value == 2 * kParams);
  CHECK(ops[reduces[0]].microbatch == 3);  // the step's last micro-batch
  const auto r = exec::play(in_place);
  CHECK(r.devices[0].start[reduces[0]] >= r.devices[0].finish[last_backward]);
  CHECK(r.devices[0].start[optimizer] >= r.devices[0].finish[reduces[0]]);
  // The same all-reduce as local DDP's without its flatten (2 GB) and copy back (1 GB) at
  // 1 TB/s: 3 ms shorter. With one layer PyTorch DDP's one bucket fills at the same moment.
  CHECK(ms(exec::play(parallel::lower(slow_layer(GradReduce::after_backward))).step_time) - ms(r.step_time) ==
        Approx(3.0).epsilon(1e-6));
  CHECK(exec::play(parallel::lower(slow_layer(GradReduce::overlapped))).step_time == r.step_time);
  // Under the distributed optimizer (ZeRO-1) the buffer is reduce-scattered instead, once.
  const auto zero1 = parallel::lower(slow_layer(GradReduce::after_backward_in_place, 1));
  std::int64_t scatters = 0;
  for (const auto& op : zero1.programs[0].ops) {
    CHECK_FALSE(data_reduction(op));
    if (op.kind == OpKind::reduce_scatter) {
      ++scatters;
      CHECK(op.comm.bytes.value == 2 * kParams);
    }
  }
  CHECK(scatters == 1);
}

TEST_CASE("after_backward_in_place reduces an interleaved stage's chunks in model order after its "
          "last exchange", "[parallel][grad_reduce]") {
  const auto plan = parallel::lower(interleaved(GradReduce::after_backward_in_place));
  const auto r = exec::play(plan);
  // As for after_backward: the stages' schedules end at 38 and 36 ms (stage 1's last synchronous
  // exchange holds it past its last backward at 35 ms).
  const double ends[2] = {38, 36};
  for (int stage = 0; stage < 2; ++stage) {
    const auto& P = plan.programs[stage];
    const auto& d = r.devices[stage];
    std::vector<std::size_t> reduces;
    for (std::size_t i = 0; i < P.ops.size(); ++i)
      if (data_reduction(P.ops[i])) reduces.push_back(i);
    REQUIRE(reduces.size() == 2);
    CHECK(P.ops[reduces[0]].chunk == 0);
    CHECK(P.ops[reduces[1]].chunk == 1);
    CHECK(P.ops[reduces[0]].comm.bytes.value == 4 * kParams);
    CHECK(ms(d.start[reduces[0]]) == Approx(ends[stage]).epsilon(1e-9));
    CHECK(d.start[reduces[1]] == d.finish[reduces[0]]);
  }
  CHECK(exec::play(parallel::lower(interleaved(GradReduce::after_backward_in_place), {.compress = true}))
            .step_time == r.step_time);
}

TEST_CASE("grad_reduce is read and refused where Megatron's local DDP does not apply",
          "[parallel][grad_reduce]") {
  const std::string base =
      "model: gpt2\ndevice: a100-80gb\ntraining: {micro_batch: 1, global_batch: 8, seq_len: 128}\n";
  const auto load = [](const std::string& text) {
    return scenario::load_scenario_tree(YAML::Load(text), "g.yaml");
  };
  CHECK(load(base + "parallel: {data: 8}\n").parallel.grad_reduce == GradReduce::overlapped);
  CHECK(load(base + "parallel: {data: 8, grad_reduce: after_backward}\n").parallel.grad_reduce ==
        GradReduce::after_backward);
  CHECK_THROWS_WITH(load(base + "parallel: {data: 8, grad_reduce: later}\n"),
                    Catch::Contains("after_backward"));
  CHECK_THROWS_WITH(load(base + "parallel: {data: 8, zero: 1, grad_reduce: after_backward}\n"),
                    Catch::Contains("ZeRO stage 1"));
  CHECK_THROWS_WITH(
      load(base + "parallel: {data: 8, fsdp: true, grad_reduce: after_backward}\n"),
      Catch::Contains("fsdp"));
  CHECK(load(base + "parallel: {data: 8, zero: 1, grad_reduce: after_backward_in_place}\n").parallel.grad_reduce ==
        GradReduce::after_backward_in_place);
  CHECK_THROWS_WITH(load(base + "parallel: {data: 8, zero: 3, grad_reduce: after_backward_in_place}\n"),
                    Catch::Contains("ZeRO stage 3"));
}
