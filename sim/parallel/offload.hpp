#pragma once
// Offload (ZeRO-Offload, Ren et al. 2021; ZeRO-Infinity's parameter offload): what moves from a
// GPU to host memory, the ops that carry it over PCIe, the CPU optimizer step, and the host
// memory each node needs. Pure functions; lower() emits the ops (docs/architecture.md, "Offload").
#include <cstdint>
#include <vector>

#include "sim/parallel/program.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::parallel {

// Bytes per parameter the offloaded states take in host memory, before ZeRO sharding:
// optimizer states as state_bytes_per_param says (mixed-precision Adam: 12 = fp32 master + m + v),
// fp32 gradients (4; DeepSpeed accumulates and reduces them in fp32 on the host), and weights:
// the fp32 copy the CPU optimizer updates when training in fp32 (4), else the 16-bit weights when
// parameters are offloaded (2), else none.
struct HostStateBytes {
  int weights = 0;
  int gradients = 0;
  int optimizer_states = 0;
  int total() const { return weights + gradients + optimizer_states; }
};
HostStateBytes host_state_bytes_per_param(const scenario::Scenario& s);

// Host memory one GPU holds for `params` parameters (its stage after tensor sharding): every
// category divided over `data` ranks when ZeRO shards it (`zero` is the effective stage: 0 when
// data is 1), rounded up. All zero without offload.
hw::MemBreakdown host_states(const scenario::Scenario& s, std::int64_t params, int zero, std::int64_t data);

// The GPU's own model states with offload: optimizer states leave (optimizer offload) and so do
// the resident weights (parameter offload). Gradients with optimizer offload are transient
// (booked per micro-batch from a layer's backward until their copy to the host ends), so none are
// counted as a model state.
void remove_offloaded_states(const scenario::OffloadSpec& off, hw::MemBreakdown& persistent,
                             hw::MemBreakdown& model_states);

// A copy over the GPU's PCIe link: `kind` pcie_h2d or pcie_d2h, on that direction's stream.
Op pcie_copy_op(OpKind kind, std::int32_t layer, std::int32_t microbatch, std::int32_t chunk, core::Bytes bytes);

// Bytes the CPU optimizer streams through host DRAM for `params` parameters: reads the fp32
// gradient (4), reads and writes every optimizer state (2 x K), writes the 16-bit weights for the
// GPU (2) or, in fp32, reads and writes the fp32 weights (8). Adam on a CPU is memory-bound
// (about 1 FLOP per byte moved, far below a CPU's ridge point), so time = bytes / DRAM bandwidth.
core::Bytes cpu_optimizer_traffic(const scenario::Scenario& s, std::int64_t params);
Op cpu_optimizer_op(core::Bytes traffic);

// Each GPU's share of its node's DRAM bandwidth: the node's GPUs run their CPU optimizer steps
// at the same time (cluster.host_memory_bandwidth / gpus_per_node).
core::Bandwidth host_bandwidth_per_gpu(const scenario::Scenario& s);

// Host memory per node: rank r runs pipeline stage (r / pipeline_stride) % pipeline and node k
// holds ranks [k x gpus_per_node, (k+1) x gpus_per_node). Returns the demand of the fullest
// node (sum of its GPUs' Program::host) and the stage holding most of it there (-1 when no host
// memory is used). The pattern repeats every lcm(gpus_per_node, pipeline_stride x pipeline)
// ranks, so only that many are visited; above 2^24 ranks the bound gpus_per_node x the largest
// per-GPU demand is returned instead (exact when every stage holds the same).
struct NodeHostDemand {
  core::Bytes fullest{};
  std::int32_t stage = -1;
};
NodeHostDemand host_per_node(const std::vector<Program>& programs, std::int64_t pipeline_stride,
                             std::int64_t gpus_per_node, std::int64_t devices);

}  // namespace trainsim::parallel
