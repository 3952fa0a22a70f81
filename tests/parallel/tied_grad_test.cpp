// A tied LM head shares the embedding's weight: autograd accumulates the head's weight gradient
// into that one parameter's .grad (AccumulateGrad), so the gradient is allocated at the head's
// backward, right after the loss, and lives through the whole backward; under
// optimizer_in_backward the tied parameter steps after its last contribution, the embedding's.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

// emb (1,000 tied + `positions` own parameters) | mid (3,000) | loss whose GEMM reads the
// embedding's 1,000 (a tied head owns no parameters); no activations, fp32.
models::Model tied_model(std::int64_t positions) {
  models::Layer emb = plain_layer("emb", 1000 + positions, 0, 0, 1e9);
  emb.kind = models::LayerKind::embedding;
  models::Layer loss = plain_layer("loss", 0, 0, 0, 1e9);
  loss.kind = models::LayerKind::loss;
  loss.gemm_params = 1000;
  return chain_model({emb, plain_layer("mid", 3000, 0, 0, 1e9), loss});
}

scenario::TrainingSpec fp32_adamw(bool in_backward) {
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.gradient_accumulation = 1;
  t.precision = scenario::Precision::fp32;
  t.optimizer = scenario::Optimizer::adamw;
  t.optimizer_in_backward = in_backward;
  return t;
}

struct GradEffect {
  std::size_t op;         // index of the op in plan order
  parallel::OpKind kind;  // that op's kind
  std::int32_t op_layer;  // that op's layer
  std::int32_t layer;     // the layer whose gradient it is
  std::int64_t bytes;
};

// The gradient allocations and frees, in plan order.
void grad_effects(const parallel::Program& P, std::vector<GradEffect>& allocs,
                  std::vector<GradEffect>& frees) {
  for (std::size_t k = 0; k < P.ops.size(); ++k) {
    const auto& op = P.ops[k];
    for (auto e = op.alloc_begin; e < op.free_end; ++e) {
      const auto& m = P.effects[e];
      if (m.tensor != parallel::TensorKind::param_grad) continue;
      (e < op.alloc_end ? allocs : frees)
          .push_back({k, op.kind, op.layer, m.layer, m.bytes.value});
    }
  }
}

}  // namespace

TEST_CASE("a tied head's backward allocates the shared weight's gradient", "[optimizer]") {
  // Backward runs loss (2), mid (1), emb (0). The loss's backward allocates the tied weight's
  // 4 x 1,000 = 4,000 B (named by the head's layer 2); mid's its 4 x 3,000 = 12,000 B; the
  // embedding's backward only its 200 positions' 4 x 200 = 800 B. The step frees all three.
  const auto plan = parallel::lower(make_scenario(tied_model(200), ideal_device(1LL << 30),
                                                  fp32_adamw(false)));
  std::vector<GradEffect> allocs, frees;
  grad_effects(plan.programs.at(0), allocs, frees);
  REQUIRE(allocs.size() == 3);
  CHECK(allocs[0].kind == parallel::OpKind::backward);
  CHECK(allocs[0].op_layer == 2);
  CHECK(allocs[0].layer == 2);
  CHECK(allocs[0].bytes == 4'000);
  CHECK(allocs[1].op_layer == 1);
  CHECK(allocs[1].bytes == 12'000);
  CHECK(allocs[2].op_layer == 0);
  CHECK(allocs[2].layer == 0);
  CHECK(allocs[2].bytes == 800);
  std::int64_t freed = 0;
  for (const auto& f : frees) {
    CHECK(f.kind == parallel::OpKind::optimizer);
    freed += f.bytes;
  }
  CHECK(freed == 16'800);
}

TEST_CASE("optimizer_in_backward steps a tied weight after the embedding's backward",
          "[optimizer]") {
  // All of the embedding's 1,000 parameters tied. Gradients: 4,000 B at the loss's backward,
  // 12,000 B at mid's; mid's step frees its 12,000, the embedding's step (after the embedding's
  // backward, which allocates nothing more) frees the tied 4,000. No step after the loss's.
  const auto s = make_scenario(tied_model(0), ideal_device(1LL << 30), fp32_adamw(true));
  const auto plan = parallel::lower(s);
  std::vector<GradEffect> allocs, frees;
  grad_effects(plan.programs.at(0), allocs, frees);
  REQUIRE(allocs.size() == 2);
  CHECK(allocs[0].op_layer == 2);
  CHECK(allocs[0].layer == 2);
  CHECK(allocs[0].bytes == 4'000);
  CHECK(allocs[1].op_layer == 1);
  CHECK(allocs[1].bytes == 12'000);
  REQUIRE(frees.size() == 2);
  CHECK(frees[0].kind == parallel::OpKind::optimizer);
  CHECK(frees[0].op_layer == 1);
  CHECK(frees[0].bytes == 12'000);
  CHECK(frees[1].kind == parallel::OpKind::optimizer);
  CHECK(frees[1].op_layer == 0);
  CHECK(frees[1].layer == 2);
  CHECK(frees[1].bytes == 4'000);
  // The embedding's step comes after the embedding's backward.
  const auto& P = plan.programs.at(0);
  std::size_t emb_backward = 0;
  for (std::size_t k = 0; k < P.ops.size(); ++k)
    if (P.ops[k].kind == parallel::OpKind::backward && P.ops[k].layer == 0) emb_backward = k;
  CHECK(frees[1].op > emb_backward);
  // Peak, during mid's step: weights 4 x 4,000 = 16,000 + AdamW m and v 8 x 4,000 = 32,000 +
  // gradients 4,000 (tied) + 12,000 (mid) + the foreach step's sqrt(v) of mid's one tensor,
  // 4 x 3,000 = 12,000: 76,000 B (72,000 if the tied gradient waited for the embedding).
  const auto result = exec::play(plan);
  CHECK(result.devices.at(0).peak.value == 76'000);
}
