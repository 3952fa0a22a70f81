#pragma once
// Small scenarios built in code for oracle tests: a chain of plain layers and an ideal device
// (no launch overhead, exact rates) so hand-computed figures come out exactly.
#include <string>
#include <vector>

#include "models/model.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::testing {

// One layer of a chain: every figure per sample.
inline models::Layer plain_layer(std::string name, std::int64_t params, std::int64_t saved,
                                 std::int64_t output, double flops = 0) {
  models::Layer l;
  l.name = std::move(name);
  l.kind = models::LayerKind::generic;
  l.params = params;
  l.saved = core::Bytes{saved};
  l.output = core::Bytes{output};
  l.flops = flops;
  l.matmul = true;
  return l;
}

// Chains `layers` in order; each layer is its own block, so pipelines cut between any two.
inline models::Model chain_model(const std::vector<models::Layer>& layers) {
  models::Model m;
  m.name = "chain";
  m.sequence_model = false;
  models::Vertex prev{};
  for (std::size_t i = 0; i < layers.size(); ++i) {
    models::Layer l = layers[i];
    l.block = static_cast<int>(i);
    const models::Vertex v = models::add_layer(m, l);
    if (i > 0) models::add_edge(m, prev, v);
    prev = v;
  }
  m.num_blocks = static_cast<int>(layers.size());
  models::finalize(m);
  return m;
}

// 1 TFLOP/s at 100% efficiency, effectively infinite memory bandwidth, no launch overhead.
inline hw::DeviceSpec ideal_device(std::int64_t memory_bytes) {
  hw::DeviceSpec d;
  d.name = "ideal";
  d.memory = core::Bytes{memory_bytes};
  d.peak_fp32 = core::FlopRate{1e12};
  d.peak_tf32 = core::FlopRate{1e12};
  d.peak_16bit = core::FlopRate{1e12};
  d.memory_bandwidth = core::Bandwidth{1e30};
  d.matmul_efficiency = 1.0;
  d.memory_efficiency = 1.0;
  d.reserved = core::Bytes{0};
  d.kernel_launch = core::Duration{0};
  d.matmul_ramp_s = 0;  // every GEMM at full efficiency, whatever its size
  d.host_dispatch = core::Duration{0};  // no host launch floor: times are the GPU's
  return d;
}

// Links that cost nothing, for figures that assume free communication.
inline hw::LinkSpec free_link() {
  hw::LinkSpec l;
  l.name = "free";
  l.bandwidth = core::Bandwidth{1e30};
  l.latency = core::Duration{0};
  return l;
}

inline scenario::Scenario make_scenario(models::Model m, hw::DeviceSpec d,
                                        scenario::TrainingSpec t = {},
                                        scenario::ParallelSpec p = {}) {
  scenario::Scenario s;
  s.name = "test";
  s.model = std::move(m);
  s.device = std::move(d);
  s.training = t;
  // Figures computed by hand are the tensors' bytes: the caching-allocator model stays off here
  // (a test of it turns it back on).
  s.training.caching_allocator = false;
  if (s.training.global_batch == 0 || s.training.global_batch == 1)
    s.training.global_batch = t.micro_batch * t.gradient_accumulation * p.data;
  s.parallel = p;
  s.cluster.nodes = 1;
  s.cluster.gpus_per_node = p.devices();
  s.cluster.intra_node = free_link();
  s.cluster.inter_node = free_link();
  return s;
}

}  // namespace trainsim::testing
