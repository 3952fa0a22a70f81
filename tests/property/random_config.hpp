#pragma once
// Random small models and parallel configurations for property tests: a fixed-seed generator
// (its own arithmetic, so every standard library draws the same cases) and builders that
// return only what the scenario validator accepts.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../support/fixtures.hpp"
#include "sim/scenario/validate.hpp"

namespace trainsim::property {

// SplitMix64: tiny, fast and the same everywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi].
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  bool chance(int percent) { return between(1, 100) <= percent; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(between(0, static_cast<std::int64_t>(v.size()) - 1))];
  }

 private:
  std::uint64_t state_;
};

// A layer with random figures, zeros included; some of it divides under tensor parallelism.
inline models::Layer random_layer(Rng& r, int i) {
  const std::int64_t params = r.chance(20) ? 0 : r.between(1, 50'000);
  const std::int64_t saved = r.chance(20) ? 0 : r.between(1, 20'000);
  const std::int64_t output = r.chance(10) ? 0 : r.between(1, 5'000);
  const double flops = r.chance(20) ? 0.0 : static_cast<double>(r.between(1, 1'000'000'000));
  models::Layer l = testing::plain_layer("l" + std::to_string(i), params, saved, output, flops);
  l.params_split = r.chance(50) ? r.between(0, params) : 0;
  l.saved_split = core::Bytes{r.chance(50) ? r.between(0, saved) : 0};
  l.output_split = r.chance(20);
  l.io_bytes = core::Bytes{r.between(0, 100'000)};
  l.matmul = r.chance(70);
  l.backward_factor = l.matmul ? 2.0 : 1.0;
  if (r.chance(30)) {
    l.tp_allreduce_forward = 1;
    l.tp_allreduce_backward = r.chance(50) ? 1 : 0;
    l.tp_allreduce_bytes = l.output;
  }
  return l;
}

// A chain of 1..max_layers layers; with `dag`, extra skip edges i -> k (k > i + 1) as in
// residual networks. Each layer is its own block, so pipelines may cut anywhere.
inline models::Model random_model(Rng& r, bool dag, int max_layers = 12) {
  const int n = static_cast<int>(r.between(1, max_layers));
  std::vector<models::Layer> layers;
  for (int i = 0; i < n; ++i) layers.push_back(random_layer(r, i));
  models::Model m = testing::chain_model(layers);
  if (dag && n > 2) {
    const int extra = static_cast<int>(r.between(1, n));
    for (int e = 0; e < extra; ++e) {
      const auto from = r.between(0, n - 3);
      const auto to = r.between(from + 2, n - 1);
      if (!boost::edge(m.order[from], m.order[to], m.graph).second)
        models::add_edge(m, m.order[from], m.order[to]);
    }
    models::finalize(m);
  }
  return m;
}

inline hw::DeviceSpec test_device() {
  hw::DeviceSpec d = *hw::find_device("a100-80gb");
  d.memory = core::Bytes{1'000'000'000};  // OOM does not stop play; small enough to show one
  return d;
}

// A random training and parallel setup for `m`, placed on nodes of up to 4 GPUs with real
// links. Returns nullopt when the scenario validator rejects the combination.
inline std::optional<scenario::Scenario> random_scenario(Rng& r, const models::Model& m) {
  scenario::TrainingSpec t;
  t.micro_batch = r.between(1, 4);
  t.gradient_accumulation = r.between(1, 8);
  t.precision = r.pick(std::vector{scenario::Precision::fp32, scenario::Precision::fp16,
                                   scenario::Precision::bf16});
  t.optimizer = r.pick(std::vector{scenario::Optimizer::sgd, scenario::Optimizer::momentum,
                                   scenario::Optimizer::adam, scenario::Optimizer::adamw});
  t.recompute = r.pick(std::vector{scenario::Recompute::none, scenario::Recompute::selective,
                                   scenario::Recompute::full});
  if (t.recompute == scenario::Recompute::full && r.chance(30)) t.recompute_layers = r.between(0, 2);
  scenario::ParallelSpec p;
  p.data = r.pick(std::vector<std::int64_t>{1, 1, 2, 4});
  p.tensor = r.pick(std::vector<std::int64_t>{1, 1, 2, 4});
  p.pipeline = r.between(1, 4);
  p.zero = static_cast<int>(r.between(0, 3));
  p.schedule = r.pick(std::vector{scenario::Schedule::gpipe, scenario::Schedule::one_f_one_b,
                                  scenario::Schedule::interleaved});
  p.virtual_stages = p.schedule == scenario::Schedule::interleaved ? r.between(1, 3) : 1;
  p.sequence_parallel = p.tensor > 1 && r.chance(50);
  p.bucket_size = core::Bytes{r.pick(std::vector<std::int64_t>{1'000, 100'000, 25'000'000})};
  p.bucket_buffers = r.pick(std::vector{scenario::BucketBuffers::transient, scenario::BucketBuffers::in_place,
                                         scenario::BucketBuffers::persistent});
  t.global_batch = t.micro_batch * t.gradient_accumulation * p.data;
  scenario::Scenario s = testing::make_scenario(m, test_device(), t, p);
  s.cluster.gpus_per_node = p.devices() % 4 == 0 ? 4 : p.devices();
  s.cluster.nodes = p.devices() / s.cluster.gpus_per_node;
  s.cluster.intra_node = *hw::find_link("nvlink3");
  s.cluster.inter_node = *hw::find_link("ib-hdr");
  try {
    scenario::YamlContext ctx("property");
    scenario::validate_layout(ctx, s, scenario::LayoutNodes{});
  } catch (const core::ConfigError&) {
    return std::nullopt;
  }
  return s;
}

}  // namespace trainsim::property
