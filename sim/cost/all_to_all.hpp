#pragma once
// All-to-all over a group that spans nodes (docs/collectives.md, "All-to-all across nodes").
// NCCL runs an all-to-all as grouped point-to-point sends and receives (ncclSend / ncclRecv
// between ncclGroupStart and ncclGroupEnd, NCCL's "Point-to-point communication" page), so
// each rank's message to a rank on another node leaves through the network: on a DGX H100 each
// GPU has its own 400 Gb/s NIC, and every GPU of the node sends at once, so the node's NICs
// carry no more than one GPU's share each. Of the S bytes a rank holds, (n - p) / n go to the
// n - p ranks on other nodes over its network bandwidth, (p - 1) / n to the ranks of its node
// over the intra-node fabric, both at once:
//   time = max((n - p) / n x S / B_inter, (p - 1) / n x S / B_intra) + (n - 1) x latency_inter
// for n ranks, p of them on each node. (The alpha-beta all-to-all inside a node is
// cost::all_to_all_time.)
#include <cstdint>

#include "sim/core/units.hpp"
#include "sim/hw/device.hpp"

namespace trainsim::cost {

core::Duration all_to_all_across_nodes(core::Bytes bytes, std::int64_t n,
                                       std::int64_t ranks_per_node, const hw::LinkSpec& intra,
                                       const hw::LinkSpec& inter);

}  // namespace trainsim::cost
