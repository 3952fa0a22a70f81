#pragma once
// The gradient-reduction tests' scenario (accumulate_test.cpp, grad_reduce_test.cpp).
#include <string>
#include <vector>

#include "fixtures.hpp"

namespace trainsim::testing {

inline constexpr std::int64_t kAdamLayerParams = 250'000'000;

// `layers` layers (one by default) of P = 250,000,000 parameters (one tensor) and 1 GFLOP per
// sample each, fp16 with Adam, four micro-batches of one sample, on a 1 TFLOP/s device with
// 1 TB/s of memory bandwidth (launches free), `data` ranks over free links.
inline scenario::Scenario adam_layers(scenario::AccumulateGrads a, std::int64_t data = 1,
                                      int zero = 0, int layers = 1) {
  hw::DeviceSpec d = ideal_device(1LL << 40);
  d.memory_bandwidth = core::Bandwidth{1e12};
  scenario::TrainingSpec t;
  t.precision = scenario::Precision::fp16;
  t.optimizer = scenario::Optimizer::adam;
  t.micro_batch = 1;
  t.gradient_accumulation = 4;
  t.accumulate_grads = a;
  scenario::ParallelSpec p;
  p.data = data;
  p.zero = zero;
  std::vector<models::Layer> ls;
  for (int i = 0; i < layers; ++i)
    ls.push_back(plain_layer("l" + std::to_string(i), kAdamLayerParams, 0, 1000, 1e9));
  return make_scenario(chain_model(ls), d, t, p);
}

}  // namespace trainsim::testing
