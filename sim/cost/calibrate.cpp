#include "sim/cost/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>

#include <Eigen/Dense>

namespace trainsim::cost {

namespace {

double peak_rate(const hw::DeviceSpec& device, bool half_precision) {
  return half_precision && device.peak_16bit.per_s > 0 ? device.peak_16bit.per_s
                                                       : device.peak_fp32.per_s;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

std::string impossible(const hw::DeviceSpec& device, const Measurement& m, bool half_precision) {
  if (!(m.seconds > 0) || !std::isfinite(m.seconds))
    return "expected a positive finite time, got " + number(m.seconds) + " s";
  const double work = m.matmul ? m.flops : m.bytes;
  if (!(work > 0) || !std::isfinite(work))
    return std::string("expected a positive finite number of ") + (m.matmul ? "FLOPs" : "bytes") +
           ", got " + number(work);
  const double peak =
      m.matmul ? peak_rate(device, half_precision) : device.memory_bandwidth.bytes_per_s;
  const double fastest = work / peak;
  if (!(peak > 0) || m.seconds >= fastest) return "";
  const std::string what = m.matmul ? "a matmul of " + number(work) + " FLOPs"
                                    : "a memory kernel of " + number(work) + " bytes";
  const std::string limit = !m.matmul        ? "memory bandwidth"
                            : half_precision ? "16-bit peak"
                                             : "FP32 peak";
  return what + " takes at least " + number(fastest) + " s on " + device.name + " at its " + limit +
         ", but was timed at " + number(m.seconds) + " s";
}

Calibration calibrate(const hw::DeviceSpec& device, const std::vector<Measurement>& rows,
                      bool half_precision) {
  Calibration out;
  out.device = device;
  const double peak = peak_rate(device, half_precision);
  const double bw = device.memory_bandwidth.bytes_per_s;
  if (!(peak > 0) || !(bw > 0)) throw std::invalid_argument("device needs a positive peak and bandwidth");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (const std::string why = impossible(device, rows[i], half_precision); !why.empty())
      throw std::invalid_argument("measurement " + std::to_string(i + 1) + ": " + why);
    (rows[i].matmul ? out.matmul_rows : out.memory_rows)++;
  }
  if (out.matmul_rows < 2 || out.memory_rows < 2)
    throw std::invalid_argument("need at least two matmul and two memory-bound measurements");
  // One size per kind leaves the fixed costs and the rates inseparable (a singular fit).
  auto sizes_differ = [&](bool matmul) {
    std::vector<double> sizes;
    for (const auto& r : rows)
      if (r.matmul == matmul) sizes.push_back(matmul ? r.flops : r.bytes);
    return std::adjacent_find(sizes.begin(), sizes.end(), std::not_equal_to<>()) != sizes.end();
  };
  if (!sizes_differ(true) || !sizes_differ(false))
    throw std::invalid_argument(
        "need matmul and memory-bound measurements of at least two different sizes each");

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
  // Out of range means the timings contradict the model (e.g. a GEMM above the peak rate, or
  // a negative launch cost); a clamped parameter would describe a device nobody measured.
  auto check = [&](double v, double lo, double hi, const char* name, const char* unit,
                   double scale) {
    if (v >= lo && v <= hi) return;
    throw std::invalid_argument(std::string("the timings fit ") + name + " = " + number(v * scale) +
                                unit + ", outside its range [" + number(lo * scale) + ", " +
                                number(hi * scale) + "]" + unit +
                                "; check the timings for outliers and mixed units");
  };
  // A cost within a nanosecond of zero is rounding in the solve, not a negative fit.
  for (double* v : {&launch, &ramp})
    if (*v < 0 && *v > -1e-9) *v = 0;
  check(e, 1e-3, 1.0, "matmul_efficiency", "", 1);
  check(m, 1e-3, 1.0, "memory_efficiency", "", 1);
  check(launch, 0.0, 1e-3, "kernel_launch", " us", 1e6);
  check(ramp, 0.0, 1e-3, "matmul_ramp", " us", 1e6);
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
