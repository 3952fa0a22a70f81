// Expected maximum of n ranks' times (docs/scale.md). The expected maximum of n standard normals
// is integrated numerically rather than taken from the Gumbel asymptote sqrt(2 ln n), which is
// too high at the group sizes of a training job (n = 8: 2.04 against 1.42).
#include "sim/cost/jitter.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace trainsim::cost {

double expected_max_standard_normal(std::int64_t n) {
  if (n < 1) throw std::invalid_argument("rank count must be at least 1, got " + std::to_string(n));
  if (n == 1) return 0;
  // Simpson's rule over [-12, 12]: the integrand x n phi(x) Phi(x)^(n-1) is below 1e-30 outside
  // it for any n up to 2^40 (the maximum of n normals stays under 8).
  constexpr int kSteps = 24000;  // even
  constexpr double a = -12.0, b = 12.0, h = (b - a) / kSteps;
  const double nd = static_cast<double>(n);
  auto f = [nd](double x) {
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    if (cdf <= 0) return 0.0;
    return x * nd * phi * std::exp((nd - 1) * std::log(cdf));
  };
  double sum = f(a) + f(b);
  for (int k = 1; k < kSteps; ++k) sum += f(a + k * h) * (k % 2 == 1 ? 4 : 2);
  return sum * h / 3;
}

double straggler_factor(const Jitter& j, std::int64_t n) {
  if (!(j.cv >= 0) || !std::isfinite(j.cv))
    throw std::invalid_argument("jitter cv must be a finite non-negative number");
  if (n < 1) throw std::invalid_argument("rank count must be at least 1, got " + std::to_string(n));
  if (j.cv == 0 || n == 1) return 1;
  const double m = expected_max_standard_normal(n);
  if (j.distribution == JitterDistribution::normal) return 1 + j.cv * m;
  const double s = std::sqrt(std::log1p(j.cv * j.cv));
  return std::exp(-0.5 * s * s + s * m);
}

}  // namespace trainsim::cost
