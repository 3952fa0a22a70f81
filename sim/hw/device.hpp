#pragma once
// Virtual device and link specifications. Plain data; presets carry the vendor data-sheet
// figures they come from (see docs/devices.md for each source).
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sim/core/units.hpp"

namespace trainsim::hw {

struct DeviceSpec {
  std::string name;               // preset key, e.g. "a100-80gb"
  std::string description;        // e.g. "NVIDIA A100 80GB SXM4"
  core::Bytes memory{};           // the total PyTorch reports (total_memory; devices.md)
  core::FlopRate peak_fp32{};     // dense FP32 (non tensor-core) peak
  core::FlopRate peak_tf32{};     // dense TF32 tensor-core peak (0 if none)
  core::FlopRate peak_16bit{};    // dense FP16/BF16 tensor-core peak (no sparsity)
  core::Bandwidth memory_bandwidth{};
  // Bytes not available to tensors: CUDA/ROCm context, cuBLAS/cuDNN/NCCL workspaces.
  core::Bytes reserved{};
  // Achievable fractions of peak (roofline ceilings) for GEMM-heavy and for other kernels.
  double matmul_efficiency = 0.7;
  double memory_efficiency = 0.8;
  core::Duration kernel_launch{};  // fixed overhead per kernel
  std::string source;              // where the figures come from
  // GEMM efficiency falls for small matrices: a kernel of F FLOPs runs at
  // matmul_efficiency x F / (F + peak x matmul_ramp_s), i.e. it reaches half its ceiling when
  // its work would take matmul_ramp_s at peak (too few tiles to fill the SMs; see devices.md).
  double matmul_ramp_s = 1.6e-6;
  // Dense FP8 tensor-core peak (Hopper, Ada, CDNA3); 0 where the device has no FP8 GEMMs, and
  // then training.precision fp8 is refused.
  core::FlopRate peak_fp8{};
  // Host time to issue one kernel from eager PyTorch (Python, the ATen dispatcher, autograd
  // bookkeeping and cudaLaunchKernel). Kernels are launched asynchronously, so a compute op
  // takes at least its launches x host_dispatch: the GPU idles when its kernels are shorter
  // than the host takes to issue them (small models, high tensor degrees; docs/devices.md).
  core::Duration host_dispatch{kDefaultHostDispatchNs};
  // 45 us: an eager PyTorch model measured issuing 1,185 kernels in 53.7 ms while its GPU
  // idled (docs/devices.md, "Host dispatch").
  static constexpr std::int64_t kDefaultHostDispatchNs = 45000;
  // Streaming multiprocessors, which run one GEMM tile each at a time: the wave quantization
  // of GEMM efficiency by shape (sim/cost/gemm_shape.hpp, docs/gemm.md). 0: not modelled.
  int sm_count = 0;
  // Board power (W) the data sheet quotes the peaks at (its TDP); 0: not given. With a
  // power_limit_w below it the SM clock, and every FLOP rate, scales by (limit / tdp)^(1/3)
  // (power.hpp, docs/devices.md "Power limit"); 0: run at the TDP.
  double tdp_w = 0;
  double power_limit_w = 0;
  // Achievable fraction of peak_fp8 for FP8 GEMMs (training.precision fp8), where it was
  // measured apart from the 16-bit one (docs/devices.md); 0: matmul_efficiency.
  double fp8_matmul_efficiency = 0;
  // Achievable fractions of peak_16bit for the flash-attention kernels' forward and backward
  // (FLOPs as the kernels compute them; docs/devices.md, "Flash attention"); 0: no published
  // figure for the part, cost::flash_forward_efficiency / flash_backward_efficiency's rule.
  double flash_efficiency = 0;
  double flash_backward_efficiency = 0;
};

// FlashAttention-2 on an A100 80GB SXM4 (Dao 2023, FlashAttention-2, sections 1 and 4.1): the
// forward reaches up to 73% and the backward up to 63% of the 312 TFLOPS BF16 peak; the A100
// presets' matmul_efficiency (docs/devices.md, "Efficiency defaults"). The rule for parts with
// no published flash figure scales these by the part's matmul_efficiency over the A100's.
inline constexpr double kA100FlashForward = 0.73;
inline constexpr double kA100FlashBackward = 0.63;
inline constexpr double kA100MatmulEfficiency = 0.80;

// A link class between devices (intra-node fabric or inter-node network), alpha-beta model:
// time(bytes) = latency + bytes / bandwidth. Bandwidth is per direction, per device.
// NCCL's hardware class of a link (src/graph/tuning.cc: NVLink, PCI, network), which picks the
// row of its latency tables (docs/collectives.md).
enum class Fabric { nvlink, pci, net };

struct LinkSpec {
  std::string name;
  core::Bandwidth bandwidth{};
  core::Duration latency{};
  std::string source;
  Fabric fabric = Fabric::nvlink;
  // GPU generation NCCL tunes for, as SM major x 10 (70 Volta, 80 Ampere, 90 Hopper); 0 when
  // the link is not tied to one (PCIe, networks): the intra-node link's decides.
  int sm = 0;
  // NVSwitch with NVLink SHARP (HGX H100/H200): NCCL's NVLS algorithm runs inside the node.
  bool nvls = false;
};

std::span<const DeviceSpec> device_presets();
// Case-insensitive lookup ("A100-80GB" == "a100-80gb"); nullopt when unknown.
std::optional<DeviceSpec> find_device(std::string_view name);

std::span<const LinkSpec> link_presets();
std::optional<LinkSpec> find_link(std::string_view name);

// The host side of a node, for offloading (ZeRO-Offload): DRAM capacity per node, the DRAM
// bandwidth the node's CPUs achieve (shared by the node's GPUs' CPU optimizer steps) and the
// link between each GPU and host memory. Presets are the typical server of each GPU generation
// (docs/devices.md, "Host presets"); scenarios override each field under `cluster:`.
struct HostSpec {
  std::string name;                   // e.g. "dgx-a100-640gb"
  core::Bytes memory{};               // DRAM per node
  core::Bandwidth memory_bandwidth{}; // achievable DRAM bandwidth per node (all sockets)
  std::string pcie;                   // link preset between one GPU and host memory
  std::string source;
};

std::span<const HostSpec> host_presets();
std::optional<HostSpec> find_host(std::string_view name);
// The host preset typical for a device preset name (v100 -> dgx-2, a100-80gb -> dgx-a100-640gb,
// ...); "server" for anything else.
const HostSpec& default_host(std::string_view device_name);

}  // namespace trainsim::hw
