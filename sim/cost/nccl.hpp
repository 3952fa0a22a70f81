#pragma once
// Collectives as NCCL runs them: NCCL's own performance model (src/graph/tuning.cc,
// ncclTopoTuneModel and ncclTopoGetAlgoTime, NCCL 2.30) predicts each algorithm and protocol's
// time as latency + bytes / bandwidth and runs the fastest; trainsim does the same. Sources and
// every constant are in docs/collectives.md.
#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/cost/cost.hpp"

namespace trainsim::cost {

enum class NcclColl { all_reduce, reduce_scatter, all_gather };
// In the order of NCCL's tables (NCCL_ALGO_TREE, NCCL_ALGO_RING, ..., NVLS, NVLS_TREE).
enum class NcclAlgo { tree, ring, nvls, nvls_tree };
enum class NcclProto { ll, ll128, simple };

std::string_view name(NcclAlgo a);
std::string_view name(NcclProto p);

// The group a collective runs over: `ranks` GPUs on `nodes` nodes (ranks / nodes per node).
struct NcclGroup {
  std::int64_t ranks = 1;
  std::int64_t nodes = 1;
};

struct NcclChoice {
  core::Duration time{};
  NcclAlgo algo = NcclAlgo::ring;
  NcclProto proto = NcclProto::simple;
};

// NCCL's predicted time of one (algorithm, protocol), or nullopt where NCCL does not offer it
// for this collective, group and fabric. `bytes` is the full buffer S of each rank (the output
// of an all-gather, the input of a reduce-scatter), as NCCL's nBytes. `intra` is the link inside
// a node, `inter` the link a group spanning nodes sees (cost::spanning_link); its latency and
// the intra link's scale NCCL's per-step network and NVLink/PCI latencies (a link whose latency
// equals NCCL's Ring/Simple step for its fabric reproduces the tables exactly).
std::optional<core::Duration> nccl_time(NcclColl coll, core::Bytes bytes, NcclGroup g,
                                        const hw::LinkSpec& intra, const hw::LinkSpec& inter,
                                        NcclAlgo algo, NcclProto proto);

// The fastest of every (algorithm, protocol) NCCL offers, restricted to `only` when set
// (parallel.allreduce ring / tree, as NCCL_ALGO). n == 1 or an empty buffer costs zero.
NcclChoice nccl_best(NcclColl coll, core::Bytes bytes, NcclGroup g, const hw::LinkSpec& intra,
                     const hw::LinkSpec& inter, std::optional<CollectiveAlgo> only = std::nullopt);

}  // namespace trainsim::cost
