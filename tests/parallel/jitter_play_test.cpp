// cluster.jitter as played (sim/parallel/pass_jitter.cpp): every compute op of a program lasts
// the expected slowest of the ranks it stands for.
#include <catch2/catch.hpp>

#include <cmath>

#include "../support/fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;

TEST_CASE("jitter stretches each compute op by the expected maximum over the program's ranks", "[parallel][jitter]") {
  // Four layers of 1 GFLOP per sample on the ideal 1 TFLOP/s device: 1 ms forward, 2 ms backward
  // each, 12 ms of compute per micro-batch. Two data ranks, normal jitter of cv 0.1: each op lasts
  // 1 + 0.1 / sqrt(pi) = 1.0564190 times as long (rounded up to the nanosecond per op).
  std::vector<models::Layer> ls;
  for (int i = 0; i < 4; ++i) ls.push_back(plain_layer("l" + std::to_string(i), 1000, 0, 1000, 1e9));
  const auto model = chain_model(ls);
  scenario::TrainingSpec t;
  t.precision = scenario::Precision::fp32;
  t.optimizer = scenario::Optimizer::sgd;
  scenario::ParallelSpec p;
  p.data = 2;
  auto s = make_scenario(model, ideal_device(1LL << 40), t, p);
  const auto calm = exec::play(parallel::lower(s));
  s.cluster.jitter = {cost::JitterDistribution::normal, 0.1};
  const auto plan = parallel::lower(s);
  CHECK(plan.programs[0].straggler == Approx(1 + 0.1 / std::sqrt(M_PI)).epsilon(1e-12));
  const auto jittered = exec::play(plan);
  const double ratio = core::to_seconds(jittered.devices[0].compute_busy) /
                       core::to_seconds(calm.devices[0].compute_busy);
  CHECK(ratio == Approx(1 + 0.1 / std::sqrt(M_PI)).epsilon(1e-6));
  CHECK(jittered.step_time > calm.step_time);
}
