#include <catch2/catch.hpp>

#include <cmath>

#include "sim/hw/device.hpp"
#include "sim/hw/power.hpp"

using namespace trainsim;

namespace {

hw::DeviceSpec preset(const char* name) {
  auto d = hw::find_device(name);
  REQUIRE(d.has_value());
  return *d;
}

}  // namespace

TEST_CASE("a power limit below the TDP lowers the clock as the cube root of the power ratio",
          "[hw][power]") {
  auto d = preset("h100-80gb");
  CHECK(d.tdp_w == 700);
  CHECK(hw::power_clock_fraction(d) == 1.0);  // no limit: the data-sheet clock
  // torchtitan's 500 W: (500 / 700)^(1/3) = 0.714286^(1/3) = 0.89390 (0.8939^3 = 0.71427).
  d.power_limit_w = 500;
  CHECK(hw::power_clock_fraction(d) == Approx(0.89390).epsilon(1e-5));
  // A limit at or above the TDP buys no clock beyond the one the peaks are quoted at.
  d.power_limit_w = 700;
  CHECK(hw::power_clock_fraction(d) == 1.0);
  d.power_limit_w = 900;
  CHECK(hw::power_clock_fraction(d) == 1.0);
  // A100 SXM4 at 250 W: (250 / 400)^(1/3) = 0.625^(1/3) = 0.85499.
  auto a = preset("a100-80gb");
  a.power_limit_w = 250;
  CHECK(hw::power_clock_fraction(a) == Approx(0.85499).epsilon(1e-5));
}

TEST_CASE("a device without a TDP ignores the limit", "[hw][power]") {
  auto d = preset("gh200-96gb");
  CHECK(d.tdp_w == 0);
  d.power_limit_w = 500;
  CHECK(hw::power_clock_fraction(d) == 1.0);
}

TEST_CASE("the exponent agrees with two data-sheet boards of the same GH100", "[hw][power]") {
  // H100 SXM5 and H100 NVL both enable 132 SMs; their dense BF16 peaks differ by their clocks,
  // which their TDPs (700 W, 400 W) set: ln(989.4 / 835.5) / ln(700 / 400) = 0.1691 / 0.5596
  // = 0.302, within 0.04 of the cube law's 1/3.
  const auto sxm = preset("h100-80gb");
  const auto nvl = preset("h100-nvl");
  REQUIRE(sxm.sm_count == nvl.sm_count);
  const double exponent = std::log(sxm.peak_16bit.per_s / nvl.peak_16bit.per_s) /
                          std::log(sxm.tdp_w / nvl.tdp_w);
  CHECK(exponent == Approx(0.302).margin(0.001));
  CHECK(std::abs(exponent - hw::kPowerClockExponent) < 0.04);
  // The NVL board modelled as an SXM5 capped at 400 W: 989.4 x (400/700)^(1/3) = 989.4 x 0.8298
  // = 821.0 TFLOPS, 1.7% below its data-sheet 835.5.
  auto capped = sxm;
  capped.power_limit_w = 400;
  const double tflops = sxm.peak_16bit.per_s * hw::power_clock_fraction(capped) / 1e12;
  CHECK(tflops == Approx(821.0).margin(0.1));
  CHECK(tflops / 835.5 == Approx(0.983).margin(0.001));
}

TEST_CASE("Hopper and Blackwell matmul efficiencies follow their measured best GEMMs",
          "[hw][power]") {
  // The A100's 0.80 scaled by each part's best-GEMM fraction over the A100's 86.9%:
  // H100 0.80 x 80.3 / 86.9 = 0.73924; GH200 0.80 x 83.8 / 86.9 = 0.77146;
  // B200 0.80 x 77.6 / 86.9 = 0.71438.
  CHECK(preset("a100-80gb").matmul_efficiency == 0.80);
  CHECK(preset("h100-80gb").matmul_efficiency == Approx(0.73924).epsilon(1e-4));
  CHECK(preset("h200-141gb").matmul_efficiency == preset("h100-80gb").matmul_efficiency);
  CHECK(preset("gh200-96gb").matmul_efficiency == Approx(0.77146).epsilon(1e-4));
  CHECK(preset("b200").matmul_efficiency == Approx(0.71438).epsilon(1e-4));
}

TEST_CASE("FP8 GEMM efficiencies follow the measured FP8 rows", "[hw][power]") {
  // 0.80 x each part's FP8 best-GEMM fraction / 86.9%: H100 0.709 -> 0.65270, H200 0.734 ->
  // 0.67572, GH200 0.776 -> 0.71438, B200 0.763 -> 0.70242; the A100 has no FP8 (0: unset).
  CHECK(preset("h100-80gb").fp8_matmul_efficiency == Approx(0.65270).epsilon(1e-4));
  CHECK(preset("h200-141gb").fp8_matmul_efficiency == Approx(0.67572).epsilon(1e-4));
  CHECK(preset("gh200-96gb").fp8_matmul_efficiency == Approx(0.71438).epsilon(1e-4));
  CHECK(preset("b200").fp8_matmul_efficiency == Approx(0.70242).epsilon(1e-4));
  CHECK(preset("a100-80gb").fp8_matmul_efficiency == 0);
}
