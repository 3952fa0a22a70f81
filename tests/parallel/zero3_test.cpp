// DeepSpeed ZeRO-3's parameter fetch (sim/parallel/pass_zero3.cpp, docs/zero3.md): bucket
// counts and sizes, persistent parameters, the max_live_parameters gate, and the throughput
// trend of a data-parallel degree grown at a fixed global batch.
#include <catch2/catch.hpp>

#include <string>

#include "../support/fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using hw::MemCategory;

namespace {

scenario::TrainingSpec bf16_adam(std::int64_t accumulation) {
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.gradient_accumulation = accumulation;
  t.precision = scenario::Precision::bf16;
  t.optimizer = scenario::Optimizer::adam;
  return t;
}

// Eight layers of 1M parameters (and, with `vector`, a 1,000-element vector each).
models::Model eight_layers(bool vector) {
  std::vector<models::Layer> ls;
  for (int i = 0; i < 8; ++i) {
    models::Layer l = plain_layer("l" + std::to_string(i), 1'000'000, 0, 1000, 1e9);
    if (vector) {
      l.tensors = {models::ParamTensor{1000, 1000}, models::ParamTensor{1000}};
      l.params = 1'001'000;
    }
    ls.push_back(l);
  }
  return chain_model(ls);
}

scenario::Scenario zero3(const models::Model& m, std::int64_t bucket, std::int64_t accumulation = 1,
                         std::int64_t max_live = 1'000'000'000) {
  scenario::ParallelSpec p;
  p.data = 4;
  p.zero = 3;
  p.zero3.prefetch_bucket_size = bucket;
  p.zero3.max_live_parameters = max_live;
  return make_scenario(m, ideal_device(1LL << 40), bf16_adam(accumulation), p);
}

std::vector<const parallel::Op*> gathers(const parallel::Program& P) {
  std::vector<const parallel::Op*> out;
  for (const auto& op : P.ops)
    if (op.kind == parallel::OpKind::all_gather && op.purpose == parallel::CommPurpose::zero)
      out.push_back(&op);
  return out;
}

}  // namespace

TEST_CASE("ZeRO-3 gathers one bucket of consecutive layers per prefetch_bucket_size elements",
          "[parallel][zero3]") {
  const auto model = eight_layers(false);
  SECTION("2.5M-element buckets: layers {0,1,2}, {3,4,5}, {6,7} forward, {7,6,5}, {4,3,2}, {1,0} backward") {
    // A bucket closes at the layer that brings it to 2.5M elements: 3 + 3 + 2 layers of 1M, each
    // 2 MB in bf16, so 6, 6 and 4 MB per gather (the op's size is the gathered whole); 3 gathers
    // per unit, a forward and a backward unit per micro-batch, 2 micro-batches: 12.
    const auto plan = parallel::lower(zero3(model, 2'500'000, 2));
    const auto g = gathers(plan.programs[0]);
    REQUIRE(g.size() == 12);
    const std::int64_t mb[6] = {6'000'000, 6'000'000, 4'000'000, 6'000'000, 6'000'000, 4'000'000};
    const std::int32_t first[6] = {0, 3, 6, 7, 4, 1};
    for (int k = 0; k < 6; ++k) {
      CHECK(g[k]->comm.bytes.value == mb[k]);
      CHECK(g[k]->layer == first[k]);
      CHECK(g[k]->comm.ranks == 4);
    }
    // Each gather books what it adds to the rank's quarter: 3/4 of each layer's 2 MB.
    const auto& P = plan.programs[0];
    core::Bytes booked{};
    for (auto e = g[0]->alloc_begin; e < g[0]->alloc_end; ++e) booked += P.effects[e].bytes;
    CHECK(booked.value == 3 * 1'500'000);
    const auto t = exec::play(plan);
    CHECK(t.devices[0].peak.value > 0);
  }
  SECTION("DeepSpeed's default of 5e7 elements gathers the 8M-parameter model in one op per unit") {
    const auto plan = parallel::lower(zero3(model, 50'000'000));
    const auto g = gathers(plan.programs[0]);
    REQUIRE(g.size() == 2);
    CHECK(g[0]->comm.bytes.value == 16'000'000);
  }
  SECTION("a bucket of one element gathers layer by layer") {
    const auto plan = parallel::lower(zero3(model, 1));
    CHECK(gathers(plan.programs[0]).size() == 16);
  }
}

TEST_CASE("ZeRO-3 keeps parameters of at most param_persistence_threshold elements whole",
          "[parallel][zero3]") {
  // Each layer: a 1000 x 1000 matrix (1M elements, partitioned) and a 1,000-element vector (at
  // most 1e5: persistent). bf16 weights per rank: 8 x 2 MB / 4 ranks + 8 x 1,000 x 2 B
  // = 4,000,000 + 16,000 B; the gathers carry the matrices only (8 x 2 MB in one 5e7 bucket).
  const auto model = eight_layers(true);
  const auto plan = parallel::lower(zero3(model, 50'000'000));
  const auto& P = plan.programs[0];
  CHECK(P.persistent[MemCategory::weights].value == 4'016'000);
  CHECK(P.parameters == 8'000'000 / 4 + 8'000);
  CHECK(gathers(P)[0]->comm.bytes.value == 16'000'000);
  // A threshold of 0 partitions the vectors too: 8 x 2,002,000 B / 4.
  auto s = zero3(model, 50'000'000);
  s.parallel.zero3.param_persistence_threshold = 0;
  const auto all = parallel::lower(s);
  CHECK(all.programs[0].persistent[MemCategory::weights].value == 4'004'000);
  CHECK(gathers(all.programs[0])[0]->comm.bytes.value == 16'016'000);
}

TEST_CASE("ZeRO-3 issues a bucket's gather when the bucket before it begins, unless both exceed max_live_parameters",
          "[parallel][zero3]") {
  const auto model = eight_layers(false);
  // Buckets of 3M elements ({0,1,2}, {3,4,5}): with max_live 1e9 the second gather waits for no
  // compute op (it is issued as layer 0 begins, the unit's first); with max_live 4M (< 3M + 3M)
  // it waits for layer 2's forward, the last of the bucket before it.
  auto second_deps = [&](std::int64_t max_live) {
    const auto plan = parallel::lower(zero3(model, 2'500'000, 1, max_live));
    const auto& P = plan.programs[0];
    const auto g = gathers(P);
    std::vector<std::int32_t> compute_layers;
    for (auto d = g[1]->dep_begin; d < g[1]->dep_end; ++d) {
      const auto& op = P.ops[static_cast<std::size_t>(P.deps[d].index)];
      if (op.stream == parallel::StreamKind::compute) compute_layers.push_back(op.layer);
    }
    return compute_layers;
  };
  CHECK(second_deps(1'000'000'000).empty());
  CHECK(second_deps(4'000'000) == std::vector<std::int32_t>{2});
}

TEST_CASE("ZeRO-3 throughput per GPU falls as the data-parallel degree grows at a fixed global batch",
          "[parallel][zero3]") {
  // Llama 2 7B on A100s, a global batch of 64 sequences of 2,048 tokens in one micro-batch per
  // rank: each rank's compute shrinks as 64 / data while every rank still gathers the whole model
  // twice per step (the ring all-gather's bytes per rank, (n-1)/n of it, barely change) and
  // pays n-1 latency steps per gather, so samples per second per GPU must fall (full
  // recomputation so that data 8's micro-batch of 8 fits: 1.91, 1.84, 1.72, 1.43 per GPU).
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/parallel/05_zero3.yaml";
  double previous = 0;
  for (std::int64_t data : {8, 16, 32, 64}) {
    const std::vector<std::string> sets = {
        "parallel.data=" + std::to_string(data), "cluster.nodes=" + std::to_string(data / 8),
        "training.micro_batch=" + std::to_string(64 / data), "training.gradient_accumulation=1",
        "device=a100-80gb", "training.recompute=full"};
    const auto s = scenario::load_scenario(file, sets);
    const auto t = exec::play(parallel::lower(s));
    const double per_gpu = 64.0 / core::to_seconds(t.step_time) / static_cast<double>(data);
    INFO("data " << data << ": " << per_gpu << " samples/s per GPU");
    if (previous > 0) CHECK(per_gpu < previous);
    previous = per_gpu;
  }
}
