// training.loss_chunks (sim/parallel/pass_loss.cpp, docs/finetuning.md "The loss and its
// logits"): the loss layer's transient logits, computed by hand for Llama-2-7B (V = 32,000).
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "models/presets.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using parallel::TensorKind;

namespace {

scenario::Scenario llama(std::int64_t chunks, scenario::Precision p = scenario::Precision::bf16,
                         std::int64_t seq_len = 512) {
  models::BuildOptions o;
  o.seq_len = seq_len;
  o.activation_dtype = scenario::activation_dtype(p);
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.seq_len = seq_len;
  t.precision = p;
  t.loss_chunks = chunks;
  return make_scenario(models::build_preset(*models::find_preset("llama2-7b"), o),
                       ideal_device(1LL << 40), t);
}

// The bytes op effects of `kind` allocate over the whole plan, and how many effects.
struct Booked {
  std::int64_t bytes = 0;
  int count = 0;
};
Booked booked(const parallel::Plan& plan, TensorKind kind) {
  Booked b;
  const auto& P = plan.programs.at(0);
  for (const auto& op : P.ops)
    for (auto k = op.alloc_begin; k < op.alloc_end; ++k)
      if (P.effects[k].tensor == kind) {
        b.bytes += P.effects[k].bytes.value;
        ++b.count;
      }
  return b;
}

}  // namespace

TEST_CASE("unchunked loss: 16-bit logits and their fp32 copy in forward, two fp32 gradients in "
          "backward",
          "[loss]") {
  // F = 4 B x 512 tokens x 32,000 = 65,536,000; C = F x 2/4 = 32,768,000.
  // forward: C + F = 98,304,000; backward: 2 F = 131,072,000. One micro-batch: one of each.
  // Each is the tensor PyTorch allocates: two of each.
  const auto plan = parallel::lower(llama(1));
  CHECK(booked(plan, TensorKind::logits).bytes == 98'304'000);
  CHECK(booked(plan, TensorKind::logits).count == 2);
  CHECK(booked(plan, TensorKind::logits_grad).bytes == 131'072'000);
  CHECK(booked(plan, TensorKind::logits_grad).count == 2);
}

TEST_CASE("the loss's transients are the op's first allocations, tensor by tensor", "[loss]") {
  // forward: the head's 16-bit logits C = 32,768,000, then their fp32 copy F = 65,536,000;
  // backward: the log-probabilities' gradient F, then the fp32 logits' F. The second of each
  // pair is named apart from the first (no micro-batch in its name), so the allocator holds two.
  const auto plan = parallel::lower(llama(1));
  const auto& P = plan.programs.at(0);
  int forwards = 0, backwards = 0;
  for (const auto& op : P.ops) {
    if (op.alloc_end - op.alloc_begin < 2) continue;
    const auto& a = P.effects[op.alloc_begin];
    const auto& b = P.effects[op.alloc_begin + 1];
    if (a.tensor == TensorKind::logits) {
      ++forwards;
      CHECK(a.bytes.value == 32'768'000);
      CHECK(b.tensor == TensorKind::logits);
      CHECK(b.bytes.value == 65'536'000);
      CHECK(a.per_microbatch != b.per_microbatch);
    }
    if (a.tensor == TensorKind::logits_grad) {
      ++backwards;
      CHECK(a.bytes.value == 65'536'000);
      CHECK(b.tensor == TensorKind::logits_grad);
      CHECK(b.bytes.value == 65'536'000);
      CHECK(a.per_microbatch != b.per_microbatch);
    }
  }
  CHECK(forwards == 1);
  CHECK(backwards == 1);
}

TEST_CASE("chunked loss: all 16-bit logits, one chunk's fp32 copy and gradients", "[loss]") {
  // 8 chunks of 64 tokens: Fc = 4 x 64 x 32,000 = 8,192,000.
  // forward: C + Fc = 32,768,000 + 8,192,000 = 40,960,000; backward: 2 Fc = 16,384,000.
  const auto eight = parallel::lower(llama(8));
  CHECK(booked(eight, TensorKind::logits).bytes == 40'960'000);
  CHECK(booked(eight, TensorKind::logits_grad).bytes == 16'384'000);
  // 3 chunks: tensor_split gives the first ceil(512/3) = 171 tokens: Fc = 128,000 x 171 =
  // 21,888,000; backward 43,776,000.
  CHECK(booked(parallel::lower(llama(3)), TensorKind::logits_grad).bytes == 43'776'000);
  // More chunks than tokens: one token each, Fc = 128,000; backward 256,000.
  CHECK(booked(parallel::lower(llama(1000)), TensorKind::logits_grad).bytes == 256'000);
}

TEST_CASE("fp32 training has no upcast copy", "[loss]") {
  // e = 4: the logits are fp32 already (C = F = 65,536,000) and `.float()` returns them.
  const auto s = llama(1, scenario::Precision::fp32);
  CHECK(booked(parallel::lower(s), TensorKind::logits).bytes == 65'536'000);
  CHECK(booked(parallel::lower(s), TensorKind::logits_grad).bytes == 131'072'000);
}

TEST_CASE("chunking lowers the played peak", "[loss]") {
  // At 4,096 tokens the activations (standard attention's scores) outweigh the gradients, so the
  // peak is the loss's. F = 4 x 4,096 x 32,000 = 524,288,000, C = F/2 = 262,144,000, 8 chunks:
  // Fc = F/8 = 65,536,000. The loss's backward also allocates the LM head's weight gradient
  // (32,000 x 4,096 x 2 B = 262,144,000), more than the chunked forward's extra over the chunked
  // backward (C + Fc - 2 Fc = 196,608,000), so both peaks are at the loss's backward: the other
  // activations, the saved F and the gradients, 2 F unchunked and 2 Fc chunked. They differ by
  // 2 F - 2 Fc = 917,504,000.
  const auto whole = exec::play(parallel::lower(llama(1, scenario::Precision::bf16, 4096)));
  const auto chunked = exec::play(parallel::lower(llama(8, scenario::Precision::bf16, 4096)));
  CHECK(whole.devices[0].peak.value - chunked.devices[0].peak.value == 917'504'000);
}

TEST_CASE("without loss_chunks: Megatron's fused loss under bf16, PyTorch's unchunked otherwise",
          "[loss]") {
  // bf16 (the Megatron-LM recipe): the saved F only, no transients.
  const auto fused = parallel::lower(llama(0));
  CHECK(booked(fused, TensorKind::logits).count == 0);
  CHECK(booked(fused, TensorKind::logits_grad).count == 0);
  // amp-bf16 (Hugging Face's Trainer): as loss_chunks 1, C + F forward and 2 F backward.
  const auto amp = parallel::lower(llama(0, scenario::Precision::amp_bf16));
  CHECK(booked(amp, TensorKind::logits).bytes == 98'304'000);
  CHECK(booked(amp, TensorKind::logits_grad).bytes == 131'072'000);
}
