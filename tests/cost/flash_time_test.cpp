// The flash-attention part of an op's kernel time (cost.hpp, docs/devices.md "Flash attention"):
// its FLOPs at the device's flash efficiencies of the 16-bit peak, beside the op's GEMMs at
// matmul_efficiency; BF16 under fp8 unless fp8_attention; the presets' published figures and
// the rule for parts without one.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "../support/toy_device.hpp"
#include "sim/cost/cost.hpp"

using namespace trainsim;
using core::Bytes;
using core::Duration;
using cost::KernelWork;
using cost::MathMode;

namespace {

// testing::toy_device (100 TFLOPS 16-bit, GEMMs at 0.5, 5 us per launch, no ramp, no host
// floor) with 200 TFLOPS FP8 and flash kernels at 0.25 forward, 0.2 backward.
hw::DeviceSpec flash_device() {
  auto d = testing::toy_device();
  d.peak_fp8 = core::FlopRate{200e12};
  d.flash_efficiency = 0.25;
  d.flash_backward_efficiency = 0.2;
  return d;
}

// 2e12 FLOPs as the model counts them, 1e12 of them an attention core whose causal forward
// kernel computes half of it.
KernelWork attention_forward() {
  KernelWork w{2e12, Bytes{1'000'000}, true};
  w.flash_model_flops = 1e12;
  w.flash_forward = 0.5e12;
  return w;
}

}  // namespace

TEST_CASE("the flash kernels run at the flash efficiency beside the GEMMs", "[cost][flash]") {
  const auto d = flash_device();
  // GEMMs: 1e12 / (100e12 x 0.5) = 20 ms; flash: 0.5e12 / (100e12 x 0.25) = 20 ms.
  CHECK(cost::kernel_time(attention_forward(), d, MathMode::half).ns == 40'000'000 + 5'000);
  // Backward kernels: 1e12 / (100e12 x 0.2) = 50 ms, beside 1e12 of GEMMs (20 ms).
  KernelWork b{2e12, Bytes{0}, true};
  b.flash_model_flops = 1e12;
  b.flash_backward = 1e12;
  CHECK(cost::kernel_time(b, d, MathMode::half).ns == 70'000'000 + 5'000);
  // Without flash parts the op is all GEMMs: 2e12 / 50e12 = 40 ms.
  CHECK(cost::kernel_time(KernelWork{2e12, Bytes{0}, true}, d, MathMode::half).ns ==
        40'000'000 + 5'000);
}

TEST_CASE("under fp8 the flash kernels stay 16-bit unless fp8_attention", "[cost][flash]") {
  const auto d = flash_device();
  KernelWork w = attention_forward();
  // GEMMs at FP8: 1e12 / (200e12 x 0.5) = 10 ms; flash at 16-bit: 20 ms.
  CHECK(cost::kernel_time(w, d, MathMode::fp8).ns == 30'000'000 + 5'000);
  // fp8_attention: 0.5e12 / (200e12 x 0.25) = 10 ms.
  w.fp8_attention = true;
  CHECK(cost::kernel_time(w, d, MathMode::fp8).ns == 20'000'000 + 5'000);
  // It changes nothing under 16-bit precision.
  CHECK(cost::kernel_time(w, d, MathMode::half).ns == 40'000'000 + 5'000);
}

TEST_CASE("flash efficiencies: published per part, else the A100's scaled by GEMM efficiency",
          "[cost][flash]") {
  auto d = flash_device();
  CHECK(cost::flash_forward_efficiency(d) == 0.25);
  CHECK(cost::flash_backward_efficiency(d) == 0.2);
  // No figure: 0.5 x 0.73 / 0.80 and 0.5 x 0.63 / 0.80.
  d.flash_efficiency = d.flash_backward_efficiency = 0;
  CHECK(cost::flash_forward_efficiency(d) == Approx(0.45625));
  CHECK(cost::flash_backward_efficiency(d) == Approx(0.39375));
  // FlashAttention-2 on A100 (Dao 2023) and on H100 (Shah et al. 2024).
  const auto a100 = hw::find_device("a100-80gb").value();
  CHECK(cost::flash_forward_efficiency(a100) == 0.73);
  CHECK(cost::flash_backward_efficiency(a100) == 0.63);
  for (const char* hopper : {"h100-80gb", "h200-141gb", "gh200-96gb", "h100-pcie", "h100-nvl"}) {
    const auto h = hw::find_device(hopper).value();
    CHECK(cost::flash_forward_efficiency(h) == 0.35);
    CHECK(cost::flash_backward_efficiency(h) == 0.35);
  }
  // B200 has none published: its 0.714 GEMM efficiency x 0.73 / 0.80.
  const auto b200 = hw::find_device("b200").value();
  CHECK(cost::flash_forward_efficiency(b200) ==
        Approx(b200.matmul_efficiency * 0.73 / 0.80));
  CHECK_FALSE(cost::same_kernel_speed(a100, [&] {
    auto x = a100;
    x.flash_efficiency = 0.5;
    return x;
  }()));
}

TEST_CASE("impossible flash figures are refused", "[cost][flash]") {
  auto d = flash_device();
  d.flash_efficiency = 1.5;
  CHECK_THROWS_AS(cost::kernel_time(attention_forward(), d, MathMode::half), std::invalid_argument);
  d = flash_device();
  KernelWork w = attention_forward();
  w.flash_forward = -1;
  CHECK_THROWS_AS(cost::kernel_time(w, d, MathMode::half), std::invalid_argument);
}
