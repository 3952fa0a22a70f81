#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/parallel/schedule.hpp"

using namespace trainsim;
using parallel::describe;
using parallel::schedule_stage;
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
