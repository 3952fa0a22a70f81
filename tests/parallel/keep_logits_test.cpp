// training.keep_logits (sim/parallel/pass_loss.cpp, docs/finetuning.md "Logits kept by the
// training loop"): torchtune's recipes before pytorch/torchtune#1235 keep the shifted fp32 logits
// the loss read until the next micro-batch's forward, and log_softmax reads them transposed
// through a contiguous copy. Computed by hand for Llama-2-7B (V = 32,000), bf16-true, 512 tokens
// per sample: F = 4 B x 512 x 32,000 = 65,536,000 per sample; the head's bf16 output C = F / 2 =
// 32,768,000.
//   without: forward transient C + F = 98,304,000; backward 2 F = 131,072,000; nothing kept.
//   with:    kept F = 65,536,000 before the step; forward transient F (the contiguous copy);
//            backward 2 F, as without.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "models/presets.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using parallel::TensorKind;

namespace {

scenario::Scenario llama(bool keep, std::int64_t samples = 1, std::int64_t pipeline = 1) {
  models::BuildOptions o;
  o.seq_len = 512;
  o.activation_dtype = scenario::activation_dtype(scenario::Precision::bf16_true);
  scenario::TrainingSpec t;
  t.micro_batch = samples;
  t.seq_len = 512;
  t.precision = scenario::Precision::bf16_true;
  t.keep_logits = keep;
  scenario::ParallelSpec p;
  p.pipeline = pipeline;
  return make_scenario(models::build_preset(*models::find_preset("llama2-7b"), o),
                       ideal_device(1LL << 40), t, p);
}

// Bytes of the effects of `kind` program p allocates in its ops.
std::int64_t booked(const parallel::Plan& plan, TensorKind kind, std::size_t p = 0) {
  std::int64_t bytes = 0;
  const auto& P = plan.programs.at(p);
  for (const auto& op : P.ops)
    for (auto k = op.alloc_begin; k < op.alloc_end; ++k)
      if (P.effects[k].tensor == kind) bytes += P.effects[k].bytes.value;
  return bytes;
}

std::int64_t kept(const parallel::Plan& plan, std::size_t p = 0) {
  return plan.programs.at(p).persistent[hw::MemCategory::activations].value;
}

}  // namespace

TEST_CASE("without keep_logits the unchunked loss keeps nothing beyond the step",
          "[loss][keep_logits]") {
  const auto plan = parallel::lower(llama(false));
  CHECK(kept(plan) == 0);
  CHECK(booked(plan, TensorKind::logits) == 98'304'000);
  CHECK(booked(plan, TensorKind::logits_grad) == 131'072'000);
}

TEST_CASE("keep_logits: the kept fp32 copy and log_softmax's contiguous copy",
          "[loss][keep_logits]") {
  const auto plan = parallel::lower(llama(true));
  CHECK(kept(plan) == 65'536'000);
  CHECK(booked(plan, TensorKind::logits) == 65'536'000);
  CHECK(booked(plan, TensorKind::logits_grad) == 131'072'000);
}

TEST_CASE("keep_logits scales with the micro-batch", "[loss][keep_logits]") {
  // Two samples: F = 131,072,000.
  const auto plan = parallel::lower(llama(true, 2));
  CHECK(kept(plan) == 131'072'000);
  CHECK(booked(plan, TensorKind::logits) == 131'072'000);
  CHECK(booked(plan, TensorKind::logits_grad) == 262'144'000);
}

TEST_CASE("keep_logits is kept on the stage that computes the loss", "[loss][keep_logits]") {
  const auto plan = parallel::lower(llama(true, 1, 2));
  REQUIRE(plan.programs.size() == 2);
  CHECK(kept(plan, 0) == 0);
  CHECK(kept(plan, 1) == 65'536'000);
}

TEST_CASE("keep_logits raises the peak by the kept copy", "[loss][keep_logits]") {
  // Full fine-tuning with foreach AdamW: the peak is the optimizer step (weights, gradients,
  // states and sqrt(v), about 5 x 13.5 GB), where the previous micro-batch's logits are still
  // referenced: + F. (At the loss's forward the rise is F + F + F - (F + C + F) = F / 2, and in
  // its backward F; neither is the peak.)
  const auto without = exec::play(parallel::lower(llama(false)));
  const auto with = exec::play(parallel::lower(llama(true)));
  CHECK(with.devices.at(0).peak.value - without.devices.at(0).peak.value == 65'536'000);
}
