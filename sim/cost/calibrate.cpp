#include "sim/cost/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <Eigen/Dense>

namespace trainsim::cost {

Calibration calibrate(const hw::DeviceSpec& device, const std::vector<Measurement>& rows,
                      bool half_precision) {
  Calibration out;
  out.device = device;
  const double peak = half_precision && device.peak_16bit.per_s > 0 ? device.peak_16bit.per_s
                                                                   : device.peak_fp32.per_s;
  const double bw = device.memory_bandwidth.bytes_per_s;
  if (!(peak > 0) || !(bw > 0)) throw std::invalid_argument("device needs a positive peak and bandwidth");
  for (const auto& r : rows) {
    if (!(r.seconds > 0)) throw std::invalid_argument("every measurement needs a positive time");
    (r.matmul ? out.matmul_rows : out.memory_rows)++;
  }
  if (out.matmul_rows < 2 || out.memory_rows < 2)
    throw std::invalid_argument("need at least two matmul and two memory-bound measurements");

  // Unknowns x = [1/e, ramp/e, 1/m, launch]; rows weighted by 1/t so the fit minimises
  // relative error (small kernels count as much as large ones).
  Eigen::MatrixXd a(rows.size(), 4);
  Eigen::VectorXd b(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const double w = 1.0 / r.seconds;
    if (r.matmul) a.row(i) << r.flops / peak * w, 1.0 * w, 0.0, 1.0 * w;
    else a.row(i) << 0.0, 0.0, r.bytes / bw * w, 1.0 * w;
    b(i) = 1.0;
  }
  const Eigen::VectorXd x = a.colPivHouseholderQr().solve(b);

  double e = 1.0 / x(0), m = 1.0 / x(2), launch = x(3), ramp = x(1) * e;
  auto clamp = [&](double& v, double lo, double hi, const char* name) {
    if (!(v >= lo && v <= hi)) {
      out.notes.push_back(std::string(name) + " fitted outside [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "] and was clamped");
      v = std::isfinite(v) ? std::clamp(v, lo, hi) : hi;
    }
  };
  clamp(e, 1e-3, 1.0, "matmul_efficiency");
  clamp(m, 1e-3, 1.0, "memory_efficiency");
  clamp(launch, 0.0, 1e-3, "kernel_launch");
  clamp(ramp, 0.0, 1e-3, "matmul_ramp");
  out.device.matmul_efficiency = e;
  out.device.memory_efficiency = m;
  out.device.matmul_ramp_s = ramp;
  out.device.kernel_launch = core::Duration{static_cast<std::int64_t>(std::llround(launch * 1e9))};

  double sq = 0;
  for (const auto& r : rows) {
    const double model = r.matmul ? r.flops / (peak * e) + ramp / e + launch : r.bytes / (bw * m) + launch;
    const double rel = (model - r.seconds) / r.seconds;
    sq += rel * rel;
  }
  out.rms_relative_error = std::sqrt(sq / static_cast<double>(rows.size()));
  return out;
}

}  // namespace trainsim::cost
