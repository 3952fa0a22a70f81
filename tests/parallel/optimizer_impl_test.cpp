// training.optimizer_impl and training.zero_grad against hand-computed bytes: the AdamW step's
// temporaries by implementation (torch.optim's foreach, single-tensor loop and fused paths),
// and gradients kept allocated between steps (zero_grad(set_to_none=False)).
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using hw::MemCategory;
using scenario::Optimizer;
using scenario::OptimizerImpl;
using scenario::Precision;
using scenario::ZeroGrad;

namespace {

scenario::TrainingSpec training(Precision p, Optimizer o) {
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.gradient_accumulation = 1;
  t.precision = p;
  t.optimizer = o;
  t.caching_allocator = false;  // tensor bytes exactly
  return t;
}

// Bytes the plan's optimizer op allocates (one step at the end).
std::int64_t step_alloc(const parallel::Program& P) {
  std::int64_t bytes = 0;
  for (const auto& op : P.ops)
    if (op.kind == parallel::OpKind::optimizer)
      for (auto e = op.alloc_begin; e < op.alloc_end; ++e) bytes += P.effects[e].bytes.value;
  return bytes;
}

// Bytes of parameter gradients the plan's ops allocate and free.
std::pair<std::int64_t, std::int64_t> grad_effects(const parallel::Program& P) {
  std::int64_t alloc = 0, freed = 0;
  for (const auto& op : P.ops) {
    for (auto e = op.alloc_begin; e < op.alloc_end; ++e)
      if (P.effects[e].tensor == parallel::TensorKind::param_grad) alloc += P.effects[e].bytes.value;
    for (auto e = op.free_begin; e < op.free_end; ++e)
      if (P.effects[e].tensor == parallel::TensorKind::param_grad) freed += P.effects[e].bytes.value;
  }
  return {alloc, freed};
}

}  // namespace

TEST_CASE("optimizer_impl: foreach copies v whole, the loop two of the largest tensor, fused none",
          "[optimizer]") {
  // Two layers of 1000 and 3000 parameters (one tensor each).
  const auto m = chain_model({plain_layer("a", 1000, 0, 8), plain_layer("b", 3000, 0, 8)});
  auto step = [&](Precision p, std::optional<OptimizerImpl> impl) {
    auto t = training(p, Optimizer::adamw);
    t.optimizer_impl = impl;
    return step_alloc(parallel::lower(make_scenario(m, ideal_device(1LL << 30), t)).programs.at(0));
  };
  // fp32, default foreach: torch._foreach_sqrt(exp_avg_sqs) = 4 B x (1000 + 3000).
  CHECK(step(Precision::fp32, std::nullopt) == 16'000);
  CHECK(step(Precision::fp32, OptimizerImpl::foreach) == 16'000);
  // for-loop: sqrt(v) and its quotient by the bias correction of the 3000-element tensor:
  // 2 x 4 B x 3000.
  CHECK(step(Precision::fp32, OptimizerImpl::for_loop) == 24'000);
  // bf16-true keeps v in bf16: 2 x 2 B x 3000.
  CHECK(step(Precision::bf16_true, OptimizerImpl::for_loop) == 12'000);
  CHECK(step(Precision::fp32, OptimizerImpl::fused) == 0);
  // Megatron mixed precision defaults to fused; torch.optim's foreach over its fp32 master
  // states copies v in fp32: 4 B x 4000.
  CHECK(step(Precision::bf16, std::nullopt) == 0);
  CHECK(step(Precision::bf16, OptimizerImpl::foreach) == 16'000);
}

TEST_CASE("default_optimizer_impl follows the recipe", "[optimizer]") {
  using scenario::default_optimizer_impl;
  CHECK(default_optimizer_impl(Precision::fp32, Optimizer::adamw) == OptimizerImpl::foreach);
  CHECK(default_optimizer_impl(Precision::amp_bf16, Optimizer::adam) == OptimizerImpl::foreach);
  CHECK(default_optimizer_impl(Precision::bf16, Optimizer::adamw) == OptimizerImpl::fused);
  CHECK(default_optimizer_impl(Precision::fp32, Optimizer::adamw_8bit) == OptimizerImpl::fused);
  CHECK(default_optimizer_impl(Precision::fp32, Optimizer::paged_adamw) == OptimizerImpl::fused);
  CHECK(default_optimizer_impl(Precision::fp32, Optimizer::adafactor) == OptimizerImpl::for_loop);
}

TEST_CASE("zero_grad zeros: the gradients are allocated before the step and never freed",
          "[optimizer]") {
  // Layers a (1000 parameters) and b (3000), each saving 1,000,000 B for its backward; fp32,
  // fused AdamW (no step temporaries), tensor bytes exactly.
  const auto m = chain_model(
      {plain_layer("a", 1000, 1'000'000, 8), plain_layer("b", 3000, 1'000'000, 8)});
  struct Run {
    std::int64_t before_step, model_states, peak;
    std::pair<std::int64_t, std::int64_t> grads;
  };
  auto run = [&](ZeroGrad z) {
    auto t = training(Precision::fp32, Optimizer::adamw);
    t.optimizer_impl = OptimizerImpl::fused;
    t.zero_grad = z;
    const auto plan = parallel::lower(make_scenario(m, ideal_device(1LL << 30), t));
    const auto tl = exec::play(plan);
    const auto& P = plan.programs.at(0);
    return Run{P.persistent[MemCategory::gradients].value, P.model_states.total().value,
               tl.devices.at(0).allocated_peak.value, grad_effects(P)};
  };
  const Run none = run(ZeroGrad::set_to_none);
  const Run zeros = run(ZeroGrad::zeros);
  // set_to_none: nothing before the step; b's backward allocates 4 x 3000, a's 4 x 1000, the
  // step frees both.
  CHECK(none.before_step == 0);
  CHECK(none.grads == std::pair<std::int64_t, std::int64_t>{16'000, 16'000});
  // zeros: 4 B x 4000 booked before the step, no op allocates or frees them.
  CHECK(zeros.before_step == 16'000);
  CHECK(zeros.grads == std::pair<std::int64_t, std::int64_t>{0, 0});
  CHECK(zeros.model_states == none.model_states);
  // The peak is b's backward, with both layers' saved bytes live: set_to_none then holds b's
  // 12,000 B of gradients, zeros all 16,000 B, so the peak is a's 4 x 1000 B higher.
  CHECK(zeros.peak - none.peak == 4'000);
}
