// Congestion between pods (sim/cost/congestion.cpp; docs/scale.md): the uplinks of an
// oversubscribed pod shared by every group of a parallel dimension, worked by hand.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "sim/cost/all_to_all.hpp"
#include "sim/cost/congestion.hpp"
#include "sim/cost/cost.hpp"

using namespace trainsim;

namespace {

hw::LinkSpec link(const char* name, double gb_per_s, double latency_us) {
  hw::LinkSpec l;
  l.name = name;
  l.bandwidth = core::Bandwidth{gb_per_s * 1e9};
  l.latency = core::Duration{static_cast<std::int64_t>(latency_us * 1000)};
  return l;
}

const hw::LinkSpec kIntra = link("nvlink", 450, 3);
const hw::LinkSpec kNic = link("nic", 50, 5);

}  // namespace

TEST_CASE("a ring with fewer than R nodes in each pod gets m / R of a NIC per node", "[cost][congestion]") {
  // Two pods of 4 nodes x 8 GPUs, R = 7; a data-parallel group of 8 ranks, one per node, so 4 of
  // its members in each pod (m = 4, k = 1). The pod's 32 GPUs belong to 32 / 4 = 8 such groups,
  // whose rings share 32 x 50 / 7 GB/s of uplink: 4 x 50 / 7 = 28.571 GB/s each.
  const hw::LinkSpec spanning = cost::spanning_link(kIntra, kNic, 1);
  REQUIRE(spanning.bandwidth.bytes_per_s == 50e9);
  const hw::LinkSpec l = cost::congested_link(spanning, kNic, 4, 7);
  CHECK(l.bandwidth.bytes_per_s == Approx(4 * 50e9 / 7).epsilon(1e-12));
  CHECK(l.latency == spanning.latency);
  CHECK(cost::congestion_factor(spanning, kNic, 4, 7) == Approx(7.0 / 4).epsilon(1e-12));
  // A 1 GB ring all-reduce over the 8 ranks: beta term 2 x 7/8 x 1e9 / 50e9 = 35 ms on the
  // spanning link, x 7/4 = 61.25 ms congested; latency 2 x 7 x 5 us = 70 us either way.
  const core::Bytes gb{1'000'000'000};
  CHECK(core::to_seconds(cost::all_reduce_time(gb, 8, spanning)) == Approx(0.035 + 70e-6).epsilon(1e-9));
  CHECK(core::to_seconds(cost::all_reduce_time(gb, 8, l)) == Approx(0.06125 + 70e-6).epsilon(1e-9));
}

TEST_CASE("full bisection, a group inside one pod, or R nodes per pod leave the link alone", "[cost][congestion]") {
  const hw::LinkSpec spanning = cost::spanning_link(kIntra, kNic, 1);
  // R = 1: m x B_nic >= k x B_nic whenever the group spans pods.
  CHECK(cost::congested_link(spanning, kNic, 4, 1).bandwidth.bytes_per_s == spanning.bandwidth.bytes_per_s);
  // pod_members 0: the group stays in one pod.
  CHECK(cost::congested_link(spanning, kNic, 0, 7).bandwidth.bytes_per_s == spanning.bandwidth.bytes_per_s);
  // 8 of its nodes in each pod: 8 x 50 / 7 = 57.1 GB/s > 50 GB/s, the NIC is the limit.
  CHECK(cost::congested_link(spanning, kNic, 8, 7).bandwidth.bytes_per_s == spanning.bandwidth.bytes_per_s);
  CHECK(cost::congestion_factor(spanning, kNic, 8, 7) == 1);
}

TEST_CASE("what congests is the group's nodes per pod, not its members", "[cost][congestion]") {
  // Eight members per node (k = 8) on 4 nodes of each pod (m = 32), R = 7: the rings take
  // min(450, 8 x 50) = 400 GB/s and the uplinks leave 32 x 50 / 7 = 228.6 GB/s: 7/4 slower,
  // as with one member per node.
  const hw::LinkSpec spanning = cost::spanning_link(kIntra, kNic, 8);
  REQUIRE(spanning.bandwidth.bytes_per_s == 400e9);
  CHECK(cost::congestion_factor(spanning, kNic, 32, 7) == Approx(7.0 / 4).epsilon(1e-12));
}

TEST_CASE("an all-to-all across pods is bound by the uplinks' B_nic / R per GPU", "[cost][congestion]") {
  // 16 expert ranks on 2 nodes of 8 GPUs, one node per pod (m = 8), S = 1.6 GB per rank. Node
  // bound: 8/16 x 1.6e9 / 50e9 = 16 ms over the NICs (7/16 x 1.6e9 / 450e9 = 1.56 ms over NVLink).
  // Uplinks at R = 7: 8/16 x 1.6e9 x 7 / 50e9 = 112 ms. Latency 15 x 5 us = 75 us.
  const core::Bytes s{1'600'000'000};
  const double node = core::to_seconds(cost::all_to_all_across_nodes(s, 16, 8, kIntra, kNic));
  CHECK(node == Approx(0.016 + 75e-6).epsilon(1e-9));
  CHECK(core::to_seconds(cost::all_to_all_uplink_time(s, 16, 8, kNic, 7)) ==
        Approx(0.112 + 75e-6).epsilon(1e-9));
  // R = 1: the uplinks carry what the NICs do, no slower.
  CHECK(core::to_seconds(cost::all_to_all_uplink_time(s, 16, 8, kNic, 1)) == Approx(node).epsilon(1e-9));
  // Inside one pod: no uplink bound.
  CHECK(cost::all_to_all_uplink_time(s, 16, 0, kNic, 7).ns == 0);
}

TEST_CASE("congestion refuses an oversubscription below 1 and negative members", "[cost][congestion]") {
  const hw::LinkSpec spanning = cost::spanning_link(kIntra, kNic, 1);
  CHECK_THROWS_AS(cost::congested_link(spanning, kNic, 4, 0.5), std::invalid_argument);
  CHECK_THROWS_AS(cost::congested_link(spanning, kNic, -1, 7), std::invalid_argument);
  CHECK_THROWS_AS(cost::all_to_all_uplink_time(core::Bytes{1}, 0, 1, kNic, 7), std::invalid_argument);
}
