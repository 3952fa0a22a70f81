#include <catch2/catch.hpp>

#include "sim/cost/calibrate.hpp"
#include "sim/cost/cost.hpp"

using namespace trainsim;

TEST_CASE("calibration recovers the parameters that generated the timings", "[calibrate]") {
  auto truth = *hw::find_device("a100-80gb");
  truth.matmul_efficiency = 0.72;
  truth.memory_efficiency = 0.9;
  truth.matmul_ramp_s = 2.5e-6;
  truth.kernel_launch = core::Duration{3000};
  std::vector<cost::Measurement> rows;
  for (double n : {256.0, 512.0, 1024.0, 2048.0, 8192.0}) {
    cost::KernelWork w{2 * n * n * n, core::Bytes{0}, true};
    rows.push_back({true, w.flops, 0, core::to_seconds(cost::kernel_time(w, truth, cost::MathMode::half))});
  }
  for (double b : {1e5, 1e7, 1e9}) {
    cost::KernelWork w{0, core::Bytes{static_cast<std::int64_t>(b)}, false};
    rows.push_back({false, 0, b, core::to_seconds(cost::kernel_time(w, truth, cost::MathMode::half))});
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
