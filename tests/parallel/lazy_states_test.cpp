// Optimizer states created in the first step (training.optimizer_states: lazy; pass_load.cpp,
// exec/allocator_replay.cpp): torch.optim's `_init_group` makes exp_avg and exp_avg_sq with
// zeros_like(param) in the first optimizer.step(), among the segments the first step left
// cached. Bytes computed by hand for Llama-2-7B (h 4096, MLP 11008, vocabulary 32,000) in fp32
// with AdamW (two 4-byte states per parameter), and the caching allocator's rules
// (docs/finetuning.md, "Tensor by tensor in the caching allocator").
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "models/presets.hpp"
#include "sim/exec/allocator_model.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/memory_series.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

constexpr std::int64_t kMiB = 1 << 20;

scenario::Scenario llama2_7b(bool lazy, std::int32_t layers) {
  auto config = std::get<models::TransformerConfig>(models::find_preset("llama2-7b")->config);
  if (layers > 0) config.layers = layers;
  models::BuildOptions o;
  o.seq_len = 256;
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.seq_len = 256;
  t.precision = scenario::Precision::fp32;
  t.optimizer = scenario::Optimizer::adamw;
  t.lazy_optimizer_states = lazy;
  auto s = make_scenario(models::build_config(config, o), ideal_device(1LL << 40), t);
  s.training.caching_allocator = true;
  return s;
}

parallel::MemEffect tensor(hw::MemCategory c, std::int64_t bytes, std::int32_t layer) {
  return {c, core::Bytes{bytes}, parallel::TensorKind::logits, layer, false};
}

}  // namespace

TEST_CASE("optimizer_states: lazy makes exp_avg then exp_avg_sq per parameter tensor",
          "[optimizer][lazy_states]") {
  const auto plan = parallel::lower(llama2_7b(true, 0));
  const auto& P = plan.programs.at(0);
  // 8 bytes per parameter: 6,738,415,616 x 8 = 53,907,324,928 B, all of them created lazily.
  CHECK(P.persistent[hw::MemCategory::optimizer_states].value == 53'907'324'928LL);
  std::int64_t sum = 0;
  for (const auto& e : P.lazy_states) sum += e.bytes.value;
  CHECK(sum == 53'907'324'928LL);
  // In layer order: the embedding (32,000 x 4,096 fp32: 524,288,000 B) twice, block 0's
  // attention RMSNorm weight (4,096 x 4 = 16,384 B) twice, then its q (4,096 x 4,096:
  // 67,108,864 B) twice.
  REQUIRE(P.lazy_states.size() >= 6);
  CHECK(P.lazy_states[0].bytes.value == 524'288'000LL);
  CHECK(P.lazy_states[1].bytes.value == 524'288'000LL);
  CHECK(P.lazy_states[2].bytes.value == 16'384LL);
  CHECK(P.lazy_states[3].bytes.value == 16'384LL);
  CHECK(P.lazy_states[4].bytes.value == 67'108'864LL);
  CHECK(P.lazy_states[5].bytes.value == 67'108'864LL);
  // Per block 9 tensors (q, k, v, o, gate, up, down, two norms), then the final norm and the
  // head: 1 + 32 x 9 + 2 = 291 parameter tensors, two states each.
  CHECK(P.lazy_states.size() == 2 * 291);
  // None of them is booked before the step: the flat buffers hold no optimizer states.
  for (const auto& e : exec::AllocatorModel::state_buffers(P))
    CHECK(e.category != hw::MemCategory::optimizer_states);
}

TEST_CASE("optimizer_states: eager creates nothing lazily", "[optimizer][lazy_states]") {
  const auto plan = parallel::lower(llama2_7b(false, 2));
  CHECK(plan.programs.at(0).lazy_states.empty());
}

TEST_CASE("lazy states carved from a cached segment leave the next transient a new segment",
          "[optimizer][lazy_states]") {
  // By hand: weights 100 MiB, two states of 64 MiB, one 96 MiB transient per step.
  parallel::Program P;
  P.device = ideal_device(1LL << 40);
  P.persistent[hw::MemCategory::weights] = core::Bytes{100 * kMiB};
  P.persistent[hw::MemCategory::optimizer_states] = core::Bytes{128 * kMiB};
  const auto transient = tensor(hw::MemCategory::buffers, 96 * kMiB, 0);
  // Eager: a 100 MiB and a 128 MiB segment, then the transient's 96 MiB: 324 MiB reserved.
  exec::AllocatorModel eager(P);
  for (const auto& e : exec::AllocatorModel::state_buffers(P)) eager.allocate(e, -1);
  eager.end_load();
  eager.allocate(transient, 0);
  CHECK(eager.allocator().peak_reserved() == 324 * kMiB);
  CHECK(eager.allocator().peak_allocated() == 324 * kMiB);
  // Lazy: the first step's transient takes a 96 MiB segment and frees it; the first state is
  // split from it (32 MiB left free), the second fits nowhere and takes a 64 MiB segment
  // (260 MiB reserved); the second step's transient fits neither free block: 96 MiB more.
  P.lazy_states = {{hw::MemCategory::optimizer_states, core::Bytes{64 * kMiB},
                    parallel::TensorKind::optimizer_state, 1 << 21, false},
                   {hw::MemCategory::optimizer_states, core::Bytes{64 * kMiB},
                    parallel::TensorKind::optimizer_state, (1 << 21) + 1, false}};
  exec::AllocatorModel lazy(P);
  const auto buffers = exec::AllocatorModel::state_buffers(P);
  REQUIRE(buffers.size() == 1);
  CHECK(buffers[0].bytes.value == 100 * kMiB);
  for (const auto& e : buffers) lazy.allocate(e, -1);
  lazy.allocate(transient, 0);
  REQUIRE(lazy.release(transient, 0));
  for (const auto& e : P.lazy_states) lazy.allocate(e, -1);
  CHECK(lazy.allocator().reserved() == 260 * kMiB);
  lazy.end_load();
  lazy.allocate(transient, 0);
  CHECK(lazy.allocator().peak_reserved() == 356 * kMiB);
  // The same tensors: the allocated peak does not move.
  CHECK(lazy.allocator().peak_allocated() == 324 * kMiB);
}

TEST_CASE("optimizer_states: lazy moves no tensor of the step, and its series peaks at the player's",
          "[optimizer][lazy_states]") {
  const auto lazy_plan = parallel::lower(llama2_7b(true, 2));
  const auto eager_plan = parallel::lower(llama2_7b(false, 2));
  const auto lazy = exec::play(lazy_plan);
  const auto eager = exec::play(eager_plan);
  const auto& dl = lazy.devices.at(0);
  const auto& de = eager.devices.at(0);
  // The second step allocates what the steady step does, with every state held: the same peak of
  // tensors, and the same step time.
  CHECK(dl.allocated_peak == de.allocated_peak);
  CHECK(lazy.step_time == eager.step_time);
  // Whatever the first step left cached stays reserved.
  CHECK(dl.reserved_peak.value >= dl.allocated_peak.value);
  CHECK(report::memory_series(lazy_plan, lazy)[0].peak == dl.peak);
}

namespace {

// Two layers of A = 8 Mi and B = 16 Mi parameters (one tensor each, a = 32 MiB and b = 64 MiB
// in fp32; nothing else kept), fp32 AdamW with lazy states over data 2 under Megatron-LM's local
// DDP (parallel.grad_reduce: after_backward): the gradients are flattened into one a + b bucket,
// all-reduced and copied back by ops typed OpKind::optimizer before the step itself.
scenario::Scenario after_backward_lazy(scenario::OptimizerImpl impl) {
  std::vector<models::Layer> ls{plain_layer("l0", 8 * kMiB, 0, 0, 1e9),
                                plain_layer("l1", 16 * kMiB, 0, 0, 1e9)};
  scenario::TrainingSpec t;
  t.precision = scenario::Precision::fp32;
  t.optimizer = scenario::Optimizer::adamw;
  t.optimizer_impl = impl;
  t.micro_batch = 1;
  t.lazy_optimizer_states = true;
  scenario::ParallelSpec p;
  p.data = 2;
  p.grad_reduce = scenario::GradReduce::after_backward;
  auto s = make_scenario(chain_model(ls), ideal_device(1LL << 40), t, p);
  s.training.caching_allocator = true;
  return s;
}

}  // namespace

TEST_CASE("lazy states under after_backward are created at the optimizer step, after local DDP's "
          "flatten and copy back", "[optimizer][lazy_states][grad_reduce]") {
  // The allocator by hand (blocks of 2 MiB multiples, best fit, a free block split when larger
  // than the request). The model states: the weights' flat buffer, a + b = 96 MiB. First step:
  // each backward's gradient its own segment (b, then a), the bucket a + b, freed by the copy
  // back. At the step: exp_avg and exp_avg_sq of l0 (a each) are carved from the freed bucket,
  // leaving b - a; l1's (b each) take a new segment each. Fused AdamW has no temporaries (the
  // states come before the step's frees); foreach AdamW's _foreach_sqrt makes one a + b more
  // after the states. Then the gradients are freed. Reserved: (a + b) + b + a + (a + b) + 2b,
  // + (a + b) with foreach. The step reported: the gradients reuse their segments; the bucket
  // finds no a + b block free with fused (a new segment: 4a + 6b = 512 MiB in all) and the
  // temporaries' segment with foreach (512 MiB as well).
  // Created at the flatten instead (the first OpKind::optimizer op), the four states would each
  // take a segment before the bucket took its own, which the step then reuses: 5a + 5b = 480 MiB.
  for (const auto impl : {scenario::OptimizerImpl::fused, scenario::OptimizerImpl::foreach}) {
    const auto plan = parallel::lower(after_backward_lazy(impl));
    const auto& P = plan.programs.at(0);
    REQUIRE(P.lazy_states.size() == 4);
    const std::int32_t at = exec::AllocatorModel::lazy_states_op(P);
    REQUIRE(at >= 0);
    CHECK(P.ops[at].kind == parallel::OpKind::optimizer);
    CHECK(P.ops[at].microbatch == -1);
    // The flatten and the copy back: optimizer-phase ops of the last micro-batch, before it.
    int ddp = 0;
    for (std::int32_t i = 0; i < at; ++i)
      ddp += P.ops[i].kind == parallel::OpKind::optimizer && P.ops[i].microbatch == 0;
    CHECK(ddp == 2);
    const auto tl = exec::play(plan);
    const auto& d = tl.devices.at(0);
    CHECK(d.reserved_peak.value == 512 * kMiB);
    // The step reported holds weights, two states, gradients and the bucket (or the
    // temporaries) at once: 5(a + b) = 480 MiB.
    CHECK(d.allocated_peak.value == 480 * kMiB);
    // The memory series creates them where the replay does.
    CHECK(report::memory_series(plan, tl)[0].peak == d.peak);
  }
}
