#include <catch2/catch.hpp>

#include <cmath>

#include "sim/cost/calibrate.hpp"
#include "sim/cost/cost.hpp"

using namespace trainsim;

TEST_CASE("calibration recovers the parameters that generated the timings", "[calibrate]") {
  auto truth = *hw::find_device("a100-80gb");
  truth.matmul_efficiency = 0.72;
  truth.memory_efficiency = 0.9;
  truth.matmul_ramp_s = 2.5e-6;
  truth.kernel_launch = core::Duration{3000};
  // Kernel timings (CUDA events) are the GPU side of kernel_time; the host dispatch floor is
  // not in them.
  std::vector<cost::Measurement> rows;
  for (double n : {256.0, 512.0, 1024.0, 2048.0, 8192.0}) {
    cost::KernelWork w{2 * n * n * n, core::Bytes{0}, true};
    rows.push_back({true, w.flops, 0, core::to_seconds(cost::device_time(w, truth, cost::MathMode::half))});
  }
  for (double b : {1e5, 1e7, 1e9}) {
    cost::KernelWork w{0, core::Bytes{static_cast<std::int64_t>(b)}, false};
    rows.push_back({false, 0, b, core::to_seconds(cost::device_time(w, truth, cost::MathMode::half))});
  }
  const auto c = cost::calibrate(*hw::find_device("a100-80gb"), rows);
  CHECK(c.device.matmul_efficiency == Approx(0.72).epsilon(1e-3));
  CHECK(c.device.memory_efficiency == Approx(0.9).epsilon(1e-3));
  CHECK(c.device.matmul_ramp_s == Approx(2.5e-6).epsilon(1e-2));
  CHECK(c.device.kernel_launch.ns == Approx(3000).epsilon(1e-2));
  CHECK(c.rms_relative_error < 1e-3);
  CHECK(c.notes.empty());
}

TEST_CASE("calibration refuses too few measurements", "[calibrate]") {
  std::vector<cost::Measurement> rows = {{true, 1e9, 0, 1e-5}, {false, 0, 1e6, 1e-5}};
  CHECK_THROWS_AS(cost::calibrate(*hw::find_device("a100-80gb"), rows), std::invalid_argument);
}

TEST_CASE("a timing no device could produce is named, not fitted", "[calibrate]") {
  const auto a100 = *hw::find_device("a100-80gb");
  CHECK(cost::impossible(a100, {true, 1e12, 0, 5e-3}).empty());
  CHECK(cost::impossible(a100, {true, 1e12, 0, -5e-3}).find("expected a positive finite time") ==
        0);
  CHECK(cost::impossible(a100, {true, 1e12, 0, 0}).find("expected a positive finite time") == 0);
  CHECK(cost::impossible(a100, {true, 1e12, 0, HUGE_VAL}).find("expected a positive finite time") ==
        0);
  CHECK(cost::impossible(a100, {false, 0, -1, 1e-3})
            .find("expected a positive finite number of bytes") == 0);
  // 1e12 FLOPs in 1 ms is 1,000 TFLOP/s, past the A100's 312 (FP32: 19.5, so 5 ms is too fast).
  CHECK(cost::impossible(a100, {true, 1e12, 0, 1e-3}) ==
        "a matmul of 1e+12 FLOPs takes at least 0.003205 s on a100-80gb at its 16-bit peak, but "
        "was timed at 0.001 s");
  CHECK(!cost::impossible(a100, {true, 1e12, 0, 5e-3}, false).empty());
  CHECK(cost::impossible(a100, {false, 0, 1e9, 1e-5}).find("at its memory bandwidth") !=
        std::string::npos);
  std::vector<cost::Measurement> rows = {
      {true, 1e9, 0, 1e-5}, {true, 1e10, 0, -1e-4}, {false, 0, 1e6, 1e-5}, {false, 0, 1e7, 1e-5}};
  CHECK_THROWS_WITH(cost::calibrate(a100, rows),
                    Catch::StartsWith("measurement 2: expected a positive finite time"));
}

TEST_CASE("calibration refuses a fit outside the physical range instead of clamping it",
          "[calibrate]") {
  // Every timing is possible on its own, but together they fit a negative launch cost: the
  // kernels take 2 us less than the model's rate alone (before, kernel_launch was clamped to 0).
  const auto a100 = *hw::find_device("a100-80gb");
  std::vector<cost::Measurement> rows;
  for (double f : {1e10, 1e11, 1e12})
    rows.push_back({true, f, 0, f / (a100.peak_16bit.per_s * 0.5) - 2e-6});
  for (double b : {1e7, 1e8, 1e9})
    rows.push_back({false, 0, b, b / (a100.memory_bandwidth.bytes_per_s * 0.5) - 2e-6});
  for (const auto& r : rows) REQUIRE(cost::impossible(a100, r).empty());
  CHECK_THROWS_WITH(
      cost::calibrate(a100, rows),
      Catch::StartsWith("the timings fit kernel_launch = -2 us, outside its range [0, 1000] us"));
}

TEST_CASE("calibration needs two sizes of each kind", "[calibrate]") {
  std::vector<cost::Measurement> rows = {
      {true, 1e10, 0, 1e-4}, {true, 1e10, 0, 1.1e-4}, {false, 0, 1e6, 1e-5}, {false, 0, 1e7, 2e-5}};
  CHECK_THROWS_WITH(cost::calibrate(*hw::find_device("a100-80gb"), rows),
                    Catch::Contains("at least two different sizes"));
}
