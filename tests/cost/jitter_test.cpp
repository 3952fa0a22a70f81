// The expected maximum of n ranks' times (sim/cost/jitter.cpp) against closed forms and the
// published table of normal order statistics.
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>

#include "sim/cost/jitter.hpp"

using namespace trainsim;

TEST_CASE("the expected maximum of n standard normals matches its closed forms", "[cost][jitter]") {
  // n = 1: the mean, 0. n = 2: E[max(X, Y)] = E|X - Y| / 2 = sqrt(2) sqrt(2/pi) / 2 = 1/sqrt(pi).
  // n = 3: 3 / (2 sqrt(pi)) (David & Nagaraja, Order Statistics, the expected largest of three).
  CHECK(cost::expected_max_standard_normal(1) == 0);
  CHECK(cost::expected_max_standard_normal(2) == Approx(1 / std::sqrt(M_PI)).epsilon(1e-9));
  CHECK(cost::expected_max_standard_normal(3) == Approx(1.5 / std::sqrt(M_PI)).epsilon(1e-9));
  // Tables of normal order statistics (Harter 1961): the largest of 8 has mean 1.42360.
  CHECK(cost::expected_max_standard_normal(8) == Approx(1.42360).epsilon(1e-5));
  // It grows without bound but below the Gumbel asymptote sqrt(2 ln n) (3.7233 for n = 1024).
  const double m1024 = cost::expected_max_standard_normal(1024);
  CHECK(m1024 > cost::expected_max_standard_normal(512));
  CHECK(m1024 < std::sqrt(2 * std::log(1024.0)));
  CHECK_THROWS_AS(cost::expected_max_standard_normal(0), std::invalid_argument);
}

TEST_CASE("the straggler factor is the expected slowest of n ranks relative to the mean", "[cost][jitter]") {
  using cost::JitterDistribution;
  // Off: cv 0, or a single rank.
  CHECK(cost::straggler_factor({JitterDistribution::normal, 0}, 1024) == 1);
  CHECK(cost::straggler_factor({JitterDistribution::normal, 0.1}, 1) == 1);
  // Normal, cv 0.1, 2 ranks: 1 + 0.1 / sqrt(pi) = 1.0564190.
  CHECK(cost::straggler_factor({JitterDistribution::normal, 0.1}, 2) ==
        Approx(1 + 0.1 / std::sqrt(M_PI)).epsilon(1e-9));
  // Lognormal of mean 1, cv 0.1, 2 ranks: s = sqrt(ln 1.01) = 0.0997513, mu = -s^2/2 = -0.0049752,
  // exp(mu + s / sqrt(pi)) = exp(0.0513041) = 1.0526423.
  CHECK(cost::straggler_factor({JitterDistribution::lognormal, 0.1}, 2) == Approx(1.0526423).epsilon(1e-6));
  // More ranks wait longer.
  CHECK(cost::straggler_factor({JitterDistribution::normal, 0.02}, 4096) >
        cost::straggler_factor({JitterDistribution::normal, 0.02}, 64));
  CHECK_THROWS_AS(cost::straggler_factor({JitterDistribution::normal, -0.1}, 2), std::invalid_argument);
}
