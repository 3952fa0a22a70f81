#pragma once
// Pure cost functions: how long a kernel or a collective takes. No state, no simulation.
#include <cstdint>

#include "sim/core/units.hpp"
#include "sim/hw/device.hpp"

namespace trainsim::cost {

// half = fp16/bf16 tensor cores; fp8 = fp8 tensor cores (Hopper, Ada), 16-bit where a device has none
enum class MathMode { fp32, tf32, half, fp8 };

// One kernel's work: FLOPs and bytes moved to/from device memory.
struct KernelWork {
  double flops = 0;
  core::Bytes bytes{};
  bool matmul = false;  // runs on tensor cores at matmul_efficiency; else vector units
  // The op's memory traffic belongs to separate element-wise kernels (softmax, dropout, GeLU
  // between GEMMs) that run after the GEMMs rather than overlapping them: time adds.
  bool serial_memory = false;
  // Every kernel the op launches (GEMMs and the element-wise kernels around them), which the
  // host issues one at a time; 0: the op's GEMM/kernel count.
  int launches = 0;
  // The tile and wave quantization of the op's GEMMs on the device (gemms_efficiency,
  // gemm_shape.hpp): matmul work runs at matmul_efficiency x this x the ramp. 1: not modelled
  // (no shapes, or a device without sm_count).
  double shape_efficiency = 1.0;
  // Flash attention (docs/devices.md, "Flash attention"): of `flops`, the attention core's as
  // the model counts it (the whole s x s square; 0: no flash kernel in the op), which the op
  // runs instead as flash kernels of `flash_forward` and `flash_backward` FLOPs (what they
  // compute: a causal mask's skipped blocks left out, the backward's recomputed scores in) at
  // the device's flash efficiencies of the 16-bit peak (of the FP8 peak with fp8_attention).
  double flash_model_flops = 0;
  double flash_forward = 0;
  double flash_backward = 0;
  bool fp8_attention = false;
  bool operator==(const KernelWork&) const = default;
};

// Roofline: max(flops / (peak x clock x efficiency(F)), bytes / (bandwidth x memory_efficiency))
// + kernel_launch x kernels, where efficiency(F) = matmul_efficiency x shape_efficiency x
// F / (F + peak x ramp)
// for matmul work of F = flops / kernels per kernel (GEMMs of small matrices do not fill the
// GPU) (fp8 GEMMs on a device with FP8 tensor cores: fp8_matmul_efficiency when set), and
// matmul_efficiency for vector work; clock = hw::power_clock_fraction(d), the SM
// clock under the device's power limit (1 without one). With serial_memory the two terms add.
// An op with flash attention (flash_model_flops > 0) runs flops - flash_model_flops as above
// and adds flash_forward / (peak x clock x flash_forward_efficiency(d)) + flash_backward /
// (peak x clock x flash_backward_efficiency(d)) to the compute term, peak the 16-bit one (FP8
// under MathMode::fp8 with fp8_attention): no tile quantization or ramp (the efficiencies are
// measured on the kernels themselves).
// Zero work costs only the launch overhead (never 0 when kernels>0).
// The result is at least host_dispatch x launches (launches = w.launches, or kernels when 0):
// the host issues kernels no faster than that, and the GPU waits for them.
core::Duration kernel_time(const KernelWork& w, const hw::DeviceSpec& d, MathMode mode,
                           int kernels = 1);
// The two sides of kernel_time: the GPU's roofline time with its launch gaps, and the host's
// host_dispatch x (w.launches, or kernels when 0) plus `extra_launches` (collectives the op
// issues on its stream). kernel_time = max(device_time, host_time).
core::Duration device_time(const KernelWork& w, const hw::DeviceSpec& d, MathMode mode,
                           int kernels = 1);
core::Duration host_time(const KernelWork& w, const hw::DeviceSpec& d, int kernels = 1,
                         int extra_launches = 0);
// The fraction of the 16-bit peak a device's flash-attention kernels reach, forward and
// backward: the preset's published figure, else the A100's figures scaled by the device's
// matmul_efficiency over the A100's (docs/devices.md, "Flash attention").
double flash_forward_efficiency(const hw::DeviceSpec& d);
double flash_backward_efficiency(const hw::DeviceSpec& d);

// Whether kernel_time gives the same time for any work on devices a and b (the fields it reads
// are equal), so costs computed for one hold for the other.
bool same_kernel_speed(const hw::DeviceSpec& a, const hw::DeviceSpec& b);

enum class CollectiveAlgo { ring, tree };

// Alpha-beta collectives over n ranks on a link (bandwidth per rank per direction, latency
// alpha). `bytes` is the full buffer size S on each rank.
//   ring all-reduce:      2(n-1)/n * S/B + 2(n-1) alpha
//   tree all-reduce:      2 * S/B + 2 ceil(log2 n) alpha   (pipelined double binary tree)
//   reduce-scatter / all-gather (ring): (n-1)/n * S/B + (n-1) alpha
//   point-to-point:       S/B + alpha
// n == 1 costs zero.
core::Duration all_reduce_time(core::Bytes bytes, std::int64_t n, const hw::LinkSpec& link,
                               CollectiveAlgo algo = CollectiveAlgo::ring);
core::Duration reduce_scatter_time(core::Bytes bytes, std::int64_t n, const hw::LinkSpec& link);
core::Duration all_gather_time(core::Bytes bytes, std::int64_t n, const hw::LinkSpec& link);
// All-to-all of `bytes` per rank over n ranks (NCCL's pairwise exchange, as Megatron-LM's and
// DeepSpeed-MoE's token dispatchers use): each rank keeps its 1/n and sends (n-1)/n of the bytes
// in n-1 steps, (n-1)/n * bytes / bandwidth + (n-1) * latency.
core::Duration all_to_all_time(core::Bytes bytes, std::int64_t n, const hw::LinkSpec& link);
core::Duration p2p_time(core::Bytes bytes, const hw::LinkSpec& link);
// Whether every collective above (and spanning_link below, and cost::nccl_best) costs the same
// on links a and b.
bool same_link_speed(const hw::LinkSpec& a, const hw::LinkSpec& b);

// The link a collective over `ranks_per_node` ranks in each of several nodes effectively sees:
// NCCL runs one ring per NIC, so the inter-node hop of a group with k ranks per node gets k
// GPUs' share of the node's network bandwidth, capped by the intra-node fabric; latency is the
// network's.
hw::LinkSpec spanning_link(const hw::LinkSpec& intra, const hw::LinkSpec& inter,
                           std::int64_t ranks_per_node);

}  // namespace trainsim::cost
