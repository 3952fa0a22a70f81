// The report's time breakdown: parts sum exactly to the step, and each part is the op time it
// claims to be on small cases.
#include <catch2/catch.hpp>

#include <string>

#include "../support/fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/summary.hpp"
#include "sim/report/time_breakdown.hpp"

using namespace trainsim;

namespace {

report::TimeBreakdown breakdown_of(const std::string& file, parallel::Plan* kept = nullptr,
                                   exec::Timeline* tl_out = nullptr) {
  const auto s = scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/" + file);
  parallel::Plan plan = parallel::lower(s);
  exec::Timeline tl = exec::play(plan);
  report::TimeBreakdown b = report::time_breakdown(plan, tl);
  CHECK(b.step == tl.step_time);
  if (kept) *kept = std::move(plan);
  if (tl_out) *tl_out = std::move(tl);
  return b;
}

core::Duration sum(const report::TimeBreakdown& b) {
  core::Duration t{};
  for (const auto& p : b.parts) t += p.time;
  return t;
}

core::Duration part(const report::TimeBreakdown& b, const std::string& kind) {
  for (const auto& p : b.parts)
    if (p.kind == kind) return p.time;
  return {};
}

}  // namespace

TEST_CASE("time breakdown parts sum exactly to the step time", "[report][time_breakdown]") {
  for (const char* f : {"scenarios/single_gpu/01_fits.yaml", "scenarios/parallel/04_pipeline_fits.yaml",
                        "scenarios/parallel/05_zero3.yaml", "scenarios/parallel/06_gpt3_175b_megatron.yaml",
                        "scenarios/parallel/08_llama3_8b_fsdp.yaml"}) {
    INFO(f);
    const auto b = breakdown_of(f);
    CHECK(sum(b) == b.step);
    for (const auto& p : b.parts) CHECK(p.time.ns > 0);
  }
}

TEST_CASE("on one GPU the step is its kernels: forward + backward + optimizer, nothing idle",
          "[report][time_breakdown]") {
  parallel::Plan plan;
  exec::Timeline tl;
  const auto b = breakdown_of("scenarios/single_gpu/01_fits.yaml", &plan, &tl);
  // One device, no communication: each compute op's span is its kernel time, so each kind's
  // part is the sum of its ops' durations, and they fill the step back to back.
  core::Duration forward{}, backward{};
  const auto& P = plan.programs[0];
  for (std::size_t i = 0; i < P.ops.size(); ++i) {
    if (P.ops[i].macro >= 0) continue;
    const core::Duration d = tl.devices[0].finish[i] - tl.devices[0].start[i];
    if (P.ops[i].kind == parallel::OpKind::forward) forward += d;
    if (P.ops[i].kind == parallel::OpKind::backward) backward += d;
  }
  if (!plan.compressed) {
    CHECK(part(b, "compute.forward") == forward);
    CHECK(part(b, "compute.backward") == backward);
  }
  CHECK(part(b, "compute.optimizer").ns > 0);
  CHECK(part(b, "idle").ns == 0);
}

TEST_CASE("a pipeline's breakdown shows its bubble as idle time", "[report][time_breakdown]") {
  const auto b = breakdown_of("scenarios/parallel/04_pipeline_fits.yaml");
  CHECK(part(b, "idle").ns > 0);
}

TEST_CASE("idle compute time goes to the communication running then, windows in any order",
          "[report][time_breakdown]") {
  // One device: forwards at [0, 10) and [20, 30) ns; a pipeline transfer (p2p) at [12, 15) and a
  // ZeRO gather (comm stream) at [5, 20), listed in that order so the windows' starts are out of
  // time order. Idle compute stream [10, 20): the gather alone at [10, 12) and [15, 20) (7 ns),
  // both at [12, 15), which go to the lower purpose, pipeline (3 ns); nothing idle.
  using parallel::CommPurpose;
  using parallel::OpKind;
  using parallel::StreamKind;
  parallel::Plan plan;
  plan.programs.emplace_back();
  parallel::Program& P = plan.programs[0];
  auto op = [](OpKind kind, StreamKind stream, CommPurpose purpose) {
    parallel::Op o;
    o.kind = kind;
    o.stream = stream;
    o.purpose = purpose;
    return o;
  };
  P.ops = {op(OpKind::forward, StreamKind::compute, CommPurpose::none),
           op(OpKind::p2p, StreamKind::p2p, CommPurpose::pipeline),
           op(OpKind::all_gather, StreamKind::comm, CommPurpose::zero),
           op(OpKind::forward, StreamKind::compute, CommPurpose::none)};
  exec::Timeline tl;
  tl.devices.emplace_back();
  exec::DeviceTimeline& d = tl.devices[0];
  auto at = [](std::int64_t ns) { return core::TimePoint{} + core::Duration{ns}; };
  d.start = {at(0), at(12), at(5), at(20)};
  d.finish = {at(10), at(15), at(20), at(30)};
  d.end = at(30);
  tl.step_time = core::Duration{30};
  const auto b = report::time_breakdown(plan, tl);
  CHECK(part(b, "compute.forward") == core::Duration{20});
  CHECK(part(b, "exposed_comm.zero") == core::Duration{7});
  CHECK(part(b, "exposed_comm.pipeline_p2p") == core::Duration{3});
  CHECK(part(b, "idle") == core::Duration{0});
  CHECK(sum(b) == b.step);
}

TEST_CASE("a folded pipeline transfer's window is the one the accounts sum, as long as its p2p op",
          "[report][time_breakdown]") {
  // Fast play (compressed plan): each stage boundary's send is folded into the op that waits for
  // it. The timeline carries its window; the report reads it, and the accounts sum the same
  // windows into comm[pipeline].time. Each window lasts what the expanded plan's p2p op would:
  // exec::op_duration of the op as a p2p transfer.
  const auto s = scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/parallel/04_pipeline_fits.yaml");
  const parallel::Plan plan = parallel::lower(s, {.compress = true});
  const exec::Timeline tl = exec::play(plan);
  core::Duration windows{};
  int folded = 0;
  for (std::size_t p = 0; p < plan.programs.size(); ++p) {
    const parallel::Program& P = plan.programs[p];
    const exec::DeviceTimeline& d = tl.devices[p];
    for (std::size_t i = 0; i < P.ops.size(); ++i) {
      if (!P.ops[i].arrival) continue;
      REQUIRE(i < d.arrival_end.size());
      parallel::Op transfer = P.ops[i];
      transfer.kind = parallel::OpKind::p2p;
      transfer.macro = -1;
      transfer.kernels = 1;
      transfer.work = {};
      CHECK(d.arrival_end[i] - d.arrival_start[i] == exec::op_duration(plan, P, transfer));
      windows += d.arrival_end[i] - d.arrival_start[i];
      ++folded;
    }
  }
  REQUIRE(folded > 0);
  REQUIRE(tl.comm.count(parallel::CommPurpose::pipeline) == 1);
  CHECK(tl.comm.at(parallel::CommPurpose::pipeline).time == windows);
}
