// Contention played (cluster.collective_sms; docs/collectives.md): a compute op beside a
// collective on its device runs on the SMs the collective leaves, for as long as they overlap —
// whether the collective was in flight when the op started or started during it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "../support/toy_device.hpp"
#include "sim/cost/contention.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/parallel/program.hpp"
#include "sim/report/summary.hpp"
#include "sim/report/time_breakdown.hpp"
#include "sim/report/writers.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;
using core::Duration;
using parallel::Op;
using parallel::OpKind;
using parallel::StreamKind;

namespace {

Op compute(double flops, std::int64_t bytes) {
  Op op;
  op.kind = OpKind::forward;
  op.work.flops = flops;
  op.work.matmul = flops > 0;
  op.work.bytes = core::Bytes{bytes};
  return op;
}

Op gather(std::int64_t bytes) {
  Op op;
  op.kind = OpKind::all_gather;
  op.stream = StreamKind::comm;
  op.purpose = parallel::CommPurpose::data;
  op.comm.bytes = core::Bytes{bytes};
  op.comm.ranks = 8;
  return op;
}

// One device: a 1 ms memory-bound op, then a GEMM of 10 ms alone (12.5 ms on 80 of its 100
// SMs), on the compute stream; two all-gathers back to back on the communication stream from
// the start.
parallel::Plan plan_with(int collective_sms) {
  parallel::Plan plan;
  plan.collective_sms = collective_sms;
  plan.intra_node.bandwidth = {100e9};
  plan.intra_node.latency = Duration{0};
  plan.intra_node.sm = 80;
  parallel::Program P;
  P.device = testing::hundred_sm_device();
  P.ops = {compute(0, 1'000'000'000), compute(1e12, 0), gather(300'000'000), gather(300'000'000)};
  plan.programs.push_back(P);
  return plan;
}

Duration ms(double x) { return core::duration_from_seconds(x * 1e-3); }

}  // namespace

TEST_CASE("a GEMM beside collectives is slowed for the time they overlap it, by hand", "[exec][contention]") {
  const parallel::Plan off = plan_with(0), on = plan_with(20);
  const parallel::Program& P = on.programs[0];
  const Duration c = exec::op_duration(on, P, P.ops[2]);
  REQUIRE(c > ms(1));       // the first all-gather outlasts the memory-bound op ...
  REQUIRE(c * 2 < ms(11));  // ... and the second ends before the GEMM would alone
  CHECK(exec::op_duration(on, P, P.ops[1]).ns == 10'000'000);
  CHECK(exec::contended_op_duration(on, P, P.ops[1]).ns == 12'500'000);
  CHECK(exec::contended_op_duration(on, P, P.ops[0]) == exec::op_duration(on, P, P.ops[0]));

  const auto alone = exec::play(off);
  CHECK((alone.devices[0].finish[1] - alone.devices[0].start[1]).ns == 10'000'000);
  CHECK(alone.devices[0].contention.ns == 0);

  const auto tl = exec::play(on);
  const auto& d = tl.devices[0];
  // The memory-bound op beside the first all-gather: as fast.
  CHECK(d.finish[0].ns == 1'000'000);
  // The GEMM starts at 1 ms with the first all-gather in flight until c: 0.8 of its speed for
  // c - 1 ms. The second starts at c, inside the GEMM, and holds the SMs until 2c: what was left
  // at c runs at 0.8 for the c it overlaps. In all the GEMM runs beside them from 1 ms to 2c.
  const Duration beside = c * 2 - ms(1);
  const Duration expected = ms(10) + Duration{std::llround(static_cast<double>(beside.ns) * 0.2)};
  CHECK(d.start[1].ns == 1'000'000);
  CHECK(std::llabs((d.finish[1] - d.start[1]).ns - expected.ns) <= 2);  // ns rounding, twice
  CHECK(d.contention == (d.finish[1] - d.start[1]) - ms(10));
  // The collectives are not slowed.
  CHECK(d.finish[3] - d.start[2] == c * 2);
  CHECK(tl.step_time == d.finish[1] - core::TimePoint{});
  // The time breakdown: the ops' durations alone by kind, the rest as contention.
  const report::TimeBreakdown b = report::time_breakdown(on, tl);
  core::Duration sum{}, forward{}, contention{};
  for (const auto& part : b.parts) {
    sum += part.time;
    if (part.kind == "compute.forward") forward = part.time;
    if (part.kind == "contention") contention = part.time;
  }
  CHECK(sum == tl.step_time);
  CHECK(forward.ns == 11'000'000);  // 1 ms + 10 ms alone
  CHECK(contention == d.contention);
}

TEST_CASE("a collective on the compute stream takes no SMs from the compute beside it", "[exec][contention]") {
  parallel::Plan on = plan_with(20);
  on.programs[0].ops[2].stream = StreamKind::compute;  // runs between the compute ops
  on.programs[0].ops[3].stream = StreamKind::compute;
  const auto tl = exec::play(on);
  CHECK(tl.devices[0].contention.ns == 0);
}

namespace {

std::string report_json(const scenario::Scenario& s, const parallel::Plan& plan,
                        const exec::Timeline& tl) {
  std::ostringstream out;
  report::write_json(out, report::summarize(s, plan, tl, false));
  return out.str();
}

}  // namespace

TEST_CASE("contention: a play resumed from a kept snapshot reports as a fresh play", "[exec][contention]") {
  // Data-parallel buckets beside the backward GEMMs of a 4-layer, hidden-4096 model; a sweep
  // point with another all-reduce algorithm resumes the kept play where it paused.
  const auto s = scenario::load_scenario(
      std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/korthikanti.yaml",
      {"model={preset: gpt3, layers: 4, hidden: 4096, heads: 32, vocab: 1024, max_positions: 2048}",
       "training.seq_len=2048", "training.gradient_accumulation=2", "parallel={data: 8}",
       "cluster={nodes: 1, gpus_per_node: 8, collective_sms: 24}"});
  const parallel::Plan plan = parallel::lower(s, {.compress = true});
  CHECK(plan.collective_sms == 24);
  CHECK(plan.programs[0].macros.empty());  // every unit stays expanded
  auto without = s;
  without.cluster.collective_sms = 0;
  CHECK_FALSE(parallel::lower(without, {.compress = true}).programs[0].macros.empty());
  const exec::Timeline fresh = exec::play(plan);
  REQUIRE(fresh.devices[0].contention.ns > 0);

  exec::PlanDigest digest;
  exec::PlayOptions opt;
  opt.plan_digest = &digest;
  const exec::Timeline first = exec::play(plan, opt);
  CHECK(report_json(s, plan, first) == report_json(s, plan, fresh));
  for (const auto algo : {cost::CollectiveAlgo::tree, cost::CollectiveAlgo::ring}) {
    parallel::Plan other = plan;
    other.data_allreduce = algo;
    const exec::Timeline kept = exec::play(other, opt);
    CHECK(kept.events_resumed > 0);  // it went on from the kept play
    CHECK(report_json(s, other, kept) == report_json(s, other, exec::play(other)));
  }
}

namespace {

struct Played {
  std::string json;
  std::uint64_t skipped = 0;
  core::Duration contention{};
};

Played play_way(const scenario::Scenario& s, bool compress, bool steady_skip) {
  const parallel::Plan plan = parallel::lower(s, {.compress = compress});
  exec::PlayOptions opt;
  opt.steady_skip = steady_skip;
  const exec::Timeline tl = exec::play(plan, opt);
  core::Duration most{};
  for (const auto& d : tl.devices) most = std::max(most, d.contention);
  return {report_json(s, plan, tl), tl.events_skipped, most};
}

}  // namespace

TEST_CASE("contention: the steady-state skip reports as the expanded plan", "[exec][contention]") {
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/korthikanti.yaml";
  const std::string model =
      "model={preset: gpt3, layers: 8, hidden: 4096, heads: 32, vocab: 1024, max_positions: 2048}";
  // A 1F1B pipeline whose data-parallel buckets overlap the last backward, and ZeRO-3, whose
  // gathers and reduce-scatters run beside every micro-batch's compute.
  for (const std::vector<std::string>& sets :
       {std::vector<std::string>{model, "training.seq_len=2048", "training.gradient_accumulation=16",
                                 "parallel={pipeline: 2, data: 4}",
                                 "cluster={nodes: 1, gpus_per_node: 8, collective_sms: 24}"},
        std::vector<std::string>{model, "training.seq_len=2048", "training.gradient_accumulation=12",
                                 "parallel={data: 8, zero: 3}",
                                 "cluster={nodes: 1, gpus_per_node: 8, collective_sms: 24}"}}) {
    const auto s = scenario::load_scenario(file, sets);
    const Played full = play_way(s, false, true);
    const Played plain = play_way(s, true, false);
    const Played fast = play_way(s, true, true);
    INFO(sets[3] << ": " << fast.skipped << " events written down");
    CHECK(full.contention.ns > 0);
    CHECK(fast.json == full.json);
    CHECK(plain.json == full.json);
    CHECK(fast.skipped > 0);
  }
}
