#include "sim/hw/device.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>
#include <vector>

// Every figure here is traced in docs/devices.md. Two rules keep the table consistent:
//  - memory: a vendor's "N GB" of HBM/GDDR is N GiB (DRAM is built in binary sizes; nvidia-smi
//    shows 81920 MiB for an A100 80GB). What the driver withholds (ECC carve-out, firmware) is
//    not subtracted here but counted in `reserved`, together with the runtime's own buffers.
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

// NCCL ring/Simple per-step latencies, src/graph/tuning.cc hwLat[][RING][SIMPLE].
constexpr double kNvlinkStepUs = 3.4;
constexpr double kPcieStepUs = 5.7;
constexpr double kNetStepUs = 9.6;

// Dense FP8 tensor-core peaks (data sheets give them with 2:4 sparsity; halved here):
// H100 SXM5 and H200 SXM 3,958 -> 1,978.9 TFLOPS (NVIDIA H100 / H200 datasheets); L4 485 ->
// 242.5 (L4 datasheet); RTX 4090 660.6 -> 330.3 with FP32 accumulate (Ada Lovelace whitepaper,
// appendix table); MI300X 5,229.8 -> 2,614.9 (AMD MI300X datasheet). Volta and Ampere have no
// FP8 tensor cores.
void set_fp8_peaks(std::vector<DeviceSpec>& v) {
  const std::pair<const char*, double> peaks[] = {
      {"h100-80gb", 1978.9}, {"h200-141gb", 1978.9}, {"l4", 242.5}, {"rtx-4090", 330.3}, {"mi300x", 2614.9}};
  for (auto& d : v)
    for (const auto& [name, tf] : peaks)
      if (d.name == name) d.peak_fp8 = tflops(tf);
}

std::vector<DeviceSpec> make_devices() {
  std::vector<DeviceSpec> v;
  // NVIDIA Volta: no TF32 and no BF16; peak_16bit is the FP16 tensor-core peak.
  v.push_back({"v100-16gb", "NVIDIA Tesla V100 SXM2 16GB", gib(16), tflops(15.7), tflops(0),
               tflops(125), gb_per_s(900), mib(1024), 0.70, 0.85, us(4),
               "NVIDIA Tesla V100 datasheet (SXM2): 15.7 TFLOPS FP32, 125 TFLOPS FP16 tensor, "
               "16 GB HBM2 at 900 GB/s; no TF32/BF16 (FP16 tensor peak stored as 16-bit)"});
  v.push_back({"v100-32gb", "NVIDIA Tesla V100 SXM2 32GB", gib(32), tflops(15.7), tflops(0),
               tflops(125), gb_per_s(900), mib(1024), 0.70, 0.85, us(4),
               "NVIDIA Tesla V100 datasheet (SXM2): 15.7 TFLOPS FP32, 125 TFLOPS FP16 tensor, "
               "32 GB HBM2 at 900 GB/s; no TF32/BF16 (FP16 tensor peak stored as 16-bit)"});
  v.push_back({"a100-40gb", "NVIDIA A100 40GB SXM4", gib(40), tflops(19.5), tflops(156),
               tflops(312), gb_per_s(1555), mib(1280), 0.80, 0.85, us(4),
               "NVIDIA A100 datasheet (SXM4 40GB): 19.5 TFLOPS FP32, 156 TFLOPS TF32, "
               "312 TFLOPS BF16/FP16 dense, 1,555 GB/s HBM2"});
  v.push_back({"a100-80gb", "NVIDIA A100 80GB SXM4", gib(80), tflops(19.5), tflops(156),
               tflops(312), gb_per_s(2039), mib(1536), 0.80, 0.85, us(4),
               "NVIDIA A100 datasheet (SXM4 80GB): 19.5 TFLOPS FP32, 156 TFLOPS TF32, "
               "312 TFLOPS BF16/FP16 dense, 2,039 GB/s HBM2e"});
  v.push_back({"h100-80gb", "NVIDIA H100 80GB SXM5", gib(80), tflops(66.9), tflops(494.7),
               tflops(989.4), gb_per_s(3350), mib(1792), 0.70, 0.90, us(4),
               "NVIDIA H100 datasheet/whitepaper (SXM5): 67 (66.9) TFLOPS FP32, 989 TF32 and "
               "1,979 BF16 TFLOPS with sparsity = 494.7 / 989.4 dense, 3.35 TB/s HBM3"});
  v.push_back({"h200-141gb", "NVIDIA H200 141GB SXM", gib(141), tflops(66.9), tflops(494.7),
               tflops(989.4), gb_per_s(4800), mib(1792), 0.70, 0.90, us(4),
               "NVIDIA H200 datasheet (SXM): same GH100 compute as H100 SXM (494.7 TF32 / "
               "989.4 BF16 TFLOPS dense), 141 GB HBM3e at 4.8 TB/s"});
  v.push_back({"l4", "NVIDIA L4 24GB PCIe", gib(24), tflops(30.3), tflops(60), tflops(121),
               gb_per_s(300), mib(2304), 0.55, 0.85, us(4),
               "NVIDIA L4 datasheet: 30.3 TFLOPS FP32, 120 TF32 and 242 BF16 TFLOPS with "
               "sparsity = 60 / 121 dense, 24 GB GDDR6 at 300 GB/s (ECC on by default)"});
  v.push_back({"rtx-4090", "NVIDIA GeForce RTX 4090 24GB", gib(24), tflops(82.6), tflops(82.6),
               tflops(165.2), gb_per_s(1008), mib(1024), 0.75, 0.85, us(4),
               "NVIDIA Ada Lovelace architecture whitepaper, RTX 4090: 82.6 TFLOPS FP32, "
               "82.6 TF32 dense, 165.2 FP16/BF16 dense with FP32 accumulate (330.3 with FP16 "
               "accumulate, not used for training), 24 GB GDDR6X at 1,008 GB/s"});
  v.push_back({"mi300x", "AMD Instinct MI300X 192GB OAM", gib(192), tflops(163.4), tflops(653.7),
               tflops(1307.4), gb_per_s(5300), mib(1536), 0.50, 0.80, us(5),
               "AMD Instinct MI300X datasheet: 163.4 TFLOPS FP32 vector, 653.7 TF32, "
               "1,307.4 BF16/FP16 TFLOPS dense (2,614.9 with sparsity), 192 GB HBM3 at 5.3 TB/s"});
  set_fp8_peaks(v);
  return v;
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
                     : starts("h100") || starts("h200") ? "dgx-h100"
                     : starts("mi300")     ? "mi300x-platform"
                                           : "server";
  const auto all = host_presets();
  for (const auto& h : all)
    if (h.name == name) return h;
  return all.back();
}

}  // namespace trainsim::hw
