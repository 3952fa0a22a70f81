// training.compile (sim/parallel/pass_loss.cpp, docs/finetuning.md "The compiled loss"): the
// compiled cross-entropy keeps its input logits and one fp32 log-sum-exp per token instead of the
// fp32 log-probabilities. Computed by hand for Llama-2-7B (h = 4,096, V = 32,000), one sample of
// 512 tokens: F = 4 B x 512 x 32,000 = 65,536,000; C = F x 2/4 = 32,768,000 in bf16; the LM
// head's saved input is e x 512 x 4,096 (4,194,304 in bf16); the log-sum-exps 4 x 512 = 2,048.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "models/presets.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using parallel::TensorKind;

namespace {

scenario::Scenario llama(std::int64_t chunks, bool compile,
                         scenario::Precision p = scenario::Precision::bf16,
                         scenario::Recompute r = scenario::Recompute::none) {
  models::BuildOptions o;
  o.seq_len = 512;
  o.activation_dtype = scenario::activation_dtype(p);
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.seq_len = 512;
  t.precision = p;
  t.loss_chunks = chunks;
  t.compile = compile;
  t.recompute = r;
  return make_scenario(models::build_preset(*models::find_preset("llama2-7b"), o),
                       ideal_device(1LL << 40), t);
}

// Bytes and count of the effects of `kind` the plan allocates, on `layer` (-1: any).
struct Booked {
  std::int64_t bytes = 0;
  int count = 0;
};
Booked booked(const parallel::Plan& plan, TensorKind kind, std::int32_t layer = -1) {
  Booked b;
  const auto& P = plan.programs.at(0);
  for (const auto& op : P.ops)
    for (auto k = op.alloc_begin; k < op.alloc_end; ++k)
      if (P.effects[k].tensor == kind && (layer < 0 || P.effects[k].layer == layer)) {
        b.bytes += P.effects[k].bytes.value;
        ++b.count;
      }
  return b;
}

// The loss is the last layer of the model's order.
std::int32_t loss_layer(const scenario::Scenario& s) {
  return static_cast<std::int32_t>(s.model.order.size()) - 1;
}

Booked saved_by_loss(const scenario::Scenario& s) {
  return booked(parallel::lower(s), TensorKind::saved, loss_layer(s));
}

}  // namespace

TEST_CASE("the eager loss keeps the fp32 log-probabilities", "[loss][compile]") {
  // Head input 4,194,304 + F 65,536,000.
  const auto s = llama(8, false);
  CHECK(s.model.graph[s.model.order.back()].kind == models::LayerKind::loss);
  CHECK(saved_by_loss(s).bytes == 69'730'304);
}

TEST_CASE("compiled chunked loss: keeps the bf16 chunks, one chunk's bf16 gradient",
          "[loss][compile]") {
  // Saved: head input 4,194,304 + C 32,768,000 + log-sum-exps 2,048 = 36,964,352.
  // Forward: nothing beside them (the upcast is fused into the reduction). Backward: one chunk
  // of 64 tokens' gradient in bf16: 2 x 64 x 32,000 = 4,096,000.
  const auto s = llama(8, true);
  const auto plan = parallel::lower(s);
  CHECK(booked(plan, TensorKind::saved, loss_layer(s)).bytes == 36'964'352);
  CHECK(booked(plan, TensorKind::logits).count == 0);
  CHECK(booked(plan, TensorKind::logits_grad).bytes == 4'096'000);
  CHECK(booked(plan, TensorKind::logits_grad).count == 1);
}

TEST_CASE("compiled unchunked loss: keeps the model's fp32 logits", "[loss][compile]") {
  // torchtune's model returns self.output(h).float(): the loss is given F and keeps it, with the
  // log-sum-exps: 4,194,304 + 65,536,000 + 2,048 = 69,732,352. Forward: the bf16 head output
  // before its .float(), C = 32,768,000. Backward: the fp32 gradient of the logits, F.
  const auto s = llama(1, true);
  const auto plan = parallel::lower(s);
  CHECK(booked(plan, TensorKind::saved, loss_layer(s)).bytes == 69'732'352);
  CHECK(booked(plan, TensorKind::logits).bytes == 32'768'000);
  CHECK(booked(plan, TensorKind::logits_grad).bytes == 65'536'000);
}

TEST_CASE("compiled loss in fp32 has no 16-bit head output", "[loss][compile]") {
  // e = 4: head input 4 x 512 x 4,096 = 8,388,608; + F + 2,048 = 73,926,656. No forward
  // transient (the head output is the fp32 logits); backward F.
  const auto s = llama(1, true, scenario::Precision::fp32);
  const auto plan = parallel::lower(s);
  CHECK(booked(plan, TensorKind::saved, loss_layer(s)).bytes == 73'926'656);
  CHECK(booked(plan, TensorKind::logits).count == 0);
  CHECK(booked(plan, TensorKind::logits_grad).bytes == 65'536'000);
}

TEST_CASE("selective recomputation keeps what the compiled loss keeps", "[loss][compile]") {
  // The loss has no attention core: selective recomputation leaves its kept bytes as the loss
  // pass set them (36,964,352, as without recomputation).
  CHECK(saved_by_loss(llama(8, true, scenario::Precision::bf16, scenario::Recompute::selective))
            .bytes == 36'964'352);
}
