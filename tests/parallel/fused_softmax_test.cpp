// Megatron's fused scale-mask-softmax and its eager fallback (sim/parallel/fused_softmax.hpp,
// pass_softmax.cpp): when the fused kernel serves a score batch, and what the fallback adds to
// a layer's forward and backward.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "models/kinds.hpp"
#include "sim/parallel/fused_softmax.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;

TEST_CASE("the fused softmax kernel's batch rule, as scaled_upper_triang_masked_softmax sets it",
          "[parallel][softmax]") {
  using parallel::fused_softmax_available;
  // sk = 1024: 2^10 > 128, warp 32, 1 row per warp, 128 / 32 = 4 rows per block.
  CHECK_FALSE(fused_softmax_available(2, 1024, 1024));  // b 1 x 2 heads (16 heads / tensor 8)
  CHECK(fused_softmax_available(4, 1024, 1024));        // b 2 x 2 heads, or b 1 x 4 heads
  CHECK(fused_softmax_available(16, 1024, 1024));
  CHECK_FALSE(fused_softmax_available(6, 1024, 1024));
  // sk = 128: warp 32, 2 rows per warp, 4 warps: 8 rows per block; 4 is a multiple of 4, not 8.
  CHECK_FALSE(fused_softmax_available(4, 128, 128));
  CHECK(fused_softmax_available(8, 128, 128));
  // sk = 64: warp 32 still (min(32, 64)), 2 rows per warp: 8 per block.
  CHECK(fused_softmax_available(8, 64, 64));
  // sk must exceed 16 and both lengths be multiples of 4.
  CHECK_FALSE(fused_softmax_available(8, 16, 16));
  CHECK_FALSE(fused_softmax_available(8, 1022, 1022));
  CHECK_FALSE(fused_softmax_available(0, 1024, 1024));
}

namespace {
struct AttentionOps {
  parallel::Op forward, backward, recompute;
};
// The plan of a one-layer fp16 model (1,024 tokens, hidden 1,024, 16 heads) on one of 8 tensor
// ranks.
parallel::Plan one_attention_layer(std::int64_t micro_batch, bool flash_flag,
                                   scenario::Recompute recompute) {
  const models::Model m = chain_model({models::kinds::attention(
      "attn", {.tokens = 1024, .hidden = 1024, .heads = 16}, models::DType::fp16)});
  scenario::TrainingSpec t;
  t.precision = scenario::Precision::fp16;
  t.micro_batch = micro_batch;
  t.flash_attention = flash_flag;
  t.recompute = recompute;
  scenario::ParallelSpec p;
  p.tensor = 8;
  return parallel::lower(make_scenario(m, ideal_device(1LL << 40), t, p));
}
// The attention layer's forward, recomputation and backward ops of that model as one
// checkpointed block.
AttentionOps attention_ops(std::int64_t micro_batch, bool flash_flag) {
  const auto plan = one_attention_layer(micro_batch, flash_flag, scenario::Recompute::full);
  AttentionOps out;
  int found = 0;
  for (const auto& op : plan.programs.at(0).ops) {
    if (op.layer != 0 || op.microbatch != 0) continue;
    if (op.kind == parallel::OpKind::forward) out.forward = op, ++found;
    if (op.kind == parallel::OpKind::backward) out.backward = op, ++found;
    if (op.kind == parallel::OpKind::recompute) out.recompute = op, ++found;
  }
  REQUIRE(found == 3);
  return out;
}
}  // namespace

TEST_CASE("an attention layer whose score batch the fused kernel does not serve pays the eager "
          "fallback's launches and bytes", "[parallel][softmax]") {
  // 16 heads over tensor 8: 2 per rank. Micro-batch 1: 1 x 2 = 2 score matrices, not a multiple
  // of 4: the fallback. Megatron's attention forward launches 8 kernels and its backward 17
  // (builder.hpp); the fallback adds 4 each way.
  const AttentionOps unfused = attention_ops(1, false);
  CHECK(unfused.forward.work.launches == 8 + 4);
  CHECK(unfused.backward.work.launches == 17 + 4);
  CHECK(unfused.recompute.work.launches == 8 + 4);  // the replayed forward
  // Its bytes: 2 x 1024 x 1024 = 2,097,152 score elements, 32 more bytes each forward
  // (67,108,864) and 34 more backward (71,303,168), than the same layer without the fallback
  // (the flag alone, on the same model, turns the pass off).
  const AttentionOps fused_flag = attention_ops(1, true);
  CHECK(fused_flag.forward.work.launches == 8);
  CHECK(fused_flag.backward.work.launches == 17);
  CHECK(unfused.forward.work.bytes.value - fused_flag.forward.work.bytes.value == 67108864);
  CHECK(unfused.backward.work.bytes.value - fused_flag.backward.work.bytes.value == 71303168);
  CHECK(fused_flag.recompute.work.launches == 8);
  CHECK(unfused.recompute.work.bytes.value - fused_flag.recompute.work.bytes.value == 67108864);
  // Micro-batch 2: 2 x 2 = 4 score matrices, a multiple of the kernel's 4 rows per block: fused.
  const AttentionOps fused = attention_ops(2, false);
  CHECK(fused.forward.work.launches == 8);
  CHECK(fused.backward.work.launches == 17);
  CHECK(fused.recompute.work.launches == 8);
}

TEST_CASE("the fused softmax kernel serves sk up to Megatron Core's 4096",
          "[parallel][softmax]") {
  using parallel::fused_softmax_available;
  // sk = 2048 and 4096: warp 32, 1 row per warp, 4 rows per block; 4 batches fit. 8192 and
  // 4100 are past the bound.
  CHECK(fused_softmax_available(4, 2048, 2048));
  CHECK(fused_softmax_available(4, 4096, 4096));
  CHECK_FALSE(fused_softmax_available(4, 8192, 8192));
  CHECK_FALSE(fused_softmax_available(64, 4100, 4100));
}

TEST_CASE("the eager fallback keeps fp32 probabilities for the backward and fp32 buffers within "
          "each op", "[parallel][softmax]") {
  using parallel::fallback_saved_per_element;
  // Fused core per score element: 2 (probabilities) -> fallback 4 (fp32) + 2 (attn x V keeps the
  // 16-bit copy): +4. With dropout 2 + 1 + 2 = 5 -> 4 + 1 + 2 = 7: +2. Autocast's 4 + 2 + 1: +0.
  CHECK(fallback_saved_per_element(2) == 4);
  CHECK(fallback_saved_per_element(5) == 2);
  CHECK(fallback_saved_per_element(7) == 0);
  // The one-layer model of attention_ops (no dropout: core 2 bytes per score element), 16 heads on
  // tensor 8, micro-batch 1: 2 x 1024 x 1024 = 2,097,152 score elements.
  //   saved    +4 x 2,097,152 = 8,388,608 bytes, under full recomputation only booked by the
  //            replayed forward and freed by the backward;
  //   forward  transient 4 x 2,097,152 = 8,388,608;  backward transient 8 x = 16,777,216.
  auto effects = [](std::int64_t micro_batch, bool flash_flag, parallel::TensorKind kind,
                    bool allocs, parallel::OpKind op_kind) {
    const auto plan = one_attention_layer(micro_batch, flash_flag, scenario::Recompute::selective);
    const auto& prog = plan.programs.at(0);
    std::int64_t sum = 0;
    for (const auto& op : prog.ops) {
      if (op.kind != op_kind || op.microbatch != 0) continue;
      const auto b = allocs ? op.alloc_begin : op.free_begin;
      const auto e = allocs ? op.alloc_end : op.free_end;
      for (auto k = b; k < e; ++k)
        if (prog.effects[k].tensor == kind) sum += prog.effects[k].bytes.value;
    }
    return sum;
  };
  using parallel::OpKind;
  using parallel::TensorKind;
  CHECK(effects(1, false, TensorKind::softmax_temp, true, OpKind::forward) == 8388608);
  CHECK(effects(1, false, TensorKind::softmax_temp, true, OpKind::backward) == 16777216);
  CHECK(effects(1, true, TensorKind::softmax_temp, true, OpKind::forward) == 0);
  CHECK(effects(2, false, TensorKind::softmax_temp, true, OpKind::forward) == 0);
  // Selective recomputation re-creates the core (with the fp32 copy) before the backward, which
  // frees it: the core of 2 x 1024 x 1024 x 2 = 4,194,304 plus 8,388,608.
  CHECK(effects(1, false, TensorKind::core, false, OpKind::backward) == 4194304 + 8388608);
  // The flag alone (the model's layer is unchanged) turns the pass off: the 16-bit core only.
  CHECK(effects(1, true, TensorKind::core, false, OpKind::backward) == 4194304);
}
