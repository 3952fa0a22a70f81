// The chunk schedules of cost::play_overlap, played by hand (every time in microseconds).
#include <catch2/catch.hpp>

#include "sim/cost/tp_overlap.hpp"

using namespace trainsim;
using cost::ChunkedOverlap;
using cost::OverlapMethod;

namespace {
core::Duration us(std::int64_t n) { return core::Duration{n * 1000}; }
}  // namespace

TEST_CASE("ring-exchange all-gather: the own chunk first, each later chunk after its transfer",
          "[cost][tp_overlap]") {
  // 4 chunks of 10 us GEMM; transfers of 4 us end at 4, 8, 12, each before the GEMM chunk that
  // needs it starts (10, 20, 30): nothing exposed, 4 x 10 = 40 us.
  REQUIRE(cost::play_overlap({OverlapMethod::all_gather_ring, 4, us(10), us(4)}) == us(40));
  // Transfers of 15 us: GEMM 0 0-10; transfer 1 ends 15, GEMM 1 15-25; transfer 2 ends 30,
  // GEMM 2 30-40; transfer 3 ends 45, GEMM 3 45-55: the first chunk's GEMM plus 3 transfers
  // plus the last chunk's GEMM, 10 + 3 x 15 = 55 us (without overlap: 40 + 45 = 85 us).
  REQUIRE(cost::play_overlap({OverlapMethod::all_gather_ring, 4, us(10), us(15)}) == us(55));
  // One rank: its own chunk only.
  REQUIRE(cost::play_overlap({OverlapMethod::all_gather_ring, 1, us(10), us(15)}) == us(10));
}

TEST_CASE("ring-exchange reduce-scatter: sends after their chunks, the own chunk last, then the sum",
          "[cost][tp_overlap]") {
  // 4 chunks of 10 us, sends of 4 us: GEMMs end 10, 20, 30, 40; sends 10-14, 20-24, 30-34;
  // the sum's 3 us after 40: 43 us.
  REQUIRE(cost::play_overlap({OverlapMethod::reduce_scatter_ring, 4, us(10), us(4), us(3)}) ==
          us(43));
  // Sends of 15 us: 10-25, 25-40, 40-55; the own chunk's GEMM ends at 40; 55 + 3 = 58 us.
  REQUIRE(cost::play_overlap({OverlapMethod::reduce_scatter_ring, 4, us(10), us(15), us(3)}) ==
          us(58));
}

TEST_CASE("split pipelined reduce-scatter: the last chunk's collective is exposed",
          "[cost][tp_overlap]") {
  // 4 chunks of 10 us, reduce-scatters of 4 us: 10-14, 20-24, 30-34, 40-44: 44 us.
  REQUIRE(cost::play_overlap({OverlapMethod::reduce_scatter_pipeline, 4, us(10), us(4)}) ==
          us(44));
  // Reduce-scatters of 12 us: 10-22, 22-34, 34-46, 46-58: 58 us.
  REQUIRE(cost::play_overlap({OverlapMethod::reduce_scatter_pipeline, 4, us(10), us(12)}) ==
          us(58));
}

TEST_CASE("bulk overlap: the GEMM slowed by the SMs the collective holds while it runs",
          "[cost][tp_overlap]") {
  ChunkedOverlap o{OverlapMethod::bulk, 1, us(100), us(40)};
  o.shared_rate = 0.75;  // 33 of 132 SMs taken
  // In the collective's 40 us the GEMM does 30 us of its work; 70 us remain: 110 us.
  REQUIRE(cost::play_overlap(o) == us(110));
  // A collective of 200 us: the GEMM's 100 us fit in 200 x 0.75 = 150 us: 200 us.
  o.comm_chunk = us(200);
  REQUIRE(cost::play_overlap(o) == us(200));
}
