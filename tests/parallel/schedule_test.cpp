#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/parallel/schedule.hpp"

using namespace trainsim;
using parallel::describe;
using parallel::schedule_stage;
using scenario::PipelineEngine;
using scenario::Schedule;

TEST_CASE("1F1B warms up with stages - stage - 1 forwards then alternates", "[schedule]") {
  CHECK(describe(schedule_stage(Schedule::one_f_one_b, 0, 4, 8, 1)) ==
        "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  CHECK(describe(schedule_stage(Schedule::one_f_one_b, 3, 4, 4, 1)) == "F0 B0 F1 B1 F2 B2 F3 B3");
  CHECK(describe(schedule_stage(Schedule::one_f_one_b, 0, 4, 2, 1)) == "F0 F1 B0 B1");
}

TEST_CASE("GPipe runs every forward before any backward", "[schedule]") {
  CHECK(describe(schedule_stage(Schedule::gpipe, 1, 4, 3, 1)) == "F0 F1 F2 B2 B1 B0");
}

TEST_CASE("the interleaved schedule visits every chunk and micro-batch once each way", "[schedule]") {
  for (int p : {2, 4}) {
    for (int v : {2, 3}) {
      for (int m : {p, 2 * p, 4 * p}) {
        for (int stage = 0; stage < p; ++stage) {
          const auto units = schedule_stage(Schedule::interleaved, stage, p, m, v);
          REQUIRE(units.size() == static_cast<std::size_t>(2 * m * v));
          for (int c = 0; c < v; ++c)
            for (int j = 0; j < m; ++j) {
              const auto f = std::find(units.begin(), units.end(), parallel::WorkUnit{true, c, j});
              const auto b = std::find(units.begin(), units.end(), parallel::WorkUnit{false, c, j});
              REQUIRE(f != units.end());
              REQUIRE(b != units.end());
              CHECK(f < b);  // a backward never precedes its own forward
            }
        }
      }
    }
  }
}

TEST_CASE("interleaved stage 0 warms up with 2 (p - 1) + (v - 1) p forwards", "[schedule]") {
  const auto units = schedule_stage(Schedule::interleaved, 0, 4, 8, 2);
  int warm = 0;
  while (units[warm].forward) ++warm;
  CHECK(warm == 2 * 3 + 1 * 4 + 1);  // warm-up plus the first steady-state forward
  // Chunk 0 takes micro-batches 0..3 first, then chunk 1 takes them.
  CHECK(describe({units.begin(), units.begin() + 8}) == "F0 F1 F2 F3 F0.1 F1.1 F2.1 F3.1");
}

TEST_CASE("the interleaved schedule runs Megatron-Core's micro-batch groups", "[schedule]") {
  // model_parallel_config.py's example (microbatch_group_size_per_vp_stage): PP 2, VP 2, N 3,
  // 5 micro-batches, the forwards in the order 0 1 2 0 1 2 3 4 3 4 (chunk 0, then chunk 1).
  const auto s0 = schedule_stage(Schedule::interleaved, 0, 2, 5, 2, 3);
  std::vector<parallel::WorkUnit> fwd;
  for (const auto& u : s0)
    if (u.forward) fwd.push_back(u);
  CHECK(describe(fwd) == "F0 F1 F2 F0.1 F1.1 F2.1 F3 F4 F3.1 F4.1");
  // Stage 0 warms up with 2 (p - 1) + (v - 1) N = 2 + 3 forwards; the backwards take the same
  // table with the chunks reversed.
  CHECK(describe(s0) == "F0 F1 F2 F0.1 F1.1 F2.1 B0.1 F3 B1.1 F4 B2.1 F3.1 B0 F4.1 B1 B2 B3.1 "
                        "B4.1 B3 B4");
  // The last stage: (v - 1) N = 3 warm-up forwards.
  const auto s1 = schedule_stage(Schedule::interleaved, 1, 2, 5, 2, 3);
  CHECK(describe({s1.begin(), s1.begin() + 5}) == "F0 F1 F2 F0.1 B0.1");
  // A group of pipeline micro-batches is the default schedule.
  CHECK(schedule_stage(Schedule::interleaved, 1, 4, 8, 2, 4) ==
        schedule_stage(Schedule::interleaved, 1, 4, 8, 2));
  for (int n : {4, 5, 7}) {  // 7 % 4 = 3 and 7 % 5 = 2 leave a last group of at least 2
    for (int stage = 0; stage < 2; ++stage) {
      const auto units = schedule_stage(Schedule::interleaved, stage, 2, 7, 3, n);
      REQUIRE(units.size() == 42u);
      for (int c = 0; c < 3; ++c)
        for (int j = 0; j < 7; ++j) {
          const auto f = std::find(units.begin(), units.end(), parallel::WorkUnit{true, c, j});
          const auto b = std::find(units.begin(), units.end(), parallel::WorkUnit{false, c, j});
          REQUIRE(f != units.end());
          REQUIRE(b != units.end());
          CHECK(f < b);
        }
    }
  }
}

TEST_CASE("the pytorch engine orders units as torch.distributed.pipelining does", "[schedule]") {
  constexpr auto pt = PipelineEngine::pytorch;
  // ScheduleGPipe: the backwards in micro-batch order.
  CHECK(describe(schedule_stage(Schedule::gpipe, 1, 4, 3, 1, 0, pt)) == "F0 F1 F2 B0 B1 B2");
  // Schedule1F1B: p - stage forwards, then backward / forward pairs: Megatron's order.
  for (int stage = 0; stage < 4; ++stage)
    CHECK(schedule_stage(Schedule::one_f_one_b, stage, 4, 8, 1, 0, pt) ==
          schedule_stage(Schedule::one_f_one_b, stage, 4, 8, 1));
  // ScheduleInterleaved1F1B's docstring example: 4 stages, 3 micro-batches: one round of 3.
  // Warm-up (v - 1) n + 2 (p - 1 - stage), capped at n v = 6: stage 3 warms up with 3.
  CHECK(describe(schedule_stage(Schedule::interleaved, 3, 4, 3, 2, 3, pt)) ==
        "F0 F1 F2 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 B0 B1 B2");
  // Stage 2 warms up with 5, then one forward / backward pair: F2.1 B0.1.
  CHECK(describe(schedule_stage(Schedule::interleaved, 2, 4, 3, 2, 3, pt)) ==
        "F0 F1 F2 F0.1 F1.1 F2.1 B0.1 B1.1 B2.1 B0 B1 B2");
  CHECK(describe(schedule_stage(Schedule::interleaved, 0, 4, 3, 2, 3, pt)) ==
        "F0 F1 F2 F0.1 F1.1 F2.1 B0.1 B1.1 B2.1 B0 B1 B2");
  // m = p: Megatron runs every forward first on every stage; PyTorch keeps the capped count,
  // (v - 1) p + 2 (p - 1 - stage): 4 on the last of 4 stages.
  const auto megatron = schedule_stage(Schedule::interleaved, 3, 4, 4, 2);
  const auto pytorch = schedule_stage(Schedule::interleaved, 3, 4, 4, 2, 4, pt);
  CHECK(describe({megatron.begin(), megatron.begin() + 9}) == "F0 F1 F2 F3 F0.1 F1.1 F2.1 F3.1 B0.1");
  CHECK(describe({pytorch.begin(), pytorch.begin() + 6}) == "F0 F1 F2 F3 F0.1 B0.1");
  // Otherwise the two are the same schedule (rounds of n = groups of n).
  for (int stage = 0; stage < 4; ++stage)
    CHECK(schedule_stage(Schedule::interleaved, stage, 4, 10, 2, 5, pt) ==
          schedule_stage(Schedule::interleaved, stage, 4, 10, 2, 5));
}

TEST_CASE("a step of several schedules plays them one after the other", "[schedule]") {
  constexpr auto pt = PipelineEngine::pytorch;
  CHECK(describe(parallel::schedule_step(Schedule::one_f_one_b, 0, 2, 4, 2, 1, 0, pt)) ==
        "F0 F1 B0 B1 F2 F3 B2 B3");
  CHECK(describe(parallel::schedule_step(Schedule::one_f_one_b, 1, 2, 4, 2, 1, 0, pt)) ==
        "F0 B0 F1 B1 F2 B2 F3 B3");
  // One schedule of all: schedule_stage's.
  CHECK(parallel::schedule_step(Schedule::interleaved, 0, 4, 8, 8, 2, 4, pt) ==
        schedule_stage(Schedule::interleaved, 0, 4, 8, 2, 4, pt));
  // Interleaved, two schedules of 3 over 4 stages: each a round of 3, the second numbered 3..5.
  const auto two = parallel::schedule_step(Schedule::interleaved, 3, 4, 6, 3, 2, 3, pt);
  CHECK(describe(two) == "F0 F1 F2 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 B0 B1 B2 "
                         "F3 F4 F5 F3.1 B3.1 F4.1 B4.1 F5.1 B5.1 B3 B4 B5");
}
