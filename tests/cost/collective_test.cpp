#include <catch2/catch.hpp>

#include <cstdlib>
#include <stdexcept>

#include "sim/cost/all_to_all.hpp"
#include "sim/cost/cost.hpp"

using namespace trainsim;
using core::Bytes;
using core::Duration;
using cost::CollectiveAlgo;

namespace {

// 100 GB/s per direction, 5 us per step: numbers a person can check on paper.
hw::LinkSpec toy_link() {
  return {"toy", core::Bandwidth{100e9}, Duration{5'000}, "test"};
}

const Bytes kOneGiB{core::kGiB};

}  // namespace

TEST_CASE("ring all-reduce of 1 GiB over 8 ranks matches the closed form", "[cost][collective]") {
  // 2 x 7/8 x 2^30 B / 1e11 B/s = 18,790,481.92 ns -> 18,790,482; + 2 x 7 x 5 us = 70 us.
  CHECK(cost::all_reduce_time(kOneGiB, 8, toy_link()).ns == 18'790'482 + 70'000);
  CHECK(cost::all_reduce_time(kOneGiB, 8, toy_link(), CollectiveAlgo::ring).ns == 18'860'482);
}

TEST_CASE("ring reduce-scatter and all-gather each move (n-1)/n of the buffer",
          "[cost][collective]") {
  // 7/8 x 2^30 / 1e11 = 9,395,240.96 ns -> 9,395,241; + 7 x 5 us.
  CHECK(cost::reduce_scatter_time(kOneGiB, 8, toy_link()).ns == 9'395'241 + 35'000);
  CHECK(cost::all_gather_time(kOneGiB, 8, toy_link()).ns == 9'395'241 + 35'000);
}

TEST_CASE("ring all-reduce equals reduce-scatter followed by all-gather", "[cost][collective]") {
  const auto link = toy_link();
  CHECK(cost::reduce_scatter_time(kOneGiB, 8, link) + cost::all_gather_time(kOneGiB, 8, link) ==
        cost::all_reduce_time(kOneGiB, 8, link));
  // In general the two halves round separately: they may differ by at most 1 ns.
  for (int n : {2, 3, 4, 7, 16, 64, 1000}) {
    for (std::int64_t bytes : {1LL, 4095LL, 1'000'003LL, 123'456'789LL, 10LL * core::kGiB}) {
      INFO("n=" << n << " bytes=" << bytes);
      const Duration ar = cost::all_reduce_time(Bytes{bytes}, n, link);
      const Duration halves = cost::reduce_scatter_time(Bytes{bytes}, n, link) +
                              cost::all_gather_time(Bytes{bytes}, n, link);
      CHECK(std::llabs((ar - halves).ns) <= 1);
    }
  }
}

TEST_CASE("tree all-reduce sends the buffer twice and pays log2 n hops each way",
          "[cost][collective]") {
  // 2 x 2^30 / 1e11 = 21,474,836.48 ns -> 21,474,837; + 2 x ceil(log2 8) x 5 us = 30 us.
  CHECK(cost::all_reduce_time(kOneGiB, 8, toy_link(), CollectiveAlgo::tree).ns ==
        21'474'837 + 30'000);
  // ceil(log2 5) = 3, ceil(log2 2) = 1: latency-dominated small messages show the hop count.
  CHECK(cost::all_reduce_time(Bytes{100}, 5, toy_link(), CollectiveAlgo::tree).ns == 2 + 6 * 5'000);
  CHECK(cost::all_reduce_time(Bytes{100}, 2, toy_link(), CollectiveAlgo::tree).ns == 2 + 2 * 5'000);
  // At 1024 ranks the tree's 2 x 10 hops beat the ring's 2 x 1023 for a small buffer...
  CHECK(cost::all_reduce_time(Bytes{1024}, 1024, toy_link(), CollectiveAlgo::tree) <
        cost::all_reduce_time(Bytes{1024}, 1024, toy_link(), CollectiveAlgo::ring));
  // ...while the ring's 2(n-1)/n < 2 wins for a large one on few ranks.
  CHECK(cost::all_reduce_time(kOneGiB, 8, toy_link(), CollectiveAlgo::ring) <
        cost::all_reduce_time(kOneGiB, 8, toy_link(), CollectiveAlgo::tree));
}

TEST_CASE("point-to-point costs one latency plus the bytes at link bandwidth",
          "[cost][collective]") {
  // 2^30 / 1e11 = 10,737,418.24 ns -> 10,737,419; + 5 us.
  CHECK(cost::p2p_time(kOneGiB, toy_link()).ns == 10'737'419 + 5'000);
  CHECK(cost::p2p_time(Bytes{0}, toy_link()).ns == 0);
}

TEST_CASE("one rank or an empty buffer costs nothing and fewer than one rank is an error",
          "[cost][collective]") {
  const auto link = toy_link();
  for (auto algo : {CollectiveAlgo::ring, CollectiveAlgo::tree})
    CHECK(cost::all_reduce_time(kOneGiB, 1, link, algo).ns == 0);
  CHECK(cost::reduce_scatter_time(kOneGiB, 1, link).ns == 0);
  CHECK(cost::all_gather_time(kOneGiB, 1, link).ns == 0);
  CHECK(cost::all_reduce_time(Bytes{0}, 8, link).ns == 0);

  CHECK_THROWS_AS(cost::all_reduce_time(kOneGiB, 0, link), std::invalid_argument);
  CHECK_THROWS_AS(cost::all_reduce_time(kOneGiB, -3, link, CollectiveAlgo::tree),
                  std::invalid_argument);
  CHECK_THROWS_AS(cost::reduce_scatter_time(kOneGiB, 0, link), std::invalid_argument);
  CHECK_THROWS_AS(cost::all_gather_time(kOneGiB, 0, link), std::invalid_argument);
  CHECK_THROWS_AS(cost::all_reduce_time(Bytes{-1}, 8, link), std::invalid_argument);
}

TEST_CASE("a link without bandwidth is rejected and never divided by", "[cost][collective]") {
  hw::LinkSpec dead = toy_link();
  dead.bandwidth = core::Bandwidth{0};
  CHECK_THROWS_AS(cost::all_reduce_time(kOneGiB, 8, dead), std::invalid_argument);
  CHECK_THROWS_AS(cost::p2p_time(kOneGiB, dead), std::invalid_argument);
  hw::LinkSpec negative = toy_link();
  negative.latency = Duration{-1};
  CHECK_THROWS_AS(cost::p2p_time(kOneGiB, negative), std::invalid_argument);
}

TEST_CASE("the busbw convention holds for ring all-reduce on the nvlink3 preset",
          "[cost][collective]") {
  // nccl-tests report busbw = algbw x 2(n-1)/n; our link bandwidth is that busbw, so an
  // 8-GPU A100 all-reduce of S bytes runs at algbw = 235 x 8/14 GB/s plus 14 NCCL steps.
  const auto nv = hw::find_link("nvlink3");
  REQUIRE(nv.has_value());
  const double s = 4.0 * core::kGiB;
  const double expected = s / (235e9 * 8.0 / 14.0) + 14 * 3.4e-6;
  CHECK(core::to_seconds(cost::all_reduce_time(Bytes{4 * core::kGiB}, 8, *nv)) ==
        Approx(expected).epsilon(1e-6));
}

TEST_CASE("collectives count ranks in 64 bits: 3 billion ranks do not wrap", "[cost][collective]") {
  // A rank count past 2^31 once arrived as a negative int ("needs at least 1 rank").
  const std::int64_t n = 3'000'000'000;
  const Duration ring = cost::all_reduce_time(kOneGiB, n, toy_link());
  // 2 (n-1)/n x 2^30 / 1e11 s -> 21,474,837 ns (rounded up), + 2 (n-1) x 5 us of latency.
  CHECK(ring.ns == 21'474'837 + 2 * (n - 1) * 5'000);
  CHECK(cost::reduce_scatter_time(kOneGiB, n, toy_link()).ns > 0);
  CHECK(cost::all_reduce_time(kOneGiB, n, toy_link(), CollectiveAlgo::tree).ns ==
        21'474'837 + 2 * 32 * 5'000);
}

TEST_CASE("all-to-all sends (n-1)/n of each rank's buffer in n-1 steps", "[cost][collective]") {
  // Mixtral's dispatch of one 4096-token sequence, top-2, h 4096, bf16: 4096 x 2 x 4096 x 2 =
  // 67,108,864 B over 8 ranks: 7/8 x 67,108,864 / 1e11 = 587,202.56 ns -> 587,203; + 7 x 5 us.
  CHECK(cost::all_to_all_time(Bytes{67'108'864}, 8, toy_link()).ns == 587'203 + 35'000);
  CHECK(cost::all_to_all_time(Bytes{67'108'864}, 1, toy_link()).ns == 0);
}

TEST_CASE("an all-to-all across nodes sends its other nodes' share through its own NIC",
          "[cost][collective][expert]") {
  // 16 ranks, 8 on each of 2 nodes, 10^9 bytes each: 8/16 of them to the other node at
  // 50 GB/s = 10 ms; 7/16 to the node's ranks at 400 GB/s = 1.09375 ms, at the same time;
  // 15 steps of the network's 10 us.
  const hw::LinkSpec nic{"nic", core::Bandwidth{50e9}, Duration{10'000}, "test"};
  const hw::LinkSpec nvlink{"nvlink", core::Bandwidth{400e9}, Duration{1'000}, "test"};
  CHECK(cost::all_to_all_across_nodes(Bytes{1'000'000'000}, 16, 8, nvlink, nic).ns ==
        10'000'000 + 15 * 10'000);
  // One rank per node (8 nodes): 7/8 leave through the NIC, 17.5 ms + 7 x 10 us.
  CHECK(cost::all_to_all_across_nodes(Bytes{1'000'000'000}, 8, 1, nvlink, nic).ns ==
        17'500'000 + 70'000);
  // A slow fabric inside the node decides when its share takes longer: 8 ranks per node over
  // 10 GB/s inside, 7/16 x 10^9 / 10^10 = 43.75 ms.
  const hw::LinkSpec slow{"slow", core::Bandwidth{10e9}, Duration{1'000}, "test"};
  CHECK(cost::all_to_all_across_nodes(Bytes{1'000'000'000}, 16, 8, slow, nic).ns ==
        43'750'000 + 150'000);
  CHECK(cost::all_to_all_across_nodes(Bytes{1'000'000'000}, 1, 1, nvlink, nic).ns == 0);
  CHECK(cost::all_to_all_across_nodes(Bytes{0}, 16, 8, nvlink, nic).ns == 0);
}
