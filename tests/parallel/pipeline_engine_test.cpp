// parallel.pipeline_engine (sim/parallel/pass_pipeline.cpp): DeepSpeed's PipelineEngine pairs
// blocking sends and receives, so a transfer holds both stages' compute streams; Megatron-LM's
// transfers overlap the next unit's compute.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "../support/pipeline_chain.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

// Two layers per stage (pipeline_chain: a stage's forward takes tf = 2 ms, its backward
// tb = 4 ms, a transfer d = 1 ms), four micro-batches by default.
scenario::Scenario two_stages(scenario::PipelineEngine engine, int stages = 2, int micro = 4) {
  scenario::ParallelSpec p;
  p.pipeline_engine = engine;
  return pipeline_chain(2 * stages, stages, micro, p);
}

}  // namespace

TEST_CASE("Megatron's transfers overlap compute, DeepSpeed's blocking pairs hold both stages",
          "[parallel][pipeline]") {
  // 1F1B, stage 0: F0 F1 B0 F2 B1 F3 B2 B3; stage 1: F0 B0 F1 B1 F2 B2 F3 B3.
  // Megatron (a unit waits only for its input, d after the sender's unit):
  //   s0 F0 [0,2] F1 [2,4]; s1 F0 [3,5] B0 [5,9]; s0 B0 [10,14]; s1 F1 [9,11] B1 [11,15];
  //   s0 F2 [14,16] B1 [16,20]; s1 F2 [17,19] B2 [19,23]; s0 F3 [20,22]; s1 F3 [23,25]
  //   B3 [25,29]; s0 B2 [24,28] B3 [30,34]: ends at 34 ms.
  // DeepSpeed (send and receive start together once both stages reach them; after a forward
  // the send comes first, in a forward step after a backward the receive does):
  //   s0 F0 [0,2] Sa0 [2,3] F1 [3,5]; s1 Ra0 [2,3] F0 [3,5] B0 [5,9];
  //   s0 Sa1 [9,10] Rg0 [10,11] B0 [11,15]; s1 Ra1 [9,10] Sg0 [10,11] F1 [11,13] B1 [13,17];
  //   s0 F2 [15,17] Sa2 [17,18] Rg1 [18,19] B1 [19,23]; s1 Ra2 [17,18] Sg1 [18,19] F2 [19,21]
  //   B2 [21,25]; s0 F3 [23,25] Sa3 [25,26] Rg2 [26,27] B2 [27,31]; s1 Ra3 [25,26]
  //   Sg2 [26,27] F3 [27,29] B3 [29,33] Sg3 [33,34]; s0 Rg3 [33,34] B3 [34,38]: 38 ms.
  const auto mplan = parallel::lower(two_stages(scenario::PipelineEngine::megatron));
  const auto dplan = parallel::lower(two_stages(scenario::PipelineEngine::deepspeed));
  const auto m = exec::play(mplan);
  const auto d = exec::play(dplan);
  CHECK(last_backward_end(mplan, m, 0) == Approx(34).epsilon(1e-9));
  CHECK(last_backward_end(dplan, d, 0) == Approx(38).epsilon(1e-9));

  // Every DeepSpeed transfer is a send on one stage and a receive on the other, both on the
  // compute stream, starting at the same instant: 4 activations and 4 gradients.
  int pairs = 0;
  for (int s = 0; s < 2; ++s) {
    const auto& P = dplan.programs[s];
    const auto& Q = dplan.programs[1 - s];
    for (std::size_t i = 0; i < P.ops.size(); ++i) {
      if (P.ops[i].kind != parallel::OpKind::p2p) continue;
      CHECK(P.ops[i].stream == parallel::StreamKind::compute);
      if (s != 0) continue;
      for (std::size_t k = 0; k < Q.ops.size(); ++k)
        if (Q.ops[k].kind == parallel::OpKind::p2p && Q.ops[k].microbatch == P.ops[i].microbatch &&
            Q.ops[k].layer == P.ops[i].layer && d.devices[1].start[k] == d.devices[0].start[i])
          ++pairs;
    }
  }
  CHECK(pairs == 8);
}

// When stage `stage`'s forward of micro-batch `j` starts (its first layer), in ms.
double forward_start(const parallel::Plan& plan, const exec::Timeline& r, int stage, int j) {
  const auto& P = plan.programs[stage];
  for (std::size_t i = 0; i < P.ops.size(); ++i)
    if (P.ops[i].kind == parallel::OpKind::forward && P.ops[i].microbatch == j &&
        P.ops[i].layer == 2 * stage)
      return core::to_seconds(r.devices[stage].start[i]) * 1e3;
  FAIL("no such forward");
  return 0;
}

TEST_CASE("DeepSpeed's steady slot is tf + tb + 4 d on a middle stage, Megatron's tf + tb",
          "[parallel][pipeline]") {
  // Four stages as above (tf = 2, tb = 4, d = 1 ms), 16 micro-batches. A middle stage i
  // alternates exchange with i-1 (receive the activation, send the gradient: 2 d), forward,
  // exchange with i+1 (send the activation, receive the gradient: 2 d), backward; in steady
  // state each exchange finds its neighbour ready, so one micro-batch takes 2 + 4 + 4 x 1 =
  // 10 ms. Megatron's transfers run beside the compute: 2 + 4 = 6 ms.
  const auto ds = two_stages(scenario::PipelineEngine::deepspeed, 4, 16);
  const auto dplan = parallel::lower(ds);
  exec::PlayOptions exact;
  exact.steady_skip = false;
  const auto d = exec::play(dplan, exact);
  CHECK(forward_start(dplan, d, 1, 9) - forward_start(dplan, d, 1, 8) == Approx(10).epsilon(1e-9));
  CHECK(forward_start(dplan, d, 2, 9) - forward_start(dplan, d, 2, 8) == Approx(10).epsilon(1e-9));
  const auto mplan = parallel::lower(two_stages(scenario::PipelineEngine::megatron, 4, 16));
  const auto m = exec::play(mplan, exact);
  CHECK(forward_start(mplan, m, 1, 9) - forward_start(mplan, m, 1, 8) == Approx(6).epsilon(1e-9));
  // Fast play (lower's compress, steady-state skipping) plays the same step.
  CHECK(exec::play(parallel::lower(ds, {.compress = true})).step_time == d.step_time);
}

TEST_CASE("with pipeline stages, the deepspeed engine refuses schedules and ZeRO stages DeepSpeed's does not run",
          "[parallel][pipeline]") {
  const std::string base =
      "model: gpt2\ndevice: a100-80gb\ntraining: {micro_batch: 1, global_batch: 8, seq_len: 128}\n";
  const auto load = [](const std::string& text) {
    return scenario::load_scenario_tree(YAML::Load(text), "engine.yaml");
  };
  CHECK_THROWS_WITH(
      load(base + "parallel: {pipeline: 2, pipeline_engine: deepspeed, "
                                      "schedule: gpipe}\n"),
      Catch::Contains("1F1B"));
  CHECK_THROWS_WITH(
      load(base + "parallel: {pipeline: 2, data: 2, zero: 2, "
                                      "pipeline_engine: deepspeed}\n"),
      Catch::Contains("ZeRO-2"));
  CHECK_THROWS_WITH(
      load(base + "parallel: {pipeline: 2, pipeline_engine: pipedream}\n"),
      Catch::Contains("deepspeed"));
  // Without pipeline stages DeepSpeed runs its plain engine: ZeRO-3 is accepted.
  CHECK(load(base + "parallel: {data: 2, zero: 3, pipeline_engine: deepspeed}\n").parallel.zero == 3);
}

TEST_CASE("the pytorch engine plays a step as schedules of microbatches_per_schedule, each filling "
          "and draining the pipeline", "[parallel][pipeline]") {
  // PyTorch pipelining with accumulation (torchtitan: one schedule.step() per local batch).
  // Two stages as above (tf = 2, tb = 4, d = 1 ms), 4 micro-batches in two schedules of 2:
  // stage 0 runs F0 F1 B0 B1 F2 F3 B2 B3, stage 1 F0 B0 F1 B1 F2 B2 F3 B3.
  //   s0 F0 [0,2] F1 [2,4]; s1 F0 [3,5] B0 [5,9] F1 [9,11] B1 [11,15]; s0 B0 [10,14] B1 [16,20];
  //   s0 F2 [20,22] F3 [22,24]; s1 F2 [23,25] B2 [25,29] F3 [29,31] B3 [31,35];
  //   s0 B2 [30,34] B3 [36,40]: 40 ms, where one schedule of 4 ends at 34.
  auto s = two_stages(scenario::PipelineEngine::pytorch);
  s.parallel.microbatches_per_schedule = 2;
  const auto plan = parallel::lower(s);
  exec::PlayOptions exact;
  exact.steady_skip = false;
  CHECK(last_backward_end(plan, exec::play(plan, exact), 0) == Approx(40).epsilon(1e-9));
  CHECK(exec::play(parallel::lower(s, {.compress = true})).step_time == exec::play(plan, exact).step_time);
  const auto one = parallel::lower(two_stages(scenario::PipelineEngine::pytorch));
  CHECK(last_backward_end(one, exec::play(one, exact), 0) == Approx(34).epsilon(1e-9));
}

TEST_CASE("under FSDP each of the pytorch engine's schedules reduce-scatters and reshards",
          "[parallel][pipeline][fsdp]") {
  // PipelineStage syncs gradients after each schedule's last backward (last_backward per
  // step()): two schedules reduce-scatter every unit twice, and gather every unit again for the
  // second schedule's forwards (the first schedule's end resharded them).
  const auto count = [](std::int64_t per_schedule, parallel::OpKind kind) {
    auto s = scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) +
                                     "/scenarios/parallel/10_llama3_70b_fsdp_pp2.yaml");
    s.parallel.microbatches_per_schedule = per_schedule;
    const auto plan = parallel::lower(s);
    std::int64_t n = 0;
    for (const auto& op : plan.programs[0].ops) n += op.kind == kind;
    return n;
  };
  const auto rs = parallel::OpKind::reduce_scatter, ag = parallel::OpKind::all_gather;
  CHECK(count(4, rs) == 2 * count(0, rs));
  CHECK(count(2, rs) == 4 * count(0, rs));
  CHECK(count(4, ag) == 2 * count(0, ag));
}
