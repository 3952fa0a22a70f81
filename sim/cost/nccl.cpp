#include "sim/cost/nccl.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>
#include <string>

// Every constant below is NCCL 2.30's (NVIDIA/nccl src/graph/tuning.cc and
// src/transport/nvls.cc), listed with its meaning in docs/collectives.md.

namespace trainsim::cost {
namespace {

using core::Bytes;
using core::Duration;

constexpr int kAlgos = 4, kProtos = 3;
constexpr int idx(NcclAlgo a) { return static_cast<int>(a); }
constexpr int idx(NcclProto p) { return static_cast<int>(p); }

// baseLatencies (us): Tree, Ring, NVLS, NVLS Tree x LL, LL128, Simple.
constexpr double kBaseLat[kAlgos][kProtos] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}};
// hwLatencies (us) per step: NVLink, PCI, network x algorithm x protocol.
constexpr double kHwLat[3][kAlgos][kProtos] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 25}, {0, 0, 25}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}},
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 20.9}}};
// Tree bandwidth correction by log2(bytes / 64), 64 B to 256 MB (LL, LL128, Simple).
constexpr double kTreeCorrection[kProtos][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
constexpr int kNvlsChannels = 16;       // NVLS_NCHANNELS_SM90
constexpr double kNvlsEfficiency = 0.85;  // nvlsEfficiency, Hopper
constexpr double kNetOverheadUs = 1.0;  // getNetOverhead, x86 Intel hosts (x3 for Simple)

// Ring/Simple step latency of a fabric: the figure a link's own latency is measured against.
double ring_simple_us(hw::Fabric f) {
  return kHwLat[static_cast<int>(f)][idx(NcclAlgo::ring)][idx(NcclProto::simple)];
}

// llMaxBws (GB/s): one node by GPU generation; several nodes by node count (x86 Intel row).
double ll_max_bw(int sm, std::int64_t nodes) {
  if (nodes == 1) return sm >= 100 ? 282.0 : sm >= 90 ? 141.0 : sm >= 80 ? 87.7 : 39.0;
  return nodes == 2 ? 39.0 : 20.4;
}

// perChMaxNVLSTreeBws (GB/s per channel), Hopper: 2 nodes, more.
double nvls_tree_max_bw(std::int64_t nodes) {
  return nodes <= 2 ? 57.7 : 45.5;
}

int log2i(std::int64_t n) {
  return n <= 0 ? 0 : std::bit_width(static_cast<std::uint64_t>(n)) - 1;
}

struct Model {
  double bus_gbs = 0;  // bus bandwidth, GB/s
  double lat_us = 0;
};

bool offered(NcclColl coll, NcclGroup g, const hw::LinkSpec& intra, NcclAlgo a, NcclProto p) {
  const bool hopper_nvls = intra.nvls && intra.sm >= 90;
  if ((a == NcclAlgo::nvls || a == NcclAlgo::nvls_tree) && (p != NcclProto::simple || !hopper_nvls))
    return false;
  if (a == NcclAlgo::tree && coll != NcclColl::all_reduce) return false;
  if (a == NcclAlgo::nvls && g.nodes > 1) return false;  // multi-node NVLS needs CollNet
  if (a == NcclAlgo::nvls_tree && (g.nodes == 1 || coll != NcclColl::all_reduce)) return false;
  // LL128 is enabled by default only over NVLink inside the node.
  if (p == NcclProto::ll128 && intra.fabric != hw::Fabric::nvlink) return false;
  return true;
}

}  // namespace

std::string_view name(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::ring: return "ring";
    case NcclAlgo::tree: return "tree";
    case NcclAlgo::nvls: return "nvls";
    case NcclAlgo::nvls_tree: return "nvls_tree";
  }
  return "?";
}

std::string_view name(NcclProto p) {
  switch (p) {
    case NcclProto::ll: return "LL";
    case NcclProto::ll128: return "LL128";
    case NcclProto::simple: return "Simple";
  }
  return "?";
}

std::optional<Duration> nccl_time(NcclColl coll, Bytes bytes, NcclGroup g,
                                  const hw::LinkSpec& intra, const hw::LinkSpec& inter,
                                  NcclAlgo a, NcclProto p) {
  if (g.ranks < 1 || g.nodes < 1 || g.nodes > g.ranks)
    throw std::invalid_argument("NCCL group of " + std::to_string(g.ranks) + " ranks on " +
                                std::to_string(g.nodes) + " nodes");
  if (bytes.value < 0) throw std::invalid_argument("collective buffer size must not be negative");
  for (const hw::LinkSpec* l : {&intra, &inter})
    if (!(l->bandwidth.bytes_per_s > 0) || l->latency.ns < 0)
      throw std::invalid_argument("link '" + l->name + "': bandwidth must be positive, latency not negative");
  if (!offered(coll, g, intra, a, p)) return std::nullopt;
  if (g.ranks == 1 || bytes.value == 0) return Duration{};
  // Groups whose ranks do not fill whole nodes are priced with the smaller share per node.
  const std::int64_t n = g.ranks, nodes = g.nodes, ppn = n / nodes;
  const hw::LinkSpec& net = nodes > 1 ? inter : intra;
  const int sm = intra.sm > 0 ? intra.sm : 80;
  const int nsteps = static_cast<int>(coll == NcclColl::all_reduce ? 2 * (n - 1) : n - 1);
  const int ia = idx(a), ip = idx(p);

  // Bus bandwidth: the link's (busBw of Simple rings), refined per algorithm and protocol.
  double bw = net.bandwidth.bytes_per_s * 1e-9;
  const double intra_bw = intra.bandwidth.bytes_per_s * 1e-9;
  if (a == NcclAlgo::nvls || a == NcclAlgo::nvls_tree) {
    double nv = intra_bw * kNvlsEfficiency * (kNvlsChannels - 1) / kNvlsChannels;
    nv *= coll == NcclColl::all_reduce ? 2.0 : static_cast<double>(ppn - 1) / ppn;
    bw = a == NcclAlgo::nvls ? nv
                             : std::min({nv, bw * (nodes <= 2 ? 2.0 : 1.0),
                                         kNvlsChannels * nvls_tree_max_bw(nodes)});
  }
  if (a == NcclAlgo::ring && p == NcclProto::ll) bw = std::min(ll_max_bw(sm, nodes), bw * 0.5);
  if (a == NcclAlgo::ring && p == NcclProto::ll128) bw *= 0.92;
  if (a == NcclAlgo::tree) bw *= 0.92;
  if (a == NcclAlgo::tree && p == NcclProto::ll) bw = std::min(bw / 3.8, ll_max_bw(sm, nodes));
  if (a == NcclAlgo::tree && p == NcclProto::ll128) bw *= nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
  // Bus to algorithm bandwidth (NVLS gathers and scatters stay bus bandwidth).
  if (a == NcclAlgo::tree) bw *= 0.5;
  else if (coll == NcclColl::all_reduce || a == NcclAlgo::ring)
    bw *= static_cast<double>(n) / nsteps;

  // Latency: base + steps x per-step latency of each fabric, scaled by the links' own latency.
  const double intra_scale = intra.latency.ns * 1e-3 / ring_simple_us(intra.fabric);
  const double inter_scale = inter.latency.ns * 1e-3 / ring_simple_us(hw::Fabric::net);
  double intra_lat = kHwLat[static_cast<int>(intra.fabric)][ia][ip] * intra_scale;
  const int net_algo = ppn == 1 ? idx(NcclAlgo::tree) : ia;
  const double inter_lat = kHwLat[2][net_algo][ip] * inter_scale;
  double lat = kBaseLat[ia][ip];
  if (a == NcclAlgo::ring) {
    if (nodes > 1) intra_lat = std::max(intra_lat, kNetOverheadUs * (p == NcclProto::simple ? 3 : 1));
    const std::int64_t inter_steps =
        nodes == 1 ? 0 : coll == NcclColl::all_reduce ? 2 * (nodes - 1) : nodes - 1;
    lat += static_cast<double>(nsteps - inter_steps) * intra_lat + static_cast<double>(inter_steps) * inter_lat;
  } else if (a == NcclAlgo::tree) {
    lat += 2 * (static_cast<double>(ppn - 1) * intra_lat + log2i(nodes) * inter_lat);
  } else if (a == NcclAlgo::nvls) {
    lat = intra_lat;
  } else {
    lat += intra_lat + 2 * log2i(nodes) * inter_lat;
  }

  // ncclTopoGetAlgoTime: tree correction by size, ring plateau across nodes.
  const int log_size = log2i(bytes.value >> 6);
  if (a == NcclAlgo::tree && log_size < 23) bw *= kTreeCorrection[ip][log_size];
  if (a == NcclAlgo::ring && p == NcclProto::simple && nodes > 1 && coll == NcclColl::all_reduce &&
      bytes.value / (kNvlsChannels * n) >= 64)
    lat *= sm < 80 ? 1.9 : 1.4;
  if (!(bw > 0)) return std::nullopt;
  return core::duration_from_seconds(lat * 1e-6 + static_cast<double>(bytes.value) / (bw * 1e9));
}

NcclChoice nccl_best(NcclColl coll, Bytes bytes, NcclGroup g, const hw::LinkSpec& intra,
                     const hw::LinkSpec& inter, std::optional<CollectiveAlgo> only) {
  NcclChoice best;
  bool found = false;
  for (NcclAlgo a : {NcclAlgo::tree, NcclAlgo::ring, NcclAlgo::nvls, NcclAlgo::nvls_tree}) {
    if (only && !((*only == CollectiveAlgo::ring && a == NcclAlgo::ring) ||
                  (*only == CollectiveAlgo::tree && a == NcclAlgo::tree)))
      continue;
    for (NcclProto p : {NcclProto::ll, NcclProto::ll128, NcclProto::simple}) {
      const auto t = nccl_time(coll, bytes, g, intra, inter, a, p);
      if (t && (!found || *t < best.time)) best = {*t, a, p}, found = true;
    }
  }
  if (!found) {  // tree forced on a collective NCCL runs only as a ring
    best = nccl_best(coll, bytes, g, intra, inter, CollectiveAlgo::ring);
  }
  return best;
}

}  // namespace trainsim::cost
