#include <catch2/catch.hpp>

#include <stdexcept>

#include "../support/toy_device.hpp"
#include "sim/cost/cost.hpp"

using namespace trainsim;
using core::Bytes;
using core::Duration;
using cost::KernelWork;
using cost::MathMode;
using testing::toy_device;

TEST_CASE("a compute-bound matmul takes its FLOPs at the efficient tensor peak plus launch",
          "[cost][roofline]") {
  const auto d = toy_device();
  // 1e12 FLOP / (100e12 x 0.5) = 20 ms; its 1 MB / (1e12 x 0.5) = 2 us is hidden under it.
  const KernelWork w{1e12, Bytes{1'000'000}, true};
  CHECK(cost::kernel_time(w, d, MathMode::half).ns == 20'000'000 + 5'000);
  // TF32: 1e12 / (50e12 x 0.5) = 40 ms; FP32: 1e12 / (10e12 x 0.5) = 200 ms.
  CHECK(cost::kernel_time(w, d, MathMode::tf32).ns == 40'000'000 + 5'000);
  CHECK(cost::kernel_time(w, d, MathMode::fp32).ns == 200'000'000 + 5'000);
}

TEST_CASE("fp8 GEMMs run at the FP8 peak, and at the 16-bit peak on a device without one",
          "[cost][roofline]") {
  auto d = toy_device();
  const KernelWork w{1e12, Bytes{1'000'000}, true};
  // No FP8 tensor cores: as half, 1e12 / (100e12 x 0.5) = 20 ms.
  CHECK(cost::kernel_time(w, d, MathMode::fp8).ns == 20'000'000 + 5'000);
  // FP8 at twice the 16-bit peak: 1e12 / (200e12 x 0.5) = 10 ms.
  d.peak_fp8 = core::FlopRate{200e12};
  CHECK(cost::kernel_time(w, d, MathMode::fp8).ns == 10'000'000 + 5'000);
  CHECK(cost::kernel_time(w, d, MathMode::half).ns == 20'000'000 + 5'000);
  // Non-matmul work stays on the vector units: 1e9 FLOP / (10e12 x 0.5) = 200 us.
  const KernelWork v{1e9, Bytes{0}, false};
  CHECK(cost::kernel_time(v, d, MathMode::fp8).ns == 200'000 + 5'000);
}

TEST_CASE("a memory-bound kernel takes its bytes at the efficient bandwidth plus launch",
          "[cost][roofline]") {
  const auto d = toy_device();
  // 1 GB / (1e12 x 0.5) = 2 ms; 1e9 FLOP on the vector units / (10e12 x 0.5) = 0.2 ms.
  const KernelWork w{1e9, Bytes{1'000'000'000}, false};
  CHECK(cost::kernel_time(w, d, MathMode::half).ns == 2'000'000 + 5'000);
  // Non-matmul work ignores the tensor-core mode.
  CHECK(cost::kernel_time(w, d, MathMode::fp32) == cost::kernel_time(w, d, MathMode::half));
}

TEST_CASE("the roofline switches bound where compute time equals memory time", "[cost][roofline]") {
  auto d = toy_device();
  d.kernel_launch = Duration{0};
  // Ridge point: 100e12 x 0.5 / (1e12 x 0.5) = 100 FLOP/byte. 1e6 bytes take 2 us.
  const Bytes bytes{1'000'000};
  CHECK(cost::kernel_time({1e8, bytes, true}, d, MathMode::half).ns == 2'000);  // at the ridge
  CHECK(cost::kernel_time({5e7, bytes, true}, d, MathMode::half).ns == 2'000);  // memory-bound
  CHECK(cost::kernel_time({4e8, bytes, true}, d, MathMode::half).ns == 8'000);  // compute-bound
}

TEST_CASE("zero work costs exactly the launch overhead of each kernel", "[cost][roofline]") {
  const auto d = toy_device();
  CHECK(cost::kernel_time({}, d, MathMode::half).ns == 5'000);
  CHECK(cost::kernel_time({}, d, MathMode::half, 3).ns == 15'000);
  CHECK(cost::kernel_time({}, d, MathMode::half, 0).ns == 0);
  // Launch overhead adds to, never overlaps with, the work itself.
  const KernelWork w{0, Bytes{1'000'000'000}, false};
  CHECK(cost::kernel_time(w, d, MathMode::half, 4).ns == 2'000'000 + 4 * 5'000);
}

TEST_CASE("rounding never turns real work into zero time and always rounds up",
          "[cost][roofline]") {
  auto d = toy_device();
  d.kernel_launch = Duration{0};
  CHECK(cost::kernel_time({1, Bytes{0}, true}, d, MathMode::half).ns == 1);
  CHECK(cost::kernel_time({0, Bytes{1}, false}, d, MathMode::half).ns == 1);
  // 1,000,001 bytes / 5e11 B/s = 2000.002 ns -> 2001 ns.
  CHECK(cost::kernel_time({0, Bytes{1'000'001}, false}, d, MathMode::half).ns == 2'001);
}

TEST_CASE("a device without a tensor-core mode falls back to its FP32 peak", "[cost][roofline]") {
  const auto v100 = hw::find_device("v100-32gb");
  REQUIRE(v100.has_value());
  const KernelWork w{1e12, Bytes{0}, true};
  CHECK(cost::kernel_time(w, *v100, MathMode::tf32) == cost::kernel_time(w, *v100, MathMode::fp32));
  CHECK(cost::kernel_time(w, *v100, MathMode::half) < cost::kernel_time(w, *v100, MathMode::fp32));

  auto d = toy_device();
  d.peak_16bit = core::FlopRate{0};
  CHECK(cost::kernel_time(w, d, MathMode::half) == cost::kernel_time(w, d, MathMode::fp32));
}

TEST_CASE("an unusable device or impossible work is rejected and never divided by zero",
          "[cost][roofline]") {
  auto d = toy_device();
  d.peak_fp32 = d.peak_tf32 = d.peak_16bit = core::FlopRate{0};
  CHECK_THROWS_AS(cost::kernel_time({}, d, MathMode::half), std::invalid_argument);
  CHECK_THROWS_AS(cost::kernel_time({1e9, Bytes{0}, true}, d, MathMode::fp32),
                  std::invalid_argument);

  auto no_bw = toy_device();
  no_bw.memory_bandwidth = core::Bandwidth{0};
  CHECK_THROWS_AS(cost::kernel_time({0, Bytes{1}, false}, no_bw, MathMode::half),
                  std::invalid_argument);
  CHECK(cost::kernel_time({1e9, Bytes{0}, true}, no_bw, MathMode::half).ns > 0);

  auto bad_eff = toy_device();
  bad_eff.matmul_efficiency = 0;
  CHECK_THROWS_AS(cost::kernel_time({1e9, Bytes{0}, true}, bad_eff, MathMode::half),
                  std::invalid_argument);
  bad_eff = toy_device();
  bad_eff.memory_efficiency = 1.5;
  CHECK_THROWS_AS(cost::kernel_time({}, bad_eff, MathMode::half), std::invalid_argument);

  const auto ok = toy_device();
  CHECK_THROWS_AS(cost::kernel_time({-1, Bytes{0}, true}, ok, MathMode::half),
                  std::invalid_argument);
  CHECK_THROWS_AS(cost::kernel_time({0, Bytes{-1}, true}, ok, MathMode::half),
                  std::invalid_argument);
  CHECK_THROWS_AS(cost::kernel_time({}, ok, MathMode::half, -1), std::invalid_argument);
}

TEST_CASE("a large bf16 GEMM on an A100 80GB runs near 80% of 312 TFLOPS", "[cost][roofline]") {
  const auto a100 = hw::find_device("a100-80gb");
  REQUIRE(a100.has_value());
  // 8192^3 GEMM: 2 x 8192^3 = 1.0995e12 FLOP, three 128 MiB bf16 operands. The ramp costs
  // efficiency x F / (F + peak x ramp): negligible at this size.
  const double flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  const KernelWork w{flops, Bytes{3LL * 8192 * 8192 * 2}, true};
  const double eff = 0.80 * flops / (flops + 312e12 * a100->matmul_ramp_s);
  const double expected_s = flops / (312e12 * eff) + 4e-6;
  CHECK(core::to_seconds(cost::kernel_time(w, *a100, MathMode::half)) ==
        Approx(expected_s).epsilon(1e-6));
}

TEST_CASE("small GEMMs run at a lower efficiency than large ones", "[cost][roofline]") {
  auto d = toy_device();
  d.matmul_ramp_s = 1e-6;  // half efficiency at 100 MFLOP on the 100 TFLOP/s tensor peak
  d.kernel_launch = Duration{0};
  // 1e8 FLOPs: efficiency 0.5 x 1e8 / (1e8 + 1e8) = 0.25 -> 1e8 / (1e14 x 0.25) = 4 us.
  CHECK(cost::kernel_time({1e8, Bytes{0}, true}, d, MathMode::half).ns == 4'000);
  // Two kernels share the FLOPs: each 5e7, efficiency 0.5 x 1/3 -> 1e8 / (1e14 / 6) = 6 us.
  CHECK(cost::kernel_time({1e8, Bytes{0}, true}, d, MathMode::half, 2).ns == 6'000);
  // Vector work has no ramp.
  CHECK(cost::kernel_time({1e8, Bytes{0}, false}, d, MathMode::half).ns == 20'000);
}

TEST_CASE("the host's launch rate bounds an op whose kernels are shorter than their dispatch",
          "[cost][host]") {
  auto d = toy_device();
  d.host_dispatch = Duration{20'000};
  // 1e9 FLOP / (100e12 x 0.5) = 20 us of GPU work + 2 GEMM launches x 5 us = 30 us; the host
  // issues 8 kernels x 20 us = 160 us, so the op takes 160 us (the GPU waits for them).
  KernelWork w{1e9, Bytes{0}, true};
  w.launches = 8;
  CHECK(cost::kernel_time(w, d, MathMode::half, 2).ns == 160'000);
  // 1e12 FLOP: 20 ms of GPU work, far longer than 160 us of dispatch: the host runs ahead.
  w.flops = 1e12;
  CHECK(cost::kernel_time(w, d, MathMode::half, 2).ns == 20'000'000 + 10'000);
  // Without a launch count the op's kernels are its launches: 2 x 20 us = 40 us > 30 us.
  const KernelWork plain{1e9, Bytes{0}, true};
  CHECK(cost::kernel_time(plain, d, MathMode::half, 2).ns == 40'000);
  // The two sides apart: 20 ms + 2 x 5 us on the GPU; 8 launches and 2 collectives x 20 us on
  // the host = 200 us.
  w.launches = 8;
  CHECK(cost::device_time(w, d, MathMode::half, 2).ns == 20'000'000 + 10'000);
  CHECK(cost::host_time(w, d, 2, 2).ns == 200'000);
  w.launches = -1;
  CHECK_THROWS_AS(cost::kernel_time(w, d, MathMode::half, 2), std::invalid_argument);
}

TEST_CASE("a power limit slows compute by the clock it allows and leaves memory-bound work alone",
          "[cost][roofline][power]") {
  auto d = toy_device();
  d.tdp_w = 800;
  d.power_limit_w = 100;  // clock (100 / 800)^(1/3) = 0.5
  // Compute-bound: 1e12 / (100e12 x 0.5 clock x 0.5) = 40 ms, twice the uncapped 20 ms.
  const KernelWork gemm{1e12, Bytes{1'000'000}, true};
  CHECK(cost::kernel_time(gemm, d, MathMode::half).ns == 40'000'000 + 5'000);
  // Vector work on the FP32 units slows the same way: 1e10 / (10e12 x 0.5 x 0.5) = 4 ms.
  const KernelWork vec{1e10, Bytes{0}, false};
  CHECK(cost::kernel_time(vec, d, MathMode::half).ns == 4'000'000 + 5'000);
  // Memory-bound: 1e9 B / (1e12 x 0.5) = 2 ms whatever the clock (its 1e6 FLOP take 0.4 us).
  const KernelWork copy{1e6, Bytes{1'000'000'000}, false};
  CHECK(cost::kernel_time(copy, d, MathMode::half).ns == 2'000'000 + 5'000);
  // The two specs no longer price kernels alike.
  CHECK_FALSE(cost::same_kernel_speed(d, toy_device()));
}

TEST_CASE("fp8 GEMMs use the device's FP8 efficiency where it has one", "[cost][roofline]") {
  auto d = toy_device();
  d.peak_fp8 = core::FlopRate{200e12};
  d.fp8_matmul_efficiency = 0.25;
  const KernelWork w{1e12, Bytes{1'000'000}, true};
  // 1e12 / (200e12 x 0.25) = 20 ms, not 1e12 / (200e12 x 0.5) = 10 ms.
  CHECK(cost::kernel_time(w, d, MathMode::fp8).ns == 20'000'000 + 5'000);
  // 16-bit GEMMs keep matmul_efficiency: 1e12 / (100e12 x 0.5) = 20 ms.
  CHECK(cost::kernel_time(w, d, MathMode::half).ns == 20'000'000 + 5'000);
  // Vector work in an fp8 scenario runs on the FP32 units at matmul_efficiency:
  // 1e10 / (10e12 x 0.5) = 2 ms.
  CHECK(cost::kernel_time(KernelWork{1e10, Bytes{0}, false}, d, MathMode::fp8).ns ==
        2'000'000 + 5'000);
  // Without FP8 tensor cores the 16-bit path and its efficiency apply.
  d.peak_fp8 = core::FlopRate{0};
  CHECK(cost::kernel_time(w, d, MathMode::fp8).ns == 20'000'000 + 5'000);
  d.fp8_matmul_efficiency = 1.5;
  CHECK_THROWS_AS(cost::kernel_time(w, d, MathMode::fp8), std::invalid_argument);
}
