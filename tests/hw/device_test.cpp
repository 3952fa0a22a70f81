#include <catch2/catch.hpp>

#include <cctype>
#include <set>
#include <string>

#include "sim/hw/device.hpp"

using namespace trainsim;
using core::kGiB;
using core::kMiB;

namespace {

hw::DeviceSpec device(const char* name) {
  const auto d = hw::find_device(name);
  REQUIRE(d.has_value());
  return *d;
}

hw::LinkSpec link(const char* name) {
  const auto l = hw::find_link(name);
  REQUIRE(l.has_value());
  return *l;
}

}  // namespace

TEST_CASE("the device presets are the documented set and each is named once", "[hw][device]") {
  std::set<std::string> names;
  for (const auto& d : hw::device_presets()) names.insert(d.name);
  CHECK(names.size() == hw::device_presets().size());
  CHECK(names == std::set<std::string>{"v100-16gb", "v100-32gb", "a100-40gb",  "a100-80gb",
                                       "h100-80gb", "h200-141gb", "gh200-96gb", "b200",
                                       "mi250x",    "mi300x",     "h100-pcie",  "h100-nvl",
                                       "l40s",      "rtx-a6000",  "a10g",       "l4",
                                       "t4",        "rtx-3090",   "rtx-4090"});
}

TEST_CASE("every device preset has usable positive figures and a source", "[hw][device]") {
  for (const auto& d : hw::device_presets()) {
    INFO(d.name);
    CHECK_FALSE(d.description.empty());
    CHECK_FALSE(d.source.empty());
    CHECK(d.memory.value > 0);
    CHECK(d.peak_fp32.per_s > 0);
    CHECK(d.peak_tf32.per_s >= 0);
    CHECK(d.peak_16bit.per_s > d.peak_fp32.per_s);  // tensor cores beat the vector units
    CHECK(d.memory_bandwidth.bytes_per_s > 0);
    CHECK(d.reserved.value > 0);
    CHECK(d.reserved < d.memory / 8);  // runtime overhead is a small slice of the device
    CHECK(d.matmul_efficiency > 0);
    CHECK(d.matmul_efficiency <= 1);
    CHECK(d.memory_efficiency > 0);
    CHECK(d.memory_efficiency <= 1);
    CHECK(d.kernel_launch.ns > 0);
    // Volta and Turing have no TF32 tensor cores, nor has CDNA2 (MI250X).
    const bool no_tf32 = d.name.rfind("v100", 0) == 0 || d.name == "t4" || d.name == "mi250x";
    CHECK((d.peak_tf32.per_s == 0) == no_tf32);
  }
}

TEST_CASE("devices are found case-insensitively and unknown names are not", "[hw][device]") {
  for (const auto& d : hw::device_presets()) {
    std::string upper = d.name;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const auto found = hw::find_device(upper);
    REQUIRE(found.has_value());
    CHECK(found->name == d.name);
  }
  CHECK(hw::find_device("A100-80GB")->description == "NVIDIA A100 80GB SXM4");
  CHECK_FALSE(hw::find_device("a100").has_value());
  CHECK_FALSE(hw::find_device("").has_value());
  CHECK_FALSE(hw::find_device("a100-80gbx").has_value());
}

TEST_CASE("memory is the total PyTorch reports, reserved the runtime's buffers", "[hw][device]") {
  // total_memory / totalGlobalMem from the published printouts cited in docs/devices.md.
  CHECK(device("v100-16gb").memory.value == 16160 * kMiB);
  CHECK(device("v100-32gb").memory.value == 34089730048);
  CHECK(device("a100-40gb").memory.value == 42298834944);
  CHECK(device("a100-80gb").memory.value == 84987740160);  // 79.15 GiB
  CHECK(device("h100-80gb").memory.value == 85045477376);
  CHECK(device("h200-141gb").memory.value == 143156 * kMiB);
  CHECK(device("gh200-96gb").memory.value == 97280 * kMiB);
  CHECK(device("b200").memory.value == 182642 * kMiB);
  CHECK(device("mi250x").memory.value == 65520 * kMiB);  // one GCD
  CHECK(device("mi300x").memory.value == 196592 * kMiB);
  CHECK(device("h100-pcie").memory.value == 81008 * kMiB);
  CHECK(device("h100-nvl").memory.value == 99861594112);
  CHECK(device("l40s").memory.value == 47803596800);
  CHECK(device("rtx-a6000").memory.value == 48676 * kMiB);
  CHECK(device("a10g").memory.value == 22587 * kMiB);
  CHECK(device("l4").memory.value == 23570219008);  // ECC carve-out already out
  CHECK(device("t4").memory.value == 15109 * kMiB);
  CHECK(device("rtx-3090").memory.value == 25327697920);
  CHECK(device("rtx-4090").memory.value == 25386352640);
  for (const auto& d : hw::device_presets()) {
    INFO(d.name);
    // The runtime's buffers: 0.75 GiB before Hopper, 1 GiB on Hopper, Blackwell and AMD.
    const bool larger = d.name.rfind("h", 0) == 0 || d.name.rfind("gh", 0) == 0 ||
                        d.name == "b200" || d.name.rfind("mi", 0) == 0;
    CHECK(d.reserved.value == (larger ? 1024 : 768) * kMiB);
  }
}

TEST_CASE("device presets carry the dense data-sheet peaks without sparsity", "[hw][device]") {
  const auto v100 = device("v100-32gb");
  CHECK(v100.peak_fp32.per_s == Approx(15.7e12));
  CHECK(v100.peak_16bit.per_s == Approx(125e12));  // FP16 tensor; V100 has no BF16
  CHECK(v100.memory_bandwidth.bytes_per_s == Approx(900e9));

  const auto a40 = device("a100-40gb");
  CHECK(a40.memory_bandwidth.bytes_per_s == Approx(1555e9));
  const auto a80 = device("a100-80gb");
  CHECK(a80.peak_fp32.per_s == Approx(19.5e12));
  CHECK(a80.peak_tf32.per_s == Approx(156e12));
  CHECK(a80.peak_16bit.per_s == Approx(312e12));
  CHECK(a80.memory_bandwidth.bytes_per_s == Approx(2039e9));

  const auto h100 = device("h100-80gb");
  CHECK(h100.peak_16bit.per_s == Approx(989.4e12));
  CHECK(h100.peak_tf32.per_s == Approx(494.7e12));
  CHECK(h100.memory_bandwidth.bytes_per_s == Approx(3.35e12));

  const auto h200 = device("h200-141gb");
  CHECK(h200.peak_16bit.per_s == h100.peak_16bit.per_s);  // same GH100 compute
  CHECK(h200.memory_bandwidth.bytes_per_s == Approx(4.8e12));

  CHECK(device("l4").peak_16bit.per_s == Approx(121e12));
  CHECK(device("l4").memory_bandwidth.bytes_per_s == Approx(300e9));
  CHECK(device("rtx-4090").peak_16bit.per_s == Approx(165.2e12));
  CHECK(device("rtx-4090").memory_bandwidth.bytes_per_s == Approx(1008e9));

  const auto mi = device("mi300x");
  CHECK(mi.peak_16bit.per_s == Approx(1307.4e12));
  CHECK(mi.peak_fp32.per_s == Approx(163.4e12));
  CHECK(mi.memory_bandwidth.bytes_per_s == Approx(5.3e12));

  // Sparse data-sheet figures halved: H100 PCIe 1,513 -> 756.5, H100 NVL 1,671 -> 835.5,
  // GH200 1,979 -> 989.5, B200 4.5 PFLOPS -> 2,250 TFLOPS.
  CHECK(device("h100-pcie").peak_16bit.per_s == Approx(756.5e12));
  CHECK(device("h100-nvl").peak_16bit.per_s == Approx(835.5e12));
  CHECK(device("gh200-96gb").peak_16bit.per_s == Approx(989.5e12));
  CHECK(device("b200").peak_16bit.per_s == Approx(2250e12));
  CHECK(device("b200").memory_bandwidth.bytes_per_s == Approx(8e12));
  // GeForce Ampere runs FP16 with FP32 accumulate at half rate (71 of 142), the
  // professional A6000 at full rate (154.8).
  CHECK(device("rtx-3090").peak_16bit.per_s == Approx(71e12));
  CHECK(device("rtx-a6000").peak_16bit.per_s == Approx(154.8e12));
  CHECK(device("l40s").peak_16bit.per_s == Approx(362.05e12));
  CHECK(device("a10g").memory_bandwidth.bytes_per_s == Approx(600e9));
  CHECK(device("t4").peak_16bit.per_s == Approx(65e12));
  // MI250X: one GCD is half of the module's 383 TFLOPS and 3.2768 TB/s.
  CHECK(device("mi250x").peak_16bit.per_s == Approx(383e12 / 2));
  CHECK(device("mi250x").memory_bandwidth.bytes_per_s == Approx(3276.8e9 / 2));
}

TEST_CASE("link presets are named once and positive and found case-insensitively", "[hw][link]") {
  std::set<std::string> names;
  for (const auto& l : hw::link_presets()) {
    INFO(l.name);
    names.insert(l.name);
    CHECK(l.bandwidth.bytes_per_s > 0);
    CHECK(l.latency.ns > 0);
    CHECK_FALSE(l.source.empty());
    const auto found = hw::find_link(l.name);
    REQUIRE(found.has_value());
    CHECK(found->name == l.name);
  }
  CHECK(names.size() == hw::link_presets().size());
  for (const char* n : {"nvlink2", "nvlink3", "nvlink4", "pcie4", "pcie5", "ib-hdr", "ib-ndr",
                        "eth-100g", "eth-400g"})
    CHECK(names.count(n) == 1);
  CHECK(hw::find_link("NVLink3").has_value());
  CHECK(hw::find_link("IB-NDR").has_value());
  CHECK_FALSE(hw::find_link("nvlink").has_value());
}

TEST_CASE("link bandwidths are achievable per-direction figures from their nominal rates",
          "[hw][link]") {
  // NCCL's tuning model caps A100 (sm80) NVLink bus bandwidth at 235 GB/s of 300 nominal.
  CHECK(link("nvlink3").bandwidth.bytes_per_s == Approx(235e9));
  CHECK(link("nvlink2").bandwidth.bytes_per_s == Approx(150e9 * 235 / 300));
  CHECK(link("nvlink4").bandwidth.bytes_per_s == Approx(450e9 * 235 / 300));
  CHECK(link("pcie4").bandwidth.bytes_per_s == Approx(31.5e9 * 0.8));
  CHECK(link("pcie5").bandwidth.bytes_per_s == Approx(2 * link("pcie4").bandwidth.bytes_per_s));
  CHECK(link("ib-hdr").bandwidth.bytes_per_s == Approx(25e9 * 0.94));
  CHECK(link("ib-ndr").bandwidth.bytes_per_s == Approx(2 * link("ib-hdr").bandwidth.bytes_per_s));
  CHECK(link("eth-400g").bandwidth.bytes_per_s ==
        Approx(4 * link("eth-100g").bandwidth.bytes_per_s));
  // Faster generations are faster; a network link never beats the NVLink of its era.
  CHECK(link("nvlink4").bandwidth > link("nvlink3").bandwidth);
  CHECK(link("nvlink3").bandwidth > link("nvlink2").bandwidth);
  CHECK(link("nvlink2").bandwidth > link("pcie5").bandwidth);
  CHECK(link("ib-ndr").bandwidth < link("nvlink4").bandwidth);
  // NCCL per-step latency: NVLink < PCIe < network.
  CHECK(link("nvlink3").latency.ns == 3400);
  CHECK(link("pcie4").latency.ns == 5700);
  CHECK(link("ib-hdr").latency.ns == 9600);
}

TEST_CASE("host presets are named once, positive, and chosen by device generation", "[hw][host]") {
  std::set<std::string> names;
  for (const auto& h : hw::host_presets()) {
    INFO(h.name);
    names.insert(h.name);
    CHECK(h.memory.value > 0);
    CHECK(h.memory_bandwidth.bytes_per_s > 0);
    CHECK(hw::find_link(h.pcie).has_value());
    CHECK_FALSE(h.source.empty());
    CHECK(hw::find_host(h.name).has_value());
  }
  CHECK(names.size() == hw::host_presets().size());
  // Nominal DRAM bandwidth x 0.75: DGX-2 2 x 6 x DDR4-2666, DGX H100 2 x 8 x DDR5-4800.
  CHECK(hw::default_host("v100-32gb").name == "dgx-2");
  CHECK(hw::default_host("v100-32gb").memory_bandwidth.bytes_per_s == Approx(2 * 6 * 21.333e9 * 0.75));
  CHECK(hw::default_host("a100-40gb").memory.value == 1024 * core::kGiB);
  CHECK(hw::default_host("a100-80gb").memory.value == 2048 * core::kGiB);
  CHECK(hw::default_host("h200-141gb").memory_bandwidth.bytes_per_s == Approx(2 * 8 * 38.4e9 * 0.75));
  CHECK(hw::default_host("custom").name == "server");
  CHECK(hw::find_link("pcie3")->bandwidth.bytes_per_s == Approx(15.75e9 * 0.8));
}
