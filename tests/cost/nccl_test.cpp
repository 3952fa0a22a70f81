#include <catch2/catch.hpp>

#include <cstdlib>
#include <stdexcept>

#include "sim/cost/nccl.hpp"

// Hand computations follow docs/collectives.md (NCCL 2.30 src/graph/tuning.cc). Times are
// checked to 1 ns: the tables' latencies are scaled by latency / 3.4 us in floating point.

using namespace trainsim;
using core::Bytes;
using cost::NcclAlgo;
using cost::NcclColl;
using cost::NcclGroup;
using cost::NcclProto;

namespace {

hw::LinkSpec preset(const char* name) {
  auto l = hw::find_link(name);
  REQUIRE(l);
  return *l;
}

bool near(core::Duration d, double ns) {
  return std::abs(static_cast<double>(d.ns) - ns) <= 1.0;
}

const Bytes kOneGiB{core::kGiB};

}  // namespace

TEST_CASE("a small all-reduce inside an A100 node runs as Ring / LL", "[cost][nccl]") {
  const hw::LinkSpec nv = preset("nvlink3");  // 235 GB/s, 3.4 us, Ampere
  const NcclGroup g{8, 1};
  // Ring/LL: bus bw min(llMaxBw 87.7, 235/2) = 87.7 GB/s, algorithm bw x 8/14;
  // latency 6.6 + 14 x 0.6 = 15 us; 1e6 B x 14 / (87.7e9 x 8) = 19.954 us -> 34.954 us.
  const auto ll = cost::nccl_time(NcclColl::all_reduce, Bytes{1'000'000}, g, nv, nv, NcclAlgo::ring,
                                  NcclProto::ll);
  REQUIRE(ll);
  CHECK(near(*ll, 34'955));
  // Ring/Simple: 8.4 + 14 x 3.4 = 56 us + 1e6 x 14/8 / 235e9 = 7.447 us -> 63.447 us.
  const auto simple = cost::nccl_time(NcclColl::all_reduce, Bytes{1'000'000}, g, nv, nv,
                                      NcclAlgo::ring, NcclProto::simple);
  REQUIRE(simple);
  CHECK(near(*simple, 63'447));
  const cost::NcclChoice best = cost::nccl_best(NcclColl::all_reduce, Bytes{1'000'000}, g, nv, nv);
  CHECK(best.algo == NcclAlgo::ring);
  CHECK(best.proto == NcclProto::ll);
  CHECK(best.time == *ll);
}

TEST_CASE("a large all-reduce runs as Ring / Simple: the alpha-beta ring plus NCCL's base latency",
          "[cost][nccl]") {
  const hw::LinkSpec nv = preset("nvlink3");
  // 2^30 x 14/8 / 235e9 = 7,995,949.75 ns + 56 us = 8,051,949.75 ns.
  const cost::NcclChoice best = cost::nccl_best(NcclColl::all_reduce, kOneGiB, {8, 1}, nv, nv);
  CHECK(best.algo == NcclAlgo::ring);
  CHECK(best.proto == NcclProto::simple);
  CHECK(near(best.time, 8'051'950));
  // The alpha-beta ring has the same bandwidth term and 2 x 7 steps of 3.4 us: 8.4 us less.
  CHECK(best.time.ns - cost::all_reduce_time(kOneGiB, 8, nv).ns == 8'400);
}

TEST_CASE("NVLS carries all-reduces inside a Hopper NVSwitch node, not on NVLink 4 alone",
          "[cost][nccl]") {
  const hw::LinkSpec sw = preset("nvswitch-h100");  // 352.5 GB/s, NVLS
  // NVLS bus bw 2 x 0.85 x 15/16 x 352.5 = 561.797 GB/s, x 8/14; 25 us:
  // 2^30 x 14 / (561.797e9 x 8) = 3,344,711.0 ns + 25 us = 3,369,711.0 ns.
  const cost::NcclChoice best = cost::nccl_best(NcclColl::all_reduce, kOneGiB, {8, 1}, sw, sw);
  CHECK(best.algo == NcclAlgo::nvls);
  CHECK(near(best.time, 3'369'711));
  hw::LinkSpec p2p = preset("nvlink4");
  CHECK_FALSE(cost::nccl_time(NcclColl::all_reduce, kOneGiB, {8, 1}, p2p, p2p, NcclAlgo::nvls,
                              NcclProto::simple));
  CHECK(cost::nccl_best(NcclColl::all_reduce, kOneGiB, {8, 1}, p2p, p2p).algo == NcclAlgo::ring);
  // No NVLS-Tree inside one node, no NVLS with LL.
  CHECK_FALSE(cost::nccl_time(NcclColl::all_reduce, kOneGiB, {8, 1}, sw, sw, NcclAlgo::nvls_tree,
                              NcclProto::simple));
  CHECK_FALSE(cost::nccl_time(NcclColl::all_reduce, kOneGiB, {8, 1}, sw, sw, NcclAlgo::nvls,
                              NcclProto::ll));
}

TEST_CASE("across nodes the ring pays network steps and the plateau, small buffers go to trees",
          "[cost][nccl]") {
  const hw::LinkSpec nv = preset("nvlink3");
  hw::LinkSpec net = preset("ib-hdr");
  net.latency = core::Duration{14'000};    // NCCL 2.30's Ring/Simple network step: the tables as is
  net.bandwidth = core::Bandwidth{100e9};  // a spanning link: 8 ranks x 12.5 GB/s per node
  const NcclGroup g{64, 8};
  // Ring/Simple: 126 steps, 14 across nodes: (8.4 + 112 x max(3.4, 3 x 1.0) + 14 x 14) x 1.4
  // = 819.28 us; 2^30 x 126/64 / 100e9 = 21,139,292.16 ns -> 21,958,572.16 ns.
  const auto ring = cost::nccl_time(NcclColl::all_reduce, kOneGiB, g, nv, net, NcclAlgo::ring,
                                    NcclProto::simple);
  REQUIRE(ring);
  CHECK(near(*ring, 21'958'572));
  CHECK(cost::nccl_best(NcclColl::all_reduce, kOneGiB, g, nv, net).algo == NcclAlgo::ring);
  // 64 KiB: Tree/LL: bus bw min(0.92 x 100 / 3.8, 20.4) = 20.4, / 2, x 0.6 (log2(1024) = 10)
  // = 6.12 GB/s: 65,536 / 6.12e9 = 10.708 us; latency 6.8 + 2 (7 x 0.6 + 3 x 5.0) = 45.2 us.
  const auto tree = cost::nccl_time(NcclColl::all_reduce, Bytes{65'536}, g, nv, net,
                                    NcclAlgo::tree, NcclProto::ll);
  REQUIRE(tree);
  CHECK(near(*tree, 55'908.5));
  const cost::NcclChoice small = cost::nccl_best(NcclColl::all_reduce, Bytes{65'536}, g, nv, net);
  CHECK(small.algo == NcclAlgo::tree);
  CHECK(small.time == *tree);
  // Forcing the ring (parallel.allreduce: ring) keeps NCCL's protocol choice.
  const cost::NcclChoice forced =
      cost::nccl_best(NcclColl::all_reduce, Bytes{65'536}, g, nv, net, cost::CollectiveAlgo::ring);
  CHECK(forced.algo == NcclAlgo::ring);
  CHECK(forced.time > small.time);
}

TEST_CASE("gathers and scatters are rings of (n-1)/n of the buffer, a link's latency scales the steps",
          "[cost][nccl]") {
  hw::LinkSpec nv = preset("nvlink3");
  // Ring/Simple all-gather of 2^30 over 8: 7/8 x 2^30 / 235e9 = 3,997,974.88 ns + 8.4 + 7 x 3.4 us.
  const auto ag = cost::nccl_time(NcclColl::all_gather, kOneGiB, {8, 1}, nv, nv, NcclAlgo::ring,
                                  NcclProto::simple);
  REQUIRE(ag);
  CHECK(near(*ag, 3'997'974.88 + 32'200));
  CHECK_FALSE(cost::nccl_time(NcclColl::reduce_scatter, kOneGiB, {8, 1}, nv, nv, NcclAlgo::tree,
                              NcclProto::simple));
  // Twice the link latency: 8.4 + 7 x 6.8 = 56 us.
  nv.latency = core::Duration{6'800};
  CHECK(near(*cost::nccl_time(NcclColl::all_gather, kOneGiB, {8, 1}, nv, nv, NcclAlgo::ring,
                              NcclProto::simple),
             3'997'974.88 + 56'000));
  // LL128 is offered over NVLink only.
  const hw::LinkSpec pci = preset("pcie4");
  CHECK_FALSE(cost::nccl_time(NcclColl::all_reduce, kOneGiB, {8, 1}, pci, pci, NcclAlgo::ring,
                              NcclProto::ll128));
}

TEST_CASE("NCCL model edge cases", "[cost][nccl]") {
  const hw::LinkSpec nv = preset("nvlink3");
  CHECK(cost::nccl_best(NcclColl::all_reduce, kOneGiB, {1, 1}, nv, nv).time.ns == 0);
  CHECK(cost::nccl_best(NcclColl::all_gather, Bytes{0}, {8, 1}, nv, nv).time.ns == 0);
  CHECK_THROWS_AS(cost::nccl_best(NcclColl::all_reduce, kOneGiB, {0, 1}, nv, nv),
                  std::invalid_argument);
  CHECK_THROWS_AS(cost::nccl_best(NcclColl::all_reduce, kOneGiB, {4, 8}, nv, nv),
                  std::invalid_argument);
  CHECK_THROWS_AS(cost::nccl_best(NcclColl::all_reduce, Bytes{-1}, {8, 1}, nv, nv),
                  std::invalid_argument);
  hw::LinkSpec dead = nv;
  dead.bandwidth = core::Bandwidth{0};
  CHECK_THROWS_AS(cost::nccl_best(NcclColl::all_reduce, kOneGiB, {8, 1}, dead, dead),
                  std::invalid_argument);
}
