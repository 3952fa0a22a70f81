// FSDP combined with pipeline and context parallelism (pass_fsdp.cpp), against hand counts:
// model states per pipeline stage of 16 B/param / S over the stage's own parameters, gradients
// accumulated unsharded until each chunk's last micro-batch (PyTorch pipelining's
// set_requires_gradient_sync(last_backward)), and a shard group of data x context ranks.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using hw::MemCategory;

namespace {

// emb (1,000 params, root) | 4 blocks of attn (3,000) + mlp (5,000) | head (1,000, root):
// 34,000 parameters; no activations, so every peak is model states and FSDP's buffers alone.
// Two pipeline stages take two blocks each (Megatron's rule): stage 0 emb + blocks 0-1,
// stage 1 blocks 2-3 + head, 17,000 parameters each.
models::Model four_blocks() {
  std::vector<models::Layer> ls;
  ls.push_back(plain_layer("emb", 1000, 0, 0, 1e9));
  for (int b = 0; b < 4; ++b) {
    ls.push_back(plain_layer("block." + std::to_string(b) + ".attn", 3000, 0, 0, 1e9));
    ls.push_back(plain_layer("block." + std::to_string(b) + ".mlp", 5000, 0, 0, 1e9));
  }
  ls.push_back(plain_layer("head", 1000, 0, 0, 1e9));
  models::Model m = chain_model(ls);
  const int block[] = {-1, 0, 0, 1, 1, 2, 2, 3, 3, -1};
  for (std::size_t i = 0; i < m.order.size(); ++i) m.graph[m.order[i]].block = block[i];
  m.num_blocks = 4;
  return m;
}

scenario::TrainingSpec bf16_adamw(std::int64_t microbatches) {
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.gradient_accumulation = microbatches;
  t.precision = scenario::Precision::bf16;
  t.optimizer = scenario::Optimizer::adamw;
  return t;
}

scenario::ParallelSpec layout(std::int64_t data, std::int64_t pipeline, std::int64_t context = 1,
                              std::int64_t shard = 0) {
  scenario::ParallelSpec p;
  p.data = data;
  p.pipeline = pipeline;
  p.context = context;
  p.fsdp.enabled = true;
  p.fsdp.shard_size = shard;
  return p;
}

std::int64_t states(const parallel::Program& P) {
  const auto& ms = P.model_states;
  return (ms[MemCategory::weights] + ms[MemCategory::gradients] + ms[MemCategory::optimizer_states])
      .value;
}

struct CommCount {
  int gathers = 0, scatters = 0, all_reduces = 0;
  std::int64_t gathered = 0, scattered = 0;
};

CommCount comm(const parallel::Program& P, std::int64_t ranks) {
  CommCount c;
  for (const auto& op : P.ops) {
    if (op.purpose == parallel::CommPurpose::fsdp_all_gather) {
      ++c.gathers;
      c.gathered += op.comm.bytes.value;
      CHECK(op.comm.ranks == ranks);
    }
    if (op.purpose == parallel::CommPurpose::fsdp_reduce_scatter) {
      ++c.scatters;
      c.scattered += op.comm.bytes.value;
      CHECK(op.comm.ranks == ranks);
    }
    if (op.purpose == parallel::CommPurpose::hsdp_all_reduce) ++c.all_reduces;
  }
  return c;
}

}  // namespace

TEST_CASE("FSDP with pipeline parallelism shards each stage's own parameters", "[parallel][fsdp]") {
  // Each stage: 17,000 parameters over 4 data ranks, 16 x 17,000 / 4 = 68,000 B of fp32
  // weights, gradients and Adam states; 4,250 parameters per device.
  const auto s = make_scenario(four_blocks(), ideal_device(1LL << 40), bf16_adamw(4), layout(4, 2));
  const auto plan = parallel::lower(s);
  REQUIRE(plan.programs.size() == 2);
  for (const auto& P : plan.programs) {
    CHECK(states(P) == 16 * 17'000 / 4);
    CHECK(P.parameters == 17'000 / 4);
    CHECK(P.count == 4);
  }
}

TEST_CASE("FSDP with pipeline parallelism reduce-scatters once per unit, after the last micro-batch",
          "[parallel][fsdp]") {
  // Stage 0 (root = emb, blocks 0 and 1) under 1F1B with 4 micro-batches:
  // F0 F1 B0 F2 B1 F3 B2 B3. A forward reshards its blocks; a backward keeps them (pipelining's
  // reshard_after_backward: false), so the forward after a backward finds them gathered and the
  // backward after a forward gathers them again. Gathers: F0 root, block 0, block 1; F1 blocks
  // 0, 1; B0 blocks 1, 0; F2 none; B1 blocks 1, 0; F3 none; B2 blocks 1, 0; B3 none:
  // 11 gathers, 2 x 1,000 + 10 x 2 x 8,000 = 162,000 B in bf16.
  // Reduce-scatters: one per unit, in fp32, after B3 only: 4 x 17,000 = 68,000 B.
  const auto s = make_scenario(four_blocks(), ideal_device(1LL << 40), bf16_adamw(4), layout(4, 2));
  const auto plan = parallel::lower(s);
  const CommCount c = comm(plan.programs[0], 4);
  CHECK(c.gathers == 11);
  CHECK(c.gathered == 2 * 1'000 + 10 * 16'000);
  CHECK(c.scatters == 3);
  CHECK(c.scattered == 4 * 17'000);
  for (const auto& op : plan.programs[0].ops)
    if (op.purpose == parallel::CommPurpose::fsdp_reduce_scatter) CHECK(op.microbatch == 3);
}

TEST_CASE("FSDP with pipeline parallelism holds accumulated gradients and gathered units to the end",
          "[parallel][fsdp]") {
  // Stage 1 (blocks 2, 3 and the head; root = head), free links, persistent fp32 weights
  // 17,000 + Adam 34,000 = 51,000 B. The peak is the chunk's last backward op (block 2's
  // attention), which ends the step's backward:
  //   sharded fp32 gradients held: all 17,000 parameters               17,000
  //   gathered bf16: root 2,000, block 3 16,000 (kept after its
  //   backward), block 2 16,000                                         34,000
  //   accumulated gradients in fp32: 4 x (1,000 + 8,000 + 8,000)        68,000
  //   block 2's unsharded bf16 gradients                  2 x 8,000    16,000
  // 51,000 + 135,000 = 186,000 B, with one micro-batch or two (the accumulated gradients are
  // booked by the first backward and kept). The reduce-scatters that follow book their input
  // one unit at a time after the parameters are resharded (at most 51,000 + 17,000 + 68,000 +
  // 32,000 = 168,000 B).
  for (std::int64_t mb : {1, 2}) {
    const auto s = make_scenario(four_blocks(), ideal_device(1LL << 40), bf16_adamw(mb), layout(4, 2));
    CHECK(exec::play(parallel::lower(s)).devices[1].peak.value == 186'000);
  }
  SECTION("reduce_dtype bf16: the accumulated gradients stay in bf16") {
    // The 68,000 B of fp32 accumulated gradients become 2 x 17,000: 186,000 - 34,000 = 152,000.
    auto p = layout(4, 2);
    p.fsdp.reduce_dtype = scenario::Precision::bf16;
    const auto s = make_scenario(four_blocks(), ideal_device(1LL << 40), bf16_adamw(2), p);
    CHECK(exec::play(parallel::lower(s)).devices[1].peak.value == 152'000);
  }
}

TEST_CASE("FSDP with context parallelism shards over data x context ranks", "[parallel][fsdp]") {
  // torchtitan's dp_shard_cp mesh: data 2 x context 2 = a shard group of 4 ranks,
  // 16 x 34,000 / 4 = 136,000 B of model states, every gather and reduce-scatter over 4 ranks.
  const auto s = make_scenario(four_blocks(), ideal_device(1LL << 40), bf16_adamw(1), layout(2, 1, 2));
  const auto plan = parallel::lower(s);
  CHECK(states(plan.programs[0]) == 16 * 34'000 / 4);
  const CommCount c = comm(plan.programs[0], 4);
  CHECK(c.scatters == 5);  // the root and 4 blocks
  CHECK(c.all_reduces == 0);
  SECTION("HSDP: shard_size 2 of data 4, x context 2: shard groups of 4, 2 replicas") {
    const auto h = make_scenario(four_blocks(), ideal_device(1LL << 40), bf16_adamw(1),
                                 layout(4, 1, 2, 2));
    const auto hp = parallel::lower(h);
    CHECK(states(hp.programs[0]) == 16 * 34'000 / 4);
    const CommCount hc = comm(hp.programs[0], 4);
    CHECK(hc.all_reduces == 5);
  }
}
