#pragma once
// The pipeline schedule tests' timeline fixture: a chain of layers whose units and transfers
// last whole milliseconds, so a schedule's timeline can be worked out by hand.
#include <algorithm>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

namespace trainsim::testing {

// `layers` layers of 1 GFLOP per sample on the ideal 1 TFLOP/s device (a layer's forward takes
// 1 ms, its backward 2 ms), each outputting 1 MB per sample over a 1 GB/s link with no latency
// (a transfer takes 1 ms); `micro` micro-batches of one sample, fp32 SGD. The caller sets the
// schedule in `parallel`; its pipeline degree is `stages`.
inline scenario::Scenario pipeline_chain(int layers, int stages, int micro,
                                         scenario::ParallelSpec parallel = {}) {
  std::vector<models::Layer> ls;
  for (int i = 0; i < layers; ++i)
    ls.push_back(plain_layer("l" + std::to_string(i), 1000, 0, 1'000'000, 1e9));
  scenario::TrainingSpec t;
  t.precision = scenario::Precision::fp32;
  t.optimizer = scenario::Optimizer::sgd;
  t.micro_batch = 1;
  t.global_batch = micro;
  t.gradient_accumulation = micro;
  parallel.pipeline = stages;
  auto s = make_scenario(chain_model(ls), ideal_device(1LL << 40), t, parallel);
  const hw::LinkSpec link{"test", core::Bandwidth{1e9}, core::Duration{0}, ""};
  s.cluster.intra_node = link;
  s.cluster.inter_node = link;
  return s;
}

// When the stage's last backward ends, in ms.
inline double last_backward_end(const parallel::Plan& plan, const exec::Timeline& r, int stage) {
  const auto& P = plan.programs[stage];
  double end = 0;
  for (std::size_t i = 0; i < P.ops.size(); ++i)
    if (P.ops[i].kind == parallel::OpKind::backward)
      end = std::max(end, core::to_seconds(r.devices[stage].finish[i]) * 1e3);
  return end;
}

}  // namespace trainsim::testing
