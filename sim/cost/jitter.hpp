#pragma once
// Stragglers: the step waits for the slowest rank (docs/scale.md). Each rank's compute time
// between two synchronisations varies around its mean with coefficient of variation `cv`; a
// collective over n ranks starts when the last of them arrives, so the work before it lasts the
// expected maximum of n such times. Deterministic: expected values, no random draws.
#include <cstdint>

namespace trainsim::cost {

enum class JitterDistribution { normal, lognormal };

struct Jitter {
  JitterDistribution distribution = JitterDistribution::normal;
  double cv = 0;  // 0: every rank takes the mean time (no jitter)
  bool operator==(const Jitter&) const = default;
};

// E[max of n independent standard normals], by numerical integration of
// x n phi(x) Phi(x)^(n-1) (exact to about 1e-9; 0 for n = 1, 1/sqrt(pi) for n = 2,
// 3/(2 sqrt(pi)) for n = 3).
double expected_max_standard_normal(std::int64_t n);

// The factor by which n ranks' synchronised work outlasts one rank's mean time:
//   normal:    1 + cv m_n                  (m_n = expected_max_standard_normal(n))
//   lognormal: exp(mu + s m_n), s^2 = ln(1 + cv^2), mu = -s^2 / 2 (mean 1); the maximum of
//              lognormals is the exponential of the maximum of their logs, whose expectation
//              this takes at the expected maximum (a lower bound by Jensen's inequality).
// 1 when cv is 0 or n is 1. Throws std::invalid_argument for cv < 0 or n < 1.
double straggler_factor(const Jitter& j, std::int64_t n);

}  // namespace trainsim::cost
