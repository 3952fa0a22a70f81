// parallel.param_gather: overlapped (sim/parallel/pass_param_gather.cpp): Megatron-Core's
// --overlap-param-gather, ZeRO-1's all-gather of the updated weights per gradient bucket before
// the step's first forward instead of one all-gather after the optimizer step.
#include <catch2/catch.hpp>

#include "../support/adam_layers.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using parallel::OpKind;
using scenario::ParamGather;

namespace {

// Four layers of 250,000,000 parameters (500 MB of fp16 weights and gradients each), 1 GFLOP per
// sample (1 ms per forward), four micro-batches over data 2 with ZeRO-1 and 1 GB buckets (two
// layers' gradients), on a 1 GB/s link without latency.
scenario::Scenario four_layers(ParamGather g) {
  auto s = adam_layers(scenario::AccumulateGrads::fused, 2, 1, 4);
  s.parallel.param_gather = g;
  s.parallel.bucket_size = core::Bytes{1'000'000'000};
  const hw::LinkSpec link{"test", core::Bandwidth{1e9}, core::Duration{0}, ""};
  s.cluster.intra_node = link;
  s.cluster.inter_node = link;
  return s;
}

bool weight_gather(const parallel::Op& op) {
  return op.kind == OpKind::all_gather && op.purpose == parallel::CommPurpose::zero;
}

double ms(core::Duration t) { return core::to_seconds(t) * 1e3; }

}  // namespace

TEST_CASE("overlapped param gather: one all-gather per bucket before the first forward, none "
          "after the step", "[parallel][param_gather]") {
  const auto after = parallel::lower(four_layers(ParamGather::after_step));
  const auto over = parallel::lower(four_layers(ParamGather::overlapped));
  const auto& a = after.programs[0].ops;
  const auto& o = over.programs[0].ops;
  std::vector<std::size_t> ga, go;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (weight_gather(a[i])) ga.push_back(i);
  for (std::size_t i = 0; i < o.size(); ++i)
    if (weight_gather(o[i])) go.push_back(i);
  // After the step: the stage's 4 x 500 MB of weights in one all-gather. Overlapped: the same
  // 2 GB in two buckets of two layers each, the first before layer 0, the second before layer 2.
  REQUIRE(ga.size() == 1);
  CHECK(a[ga[0]].comm.bytes.value == 2'000'000'000);
  REQUIRE(go.size() == 2);
  CHECK(o[go[0]].comm.bytes.value == 1'000'000'000);
  CHECK(o[go[1]].comm.bytes.value == 1'000'000'000);
  CHECK(o[go[0]].layer == 0);
  CHECK(o[go[1]].layer == 2);

  const auto ra = exec::play(after), ro = exec::play(over);
  const auto& d = ro.devices[0];
  // Each gather moves (2 - 1) / 2 of 1 GB over 1 GB/s: 500 ms and the collective's fixed
  // latency (NCCL's base term, the same in the single gather after the step, which moves 1 s
  // worth); the second is dispatched when the first forward waits for the first (no op before
  // it), so both run back to back.
  const double fixed = ms(ra.devices[0].finish[ga[0]] - ra.devices[0].start[ga[0]]) - 1000.0;
  CHECK(fixed >= 0.0);
  CHECK(fixed < 0.1);
  CHECK(ms(d.finish[go[0]] - d.start[go[0]]) == Approx(500.0 + fixed).epsilon(1e-9));
  CHECK(d.start[go[1]] == d.finish[go[0]]);
  // The first micro-batch's forward of layers 0 and 1 waits for the first gather, of layers 2
  // and 3 for the second; the second micro-batch's forward waits for none.
  std::vector<std::size_t> fwd0, fwd1;
  for (std::size_t i = 0; i < o.size(); ++i)
    if (o[i].kind == OpKind::forward && o[i].work.flops > 0)
      (o[i].microbatch == 0 ? fwd0 : fwd1).push_back(i);
  REQUIRE(fwd0.size() == 4);
  CHECK(d.start[fwd0[0]] == d.finish[go[0]]);
  CHECK(d.start[fwd0[2]] == d.finish[go[1]]);
  // The whole 1,000 ms of gathers moves from after the step to before it, and layers 0 and 1 of
  // the first forward (1 ms each) run beside the second gather: the step is 2 ms shorter, less
  // the second gather's fixed latency.
  CHECK(ms(ra.step_time - ro.step_time) == Approx(2.0 - fixed).epsilon(1e-6));
}

TEST_CASE("overlapped param gather: a pipeline stage after the first gathers its weights in one "
          "bucket", "[parallel][param_gather]") {
  auto s = four_layers(ParamGather::overlapped);
  s.parallel.pipeline = 2;
  s.parallel.data = 2;
  const auto plan = parallel::lower(s);
  for (const auto& program : plan.programs) {
    std::vector<std::int64_t> bytes;
    for (const auto& op : program.ops)
      if (weight_gather(op)) bytes.push_back(op.comm.bytes.value);
    // Two layers per stage; stage 0 buckets them (two 1 GB buckets would need four layers, so
    // one bucket fills at its second layer), stage 1 is one bucket by Megatron-Core's rule.
    REQUIRE(bytes.size() == 1);
    CHECK(bytes[0] == 1'000'000'000);
  }
}

TEST_CASE("overlapped param gather changes nothing without data parallelism or ZeRO-1/2",
          "[parallel][param_gather]") {
  auto one = four_layers(ParamGather::overlapped);
  one.parallel.data = 1;
  auto one_after = four_layers(ParamGather::after_step);
  one_after.parallel.data = 1;
  CHECK(exec::play(parallel::lower(one)).step_time == exec::play(parallel::lower(one_after)).step_time);
}
