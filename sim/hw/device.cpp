#include "sim/hw/device.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

// Every figure here is traced in docs/devices.md. Two rules keep the table consistent:
//  - memory: the total PyTorch reports for the device (what the driver leaves after its own
//    carve-outs: ECC, firmware, page tables); `reserved` is the runtime's own buffers only.
//  - links: bandwidth is what NCCL achieves for large messages (bus bandwidth, per direction,
//    per GPU), i.e. the vendor's nominal per-direction rate times a stated fraction, because
//    LinkSpec has no efficiency field and the alpha-beta formulas use it directly.

namespace trainsim::hw {
namespace {

using core::Bandwidth;
using core::Bytes;
using core::Duration;
using core::FlopRate;

constexpr FlopRate tflops(double t) {
  return FlopRate{t * 1e12};
}
constexpr Bandwidth gb_per_s(double g) {
  return Bandwidth{g * 1e9};
}
constexpr Bytes gib(std::int64_t n) {
  return Bytes{n * core::kGiB};
}
constexpr Bytes mib(std::int64_t n) {
  return Bytes{n * core::kMiB};
}
Duration us(double u) {
  return Duration{std::llround(u * 1000)};
}

// Fractions of nominal link bandwidth that NCCL reaches (see docs/devices.md, "Links").
constexpr double kNvlinkFraction = 235.0 / 300.0;  // NCCL caps sm80 NVLink busBw at 235 GB/s
constexpr double kPcieFraction = 0.80;             // TLP/DLLP overhead + host bridge
constexpr double kInfinibandFraction = 0.94;       // ~23.5 of 25 GB/s per HDR port
constexpr double kEthernetFraction = 0.90;         // RoCEv2 headers and congestion control

// NCCL ring/Simple per-step latencies, src/graph/tuning.cc hwLat[][RING][SIMPLE] (NCCL 2.8-2.18;
// 2.30 raised the network step to 14 us, docs/collectives.md).
constexpr double kNvlinkStepUs = 3.4;
constexpr double kPcieStepUs = 5.7;
constexpr double kNetStepUs = 9.6;

// Dense FP8 tensor-core peaks (data sheets give them with 2:4 sparsity; halved here):
// H100 SXM5 and H200 SXM 3,958 -> 1,978.9 TFLOPS (NVIDIA H100 / H200 datasheets); L4 485 ->
// 242.5 (L4 datasheet); RTX 4090 660.6 -> 330.3 with FP32 accumulate (Ada Lovelace whitepaper,
// appendix table); MI300X 5,229.8 -> 2,614.9 (AMD MI300X datasheet). Volta and Ampere have no
// FP8 tensor cores. H100 PCIe 3,026 -> 1,513 and H100 NVL 3,341 -> 1,670.5 (H100 datasheet);
// GH200 3,958 -> 1,978.9 (GH200 datasheet); L40S 1,466 -> 733 (L40S datasheet); B200 9,000 ->
// 4,500 (HGX B200: 72 PFLOPS FP8 with sparsity for 8 GPUs). MI250X has no FP8.
void set_fp8_peaks(std::vector<DeviceSpec>& v) {
  const std::pair<const char*, double> peaks[] = {
      {"h100-80gb", 1978.9}, {"h200-141gb", 1978.9}, {"l4", 242.5}, {"rtx-4090", 330.3}, {"mi300x", 2614.9},
      {"h100-pcie", 1513.0}, {"h100-nvl", 1670.5}, {"gh200-96gb", 1978.9}, {"l40s", 733.0}, {"b200", 4500.0}};
  for (auto& d : v)
    for (const auto& [name, tf] : peaks)
      if (d.name == name) d.peak_fp8 = tflops(tf);
}

// Streaming multiprocessors (GEMM wave quantization, docs/gemm.md), from NVIDIA's architecture
// whitepapers: Volta (Tesla V100: 80), Turing (Tesla T4: 40), Ampere GA100 (A100: 108) and GA102
// (RTX 3090: 82, RTX A6000: 84), Ada (RTX 4090: 128, L40S: 142, L4: 58), Hopper (H100 SXM5: 132,
// H100 PCIe: 114; H100 NVL, H200 and GH200 run the SXM5 configuration of GH100: 132). Devices
// not listed (A10G, B200, AMD's) leave it 0: no shape model.
void set_sm_counts(std::vector<DeviceSpec>& v) {
  const std::pair<const char*, int> sms[] = {
      {"v100-16gb", 80},  {"v100-32gb", 80},  {"a100-40gb", 108},  {"a100-80gb", 108},
      {"h100-80gb", 132}, {"h200-141gb", 132}, {"gh200-96gb", 132}, {"h100-pcie", 114},
      {"h100-nvl", 132},  {"l40s", 142},      {"rtx-a6000", 84},   {"l4", 58},
      {"t4", 40},         {"rtx-3090", 82},   {"rtx-4090", 128}};
  for (auto& d : v)
    for (const auto& [name, n] : sms)
      if (d.name == name) d.sm_count = n;
}

// Board power each data sheet quotes its peaks at (the TDP, or the top of its configurable
// range), in W, for device.power_limit (power.hpp, docs/devices.md "Power limit"): Tesla V100
// SXM2 300; A100 SXM4 400; H100 SXM5 and H200 SXM "up to 700"; H100 PCIe 350 (300-350); H100
// NVL 400 (350-400); HGX B200 1,000 per GPU; L40S 350; RTX A6000 300; A10 (A10G) 150; L4 72;
// T4 70; RTX 3090 350; RTX 4090 450. GH200 (one module power for CPU and GPU) and the AMD parts
// (presets are one GCD of a module) have none: power_limit then needs device.tdp.
void set_tdps(std::vector<DeviceSpec>& v) {
  const std::pair<const char*, double> tdps[] = {
      {"v100-16gb", 300}, {"v100-32gb", 300}, {"a100-40gb", 400}, {"a100-80gb", 400},
      {"h100-80gb", 700}, {"h200-141gb", 700}, {"h100-pcie", 350}, {"h100-nvl", 400},
      {"b200", 1000},     {"l40s", 350},       {"rtx-a6000", 300}, {"a10g", 150},
      {"l4", 72},         {"t4", 70},          {"rtx-3090", 350},  {"rtx-4090", 450}};
  for (auto& d : v)
    for (const auto& [name, w] : tdps)
      if (d.name == name) d.tdp_w = w;
}

// `memory` is the total PyTorch reports (torch.cuda.get_device_properties(0).total_memory, i.e.
// cudaDeviceProp::totalGlobalMem, the figure deviceQuery prints), from a published printout;
// `reserved` is what the runtime takes before the first tensor (docs/devices.md, "Reserved").
constexpr Bytes kRuntimeOlder = mib(768);   // Volta, Turing, Ampere, Ada
constexpr Bytes kRuntimeLarger = mib(1024);  // Hopper, Blackwell, CDNA

// Matmul efficiency of the parts whose best BF16 GEMM was measured the same way as the A100's
// (Bekman, ml-engineering, "Maximum Achievable Matmul FLOPS comparison table": the best mean
// torch.matmul TFLOPS over a search of shapes, as a fraction of the dense peak): A100 SXM 86.9%,
// H100 SXM 80.3% (H200 "the same"), GH200 83.8%, B200 77.6%. The A100's 0.80 (its large
// transformer GEMMs, and the vTrain step times) scaled by each part's measured fraction over the
// A100's: 0.80 x 80.3 / 86.9 = 0.74, 0.80 x 83.8 / 86.9 = 0.77, 0.80 x 77.6 / 86.9 = 0.71.
constexpr double kA100Matmul = kA100MatmulEfficiency;
constexpr double kA100Mamf = 0.869;
constexpr double kHopperMatmul = kA100Matmul * 0.803 / kA100Mamf;  // 0.739
constexpr double kGh200Matmul = kA100Matmul * 0.838 / kA100Mamf;   // 0.771
constexpr double kB200Matmul = kA100Matmul * 0.776 / kA100Mamf;    // 0.714
// Volta has no row in that table. A cuBLAS FP16 GEMM of M = N = K = 8192 on a Tesla V100 PCIe
// reaches about 101 TFLOPS of the 112 its 1.38 GHz boost clock gives, about 90% (NVIDIA developer
// forum, "Understanding IPC and issue slot utilization when using Tensor Cores", 2019: kernel
// volta_h884gemm_128x128_ldg8_nn); a single shape, so the best over a search is at least that:
// 0.80 x (101 / 112) / 86.9 = 0.83 for both V100 parts (the SXM2's 125 TFLOPS is the same
// tensor cores at 1.53 GHz).
constexpr double kVoltaMatmul = kA100Matmul * (101.0 / 112.0) / kA100Mamf;  // 0.830
// The RTX 4090 likewise: torch.matmul in BF16 on square shapes of 1,024 to 10,240 reaches at
// best 164.81 TFLOPS (n = 2,048; PyTorch 2.7, CUDA 12.8), 99.8% of the 165.2 its data sheet
// gives with FP32 accumulation at the 2.52 GHz boost clock, which the card exceeds under load
// (zzc0721/torch-performance-test-data issue 78): 0.80 x 0.998 / 0.869 = 0.92.
constexpr double kRtx4090Matmul = kA100Matmul * (164.81 / 165.2) / kA100Mamf;  // 0.919

// FP8 (float8_e4m3fn) GEMMs, from the same table's FP8 rows: H100 SXM 70.9% of 1,979, H200 SXM
// 73.4%, GH200 77.6%, B200 76.3%, each scaled the same way.
void set_fp8_efficiencies(std::vector<DeviceSpec>& v) {
  const std::pair<const char*, double> mamf[] = {
      {"h100-80gb", 0.709}, {"h200-141gb", 0.734}, {"gh200-96gb", 0.776}, {"b200", 0.763}};
  for (auto& d : v)
    for (const auto& [name, f] : mamf)
      if (d.name == name) d.fp8_matmul_efficiency = kA100Matmul * f / kA100Mamf;
}

// Flash-attention efficiencies (forward, backward) of the parts with a published figure for
// the kernels PyTorch's SDPA and flash-attn run (FlashAttention-2; docs/devices.md, "Flash
// attention"): the A100s (sm80) from Dao 2023; every Hopper part (sm90: the same GH100 SMs, on
// which FlashAttention-2 uses none of Hopper's new instructions) at the 35% Shah et al. 2024
// (FlashAttention-3, abstract and section 1) measured on the H100 SXM5, forward and backward.
// Others: cost::flash_forward_efficiency's rule.
void set_flash_efficiencies(std::vector<DeviceSpec>& v) {
  const std::pair<const char*, std::pair<double, double>> flash[] = {
      {"a100-40gb", {kA100FlashForward, kA100FlashBackward}},
      {"a100-80gb", {kA100FlashForward, kA100FlashBackward}},
      {"h100-80gb", {0.35, 0.35}},
      {"h200-141gb", {0.35, 0.35}},
      {"gh200-96gb", {0.35, 0.35}},
      {"h100-pcie", {0.35, 0.35}},
      {"h100-nvl", {0.35, 0.35}}};
  for (auto& d : v)
    for (const auto& [name, f] : flash)
      if (d.name == name) std::tie(d.flash_efficiency, d.flash_backward_efficiency) = f;
}

// Data-centre training parts (SXM/OAM modules and the Grace Hopper superchip).
void add_datacenter_devices(std::vector<DeviceSpec>& v) {
  // NVIDIA Volta: no TF32 and no BF16; peak_16bit is the FP16 tensor-core peak.
  v.push_back({"v100-16gb", "NVIDIA Tesla V100 SXM2 16GB", mib(16160), tflops(15.7), tflops(0),
               tflops(125), gb_per_s(900), kRuntimeOlder, kVoltaMatmul, 0.85, us(4),
               "NVIDIA Tesla V100 datasheet (SXM2): 15.7 TFLOPS FP32, 125 TFLOPS FP16 tensor, "
               "900 GB/s HBM2; no TF32/BF16; PyTorch total_memory 16160 MiB"});
  v.push_back({"v100-32gb", "NVIDIA Tesla V100 SXM2 32GB", Bytes{34089730048}, tflops(15.7),
               tflops(0), tflops(125), gb_per_s(900), kRuntimeOlder, kVoltaMatmul, 0.85, us(4),
               "NVIDIA Tesla V100 datasheet (SXM2): 15.7 TFLOPS FP32, 125 TFLOPS FP16 tensor, "
               "900 GB/s HBM2; no TF32/BF16; totalGlobalMem 32510 MiB"});
  v.push_back({"a100-40gb", "NVIDIA A100 40GB SXM4", Bytes{42298834944}, tflops(19.5),
               tflops(156), tflops(312), gb_per_s(1555), kRuntimeOlder, kA100Matmul, 0.85, us(4),
               "NVIDIA A100 datasheet (SXM4 40GB): 19.5 TFLOPS FP32, 156 TFLOPS TF32, "
               "312 TFLOPS BF16/FP16 dense, 1,555 GB/s HBM2; totalGlobalMem 40339 MiB"});
  v.push_back({"a100-80gb", "NVIDIA A100 80GB SXM4", Bytes{84987740160}, tflops(19.5),
               tflops(156), tflops(312), gb_per_s(2039), kRuntimeOlder, kA100Matmul, 0.85, us(4),
               "NVIDIA A100 datasheet (SXM4 80GB): 19.5 TFLOPS FP32, 156 TFLOPS TF32, "
               "312 TFLOPS BF16/FP16 dense, 2,039 GB/s HBM2e; totalGlobalMem 81051 MiB"});
  v.push_back({"h100-80gb", "NVIDIA H100 80GB SXM5", Bytes{85045477376}, tflops(66.9),
               tflops(494.7), tflops(989.4), gb_per_s(3350), kRuntimeLarger, kHopperMatmul, 0.90, us(4),
               "NVIDIA H100 datasheet/whitepaper (SXM5): 67 (66.9) TFLOPS FP32, 989 TF32 and "
               "1,979 BF16 TFLOPS with sparsity = 494.7 / 989.4 dense, 3.35 TB/s HBM3; "
               "totalGlobalMem 81106 MiB"});
  v.push_back({"h200-141gb", "NVIDIA H200 141GB SXM", mib(143156), tflops(66.9), tflops(494.7),
               tflops(989.4), gb_per_s(4800), kRuntimeLarger, kHopperMatmul, 0.90, us(4),
               "NVIDIA H200 datasheet (SXM): same GH100 compute as H100 SXM (494.7 TF32 / "
               "989.4 BF16 TFLOPS dense), 141 GB HBM3e at 4.8 TB/s; total_memory 143156 MiB"});
  v.push_back({"gh200-96gb", "NVIDIA GH200 Grace Hopper (H100 96GB HBM3)", mib(97280),
               tflops(67), tflops(494.5), tflops(989.5), gb_per_s(4000), kRuntimeLarger, kGh200Matmul,
               0.90, us(4),
               "NVIDIA GH200 Grace Hopper Superchip datasheet: 67 TFLOPS FP32, 989 TF32 and "
               "1,979 BF16 TFLOPS with sparsity = 494.5 / 989.5 dense, 96 GB HBM3 at 4 TB/s; "
               "totalGlobalMem 97280 MiB"});
  v.push_back({"b200", "NVIDIA B200 SXM 180GB", mib(182642), tflops(75), tflops(1125),
               tflops(2250), gb_per_s(8000), kRuntimeLarger, kB200Matmul, 0.90, us(4),
               "NVIDIA HGX B200 specifications per GPU (8-GPU board / 8): 75 TFLOPS FP32, 2.25 "
               "PFLOPS TF32 and 4.5 PFLOPS FP16/BF16 with sparsity = 1,125 / 2,250 dense, 180 GB "
               "HBM3e at 8 TB/s; total_memory 182642 MiB"});
  v.push_back({"mi250x", "AMD Instinct MI250X, one GCD (64GB)", mib(65520), tflops(23.95),
               tflops(0), tflops(191.5), gb_per_s(1638.4), kRuntimeLarger, 0.50, 0.80, us(5),
               "AMD Instinct MI250X datasheet halved (PyTorch sees each of the two GCDs as a "
               "device): 47.9 FP32 vector, 383 BF16/FP16 TFLOPS, 128 GB HBM2e at 3.2768 TB/s "
               "per module; no TF32; total_memory 65520 MiB"});
  v.push_back({"mi300x", "AMD Instinct MI300X 192GB OAM", mib(196592), tflops(163.4),
               tflops(653.7), tflops(1307.4), gb_per_s(5300), kRuntimeLarger, 0.50, 0.80, us(5),
               "AMD Instinct MI300X datasheet: 163.4 TFLOPS FP32 vector, 653.7 TF32, "
               "1,307.4 BF16/FP16 TFLOPS dense (2,614.9 with sparsity), 192 GB HBM3 at 5.3 TB/s; "
               "total global memory 196592 MiB"});
}

// PCIe cards: data-centre PCIe parts, cloud inference parts and workstation/GeForce cards.
void add_pcie_devices(std::vector<DeviceSpec>& v) {
  v.push_back({"h100-pcie", "NVIDIA H100 80GB PCIe", mib(81008), tflops(51), tflops(378),
               tflops(756.5), gb_per_s(2000), kRuntimeLarger, 0.70, 0.85, us(4),
               "NVIDIA H100 datasheet (PCIe): 51 TFLOPS FP32, 756 TF32 and 1,513 BF16 TFLOPS "
               "with sparsity = 378 / 756.5 dense, 80 GB HBM2e at 2 TB/s; total_memory 81008 MiB"});
  v.push_back({"h100-nvl", "NVIDIA H100 NVL 94GB", Bytes{99861594112}, tflops(60),
               tflops(417.5), tflops(835.5), gb_per_s(3900), kRuntimeLarger, 0.70, 0.90, us(4),
               "NVIDIA H100 NVL datasheet (per GPU): 60 TFLOPS FP32, 835 TF32 and 1,671 BF16 "
               "TFLOPS with sparsity = 417.5 / 835.5 dense, 94 GB HBM3 at 3.9 TB/s; "
               "totalGlobalMem 95235 MiB"});
  v.push_back({"l40s", "NVIDIA L40S 48GB", Bytes{47803596800}, tflops(91.6), tflops(183),
               tflops(362.05), gb_per_s(864), kRuntimeOlder, 0.70, 0.85, us(4),
               "NVIDIA L40S datasheet: 91.6 TFLOPS FP32, 183 TF32 and 362.05 BF16/FP16 TFLOPS "
               "dense (366 / 733 with sparsity), 48 GB GDDR6 ECC at 864 GB/s; totalGlobalMem "
               "45589 MiB"});
  v.push_back({"rtx-a6000", "NVIDIA RTX A6000 48GB", mib(48676), tflops(38.7), tflops(77.4),
               tflops(154.8), gb_per_s(768), kRuntimeOlder, 0.75, 0.85, us(4),
               "NVIDIA Ampere GA102 whitepaper / RTX A6000 datasheet: 38.7 TFLOPS FP32, 77.4 TF32 "
               "and 154.8 FP16/BF16 (FP32 accumulate) dense, 309.7 with sparsity, 48 GB GDDR6 at "
               "768 GB/s; total_memory 48676 MiB"});
  v.push_back({"a10g", "NVIDIA A10G 24GB (AWS)", mib(22587), tflops(31.2), tflops(62.5),
               tflops(125), gb_per_s(600), kRuntimeOlder, 0.60, 0.85, us(4),
               "NVIDIA A10 datasheet (the A10G is AWS's A10 variant; NVIDIA publishes no "
               "separate sheet): 31.2 TFLOPS FP32, 62.5 TF32 and 125 BF16/FP16 dense, 24 GB "
               "GDDR6 at 600 GB/s; total_memory 22587 MiB"});
  v.push_back({"l4", "NVIDIA L4 24GB PCIe", Bytes{23570219008}, tflops(30.3), tflops(60),
               tflops(121), gb_per_s(300), kRuntimeOlder, 0.55, 0.85, us(4),
               "NVIDIA L4 datasheet: 30.3 TFLOPS FP32, 120 TF32 and 242 BF16 TFLOPS with "
               "sparsity = 60 / 121 dense, 24 GB GDDR6 at 300 GB/s (ECC on by default); "
               "totalGlobalMem 22478 MiB"});
  v.push_back({"t4", "NVIDIA Tesla T4 16GB", mib(15109), tflops(8.1), tflops(0), tflops(65),
               gb_per_s(320), kRuntimeOlder, 0.55, 0.85, us(4),
               "NVIDIA T4 datasheet: 8.1 TFLOPS FP32, 65 TFLOPS FP16 mixed precision tensor, "
               "16 GB GDDR6 at 320 GB/s; Turing has no TF32/BF16; total_memory 15109 MiB"});
  v.push_back({"rtx-3090", "NVIDIA GeForce RTX 3090 24GB", Bytes{25327697920}, tflops(35.6),
               tflops(35.6), tflops(71), gb_per_s(936), kRuntimeOlder, 0.75, 0.85, us(4),
               "NVIDIA Ampere GA102 whitepaper, RTX 3090: 35.6 TFLOPS FP32, 35.6 TF32 dense, "
               "71 FP16/BF16 dense with FP32 accumulate (142 with FP16 accumulate), 24 GB GDDR6X "
               "at 936 GB/s; totalGlobalMem 24154 MiB"});
  v.push_back({"rtx-4090", "NVIDIA GeForce RTX 4090 24GB", Bytes{25386352640}, tflops(82.6),
               tflops(82.6), tflops(165.2), gb_per_s(1008), kRuntimeOlder, kRtx4090Matmul, 0.85, us(4),
               "NVIDIA Ada Lovelace architecture whitepaper, RTX 4090: 82.6 TFLOPS FP32, "
               "82.6 TF32 dense, 165.2 FP16/BF16 dense with FP32 accumulate (330.3 with FP16 "
               "accumulate, not used for training), 24 GB GDDR6X at 1,008 GB/s; totalGlobalMem "
               "24210 MiB"});
}

std::vector<DeviceSpec> make_devices() {
  std::vector<DeviceSpec> v;
  add_datacenter_devices(v);
  add_pcie_devices(v);
  set_fp8_peaks(v);
  set_sm_counts(v);
  set_tdps(v);
  set_fp8_efficiencies(v);
  set_flash_efficiencies(v);
  return v;
}

// NCCL's view of each preset: hardware class, GPU generation of NVLink fabrics, NVLS on
// third-generation NVSwitch (docs/collectives.md).
void set_nccl_classes(std::vector<LinkSpec>& v) {
  for (LinkSpec& l : v) {
    const std::string& n = l.name;
    if (n.rfind("pcie", 0) == 0) l.fabric = Fabric::pci;
    else if (n.rfind("ib-", 0) == 0 || n.rfind("eth-", 0) == 0) l.fabric = Fabric::net;
    else l.fabric = Fabric::nvlink;
    if (n == "nvlink2") l.sm = 70;
    if (n == "nvlink3" || n == "nvswitch-a100") l.sm = 80;
    if (n == "nvlink4" || n == "nvswitch-h100") l.sm = 90;
    l.nvls = n == "nvswitch-h100";
  }
}

std::vector<LinkSpec> make_links() {
  std::vector<LinkSpec> v;
  v.push_back({"pcie3", gb_per_s(15.75 * kPcieFraction), us(kPcieStepUs),
               "PCIe 3.0 x16: 8 GT/s x 16 lanes x 128/130 = 15.75 GB/s per direction; x 0.80 "
               "achievable; 5.7 us NCCL ring step over PCI (V100 SXM2 hosts, e.g. DGX-2)"});
  v.push_back({"nvlink2", gb_per_s(150 * kNvlinkFraction), us(kNvlinkStepUs),
               "V100 SXM2 NVLink 2: 6 links x 25 GB/s = 150 GB/s per direction (\"300 GB/s\" "
               "bidirectional); x 235/300 NCCL fraction; 3.4 us NCCL ring step"});
  v.push_back({"nvlink3", gb_per_s(235), us(kNvlinkStepUs),
               "A100 NVLink 3: 12 links x 25 GB/s = 300 GB/s per direction (\"600 GB/s\" "
               "bidirectional); 235 GB/s = NCCL's own sm80 busBw cap (tuning.cc); 3.4 us step"});
  v.push_back({"nvlink4", gb_per_s(450 * kNvlinkFraction), us(kNvlinkStepUs),
               "H100 NVLink 4: 18 links x 25 GB/s = 450 GB/s per direction (\"900 GB/s\" "
               "bidirectional); x 235/300 NCCL fraction (no NVLS); 3.4 us NCCL ring step"});
  v.push_back({"pcie4", gb_per_s(31.5 * kPcieFraction), us(kPcieStepUs),
               "PCIe 4.0 x16: 16 GT/s x 16 lanes x 128/130 = 31.5 GB/s per direction; x 0.80 "
               "achievable; 5.7 us NCCL ring step over PCI"});
  v.push_back({"pcie5", gb_per_s(63.0 * kPcieFraction), us(kPcieStepUs),
               "PCIe 5.0 x16: 32 GT/s x 16 lanes x 128/130 = 63.0 GB/s per direction; x 0.80 "
               "achievable; 5.7 us NCCL ring step over PCI"});
  v.push_back({"ib-hdr", gb_per_s(25 * kInfinibandFraction), us(kNetStepUs),
               "InfiniBand HDR: 200 Gb/s = 25 GB/s per port per direction, one port per GPU; "
               "x 0.94 achievable; 9.6 us NCCL ring step over the network"});
  v.push_back({"ib-ndr", gb_per_s(50 * kInfinibandFraction), us(kNetStepUs),
               "InfiniBand NDR: 400 Gb/s = 50 GB/s per port per direction, one port per GPU; "
               "x 0.94 achievable; 9.6 us NCCL ring step over the network"});
  v.push_back({"eth-100g", gb_per_s(12.5 * kEthernetFraction), us(kNetStepUs),
               "100 GbE (RoCEv2): 12.5 GB/s per port per direction, one port per GPU; x 0.90 "
               "achievable; 9.6 us NCCL ring step over the network"});
  v.push_back({"eth-400g", gb_per_s(50 * kEthernetFraction), us(kNetStepUs),
               "400 GbE (RoCEv2): 50 GB/s per port per direction, one port per GPU; x 0.90 "
               "achievable; 9.6 us NCCL ring step over the network"});
  // NVSwitch baseboards (DGX/HGX A100 and H100): the switch gives every GPU its full NVLink
  // bandwidth to any peer, so the per-GPU figures are those of the NVLink generation.
  v.push_back({"nvswitch-a100", gb_per_s(235), us(kNvlinkStepUs),
               "A100 NVSwitch (DGX/HGX A100, 6 NVSwitches): each GPU's 12 NVLink 3 links = "
               "300 GB/s per direction to any peer; 235 GB/s NCCL sm80 busBw cap as nvlink3; "
               "3.4 us NCCL ring step"});
  v.push_back({"nvswitch-h100", gb_per_s(450 * kNvlinkFraction), us(kNvlinkStepUs),
               "H100 NVSwitch (DGX/HGX H100, 4 third-generation NVSwitches): each GPU's 18 "
               "NVLink 4 links = 450 GB/s per direction to any peer; x 235/300 NCCL fraction "
               "as nvlink4 (no NVLS); 3.4 us NCCL ring step"});
  set_nccl_classes(v);
  return v;
}

// Fraction of the nominal DRAM bandwidth (channels x transfer rate x 8 bytes) that a streaming
// kernel reaches on a multi-socket server (STREAM triad); see docs/devices.md, "Host presets".
constexpr double kDramFraction = 0.75;
constexpr double kDdr4_2666 = 21.333;  // GB/s per channel: 2666 MT/s x 8 bytes
constexpr double kDdr4_3200 = 25.6;
constexpr double kDdr5_4800 = 38.4;

std::vector<HostSpec> make_hosts() {
  std::vector<HostSpec> v;
  v.push_back({"dgx-2", gib(1536), gb_per_s(2 * 6 * kDdr4_2666 * kDramFraction), "pcie3",
               "NVIDIA DGX-2 (16 x V100 32GB): 1.5 TB DDR4; 2 x Xeon Platinum 8168, 6 channels of "
               "DDR4-2666 each = 256 GB/s nominal; GPUs on PCIe 3.0 x16 switches"});
  v.push_back({"dgx-a100-320gb", gib(1024), gb_per_s(2 * 8 * kDdr4_3200 * kDramFraction), "pcie4",
               "NVIDIA DGX A100 320GB (8 x A100 40GB): 1 TB DDR4; 2 x AMD EPYC 7742, 8 channels of "
               "DDR4-3200 each = 409.6 GB/s nominal; GPUs on PCIe 4.0 x16"});
  v.push_back({"dgx-a100-640gb", gib(2048), gb_per_s(2 * 8 * kDdr4_3200 * kDramFraction), "pcie4",
               "NVIDIA DGX A100 640GB (8 x A100 80GB): 2 TB DDR4; 2 x AMD EPYC 7742, 8 channels of "
               "DDR4-3200 each = 409.6 GB/s nominal; GPUs on PCIe 4.0 x16"});
  v.push_back({"dgx-h100", gib(2048), gb_per_s(2 * 8 * kDdr5_4800 * kDramFraction), "pcie5",
               "NVIDIA DGX H100/H200 (8 GPUs): 2 TB DDR5; 2 x Xeon Platinum 8480C, 8 channels of "
               "DDR5-4800 each = 614.4 GB/s nominal; GPUs on PCIe 5.0 x16"});
  v.push_back({"mi300x-platform", gib(2048), gb_per_s(2 * 12 * kDdr5_4800 * kDramFraction), "pcie5",
               "AMD Instinct MI300X platform (8 GPUs): 2 TB DDR5 as commonly shipped; 2 x EPYC 9004, "
               "12 channels of DDR5-4800 each = 921.6 GB/s nominal; GPUs on PCIe 5.0 x16"});
  v.push_back({"server", gib(512), gb_per_s(1 * 8 * kDdr4_3200 * kDramFraction), "pcie4",
               "a generic single-socket PCIe server or workstation: 512 GB DDR4, 8 channels of "
               "DDR4-3200 = 204.8 GB/s nominal; GPUs on PCIe 4.0 x16"});
  return v;
}

bool iequals(std::string_view a, std::string_view b) {
  return std::ranges::equal(
      a, b, [](unsigned char x, unsigned char y) { return std::tolower(x) == std::tolower(y); });
}

template <class Spec>
std::optional<Spec> find_by_name(std::span<const Spec> all, std::string_view name) {
  const auto it = std::ranges::find_if(all, [&](const Spec& s) { return iequals(s.name, name); });
  if (it == all.end()) return std::nullopt;
  return *it;
}

}  // namespace

std::span<const DeviceSpec> device_presets() {
  static const std::vector<DeviceSpec> presets = make_devices();
  return presets;
}

std::optional<DeviceSpec> find_device(std::string_view name) {
  return find_by_name(device_presets(), name);
}

std::span<const LinkSpec> link_presets() {
  static const std::vector<LinkSpec> presets = make_links();
  return presets;
}

std::optional<LinkSpec> find_link(std::string_view name) {
  return find_by_name(link_presets(), name);
}

std::span<const HostSpec> host_presets() {
  static const std::vector<HostSpec> presets = make_hosts();
  return presets;
}

std::optional<HostSpec> find_host(std::string_view name) {
  return find_by_name(host_presets(), name);
}

const HostSpec& default_host(std::string_view device) {
  auto starts = [&](std::string_view p) { return device.substr(0, p.size()) == p; };
  const char* name = starts("v100")        ? "dgx-2"
                     : starts("a100-40gb") ? "dgx-a100-320gb"
                     : starts("a100")      ? "dgx-a100-640gb"
                     : starts("h100-80gb") || starts("h200") ? "dgx-h100"
                     : starts("mi300")     ? "mi300x-platform"
                                           : "server";
  const auto all = host_presets();
  for (const auto& h : all)
    if (h.name == name) return h;
  return all.back();
}

}  // namespace trainsim::hw
