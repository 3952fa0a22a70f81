// The per-micro-batch host work of a causal language model (pass_batch_host.cpp) and the causal
// softmax kernel's lower-triangle reads (fused_softmax.hpp, pass_softmax.cpp).
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "models/builders.hpp"
#include "models/kinds.hpp"
#include "sim/cost/cost.hpp"
#include "sim/parallel/batch_host.hpp"
#include "sim/parallel/fused_softmax.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

// A two-block GPT (hidden 256, 4 heads, 128 tokens, vocab 1,024) or the same graph with
// bidirectional attention, fp16, micro-batch 1, `accumulation` micro-batches, on `pipeline`
// stages.
parallel::Plan tiny_gpt(bool causal, std::int64_t accumulation, std::int64_t pipeline,
                        scenario::Precision precision = scenario::Precision::fp16) {
  models::TransformerConfig c = models::gpt3_config("tiny", 2, 256, 4, 128, 1024);
  c.causal = causal;
  models::BuildOptions o;
  o.seq_len = 128;
  o.activation_dtype = models::DType::fp16;
  scenario::TrainingSpec t;
  t.precision = precision;
  t.micro_batch = 1;
  t.gradient_accumulation = accumulation;
  scenario::ParallelSpec p;
  p.pipeline = pipeline;
  return parallel::lower(make_scenario(models::build_transformer(c, o), ideal_device(1LL << 40), t, p));
}

// The launches of the first micro-batch's op of `kind` that covers layer `layer` of the model.
std::int32_t launches(const parallel::Plan& plan, parallel::OpKind kind, std::int32_t layer) {
  for (const auto& prog : plan.programs)
    for (const auto& op : prog.ops)
      if (op.kind == kind && op.microbatch == 0 && op.layer == layer) return op.work.launches;
  FAIL("no such op");
  return -1;
}

}  // namespace

TEST_CASE("a causal language model's micro-batch launches its batch, masks and loss kernels",
          "[parallel][host]") {
  using parallel::OpKind;
  // Layers: embed 0, blocks 1-12 (ln1, attn, add1, ln2, mlp, add2 each), ln_f 13, loss 14.
  const std::int32_t loss = 14;
  // get_batch_pipe: broadcast_data 5 + contiguous 2 + masks 5 = 12; the first stage's 3 input
  // clones: the embedding's forward 4 + 12 + 3 = 19 (builder.hpp: the embedding launches 4).
  // The loss (9 forward, 6 backward): CrossEntropy 6 + total_loss 1 + the division by 2
  // accumulation steps 1 + the fp16 loss scale 1 = 9 -> 18; backward seed, division and mask
  // product gradients 3 + the accumulation division 1 + the loss scale 1 = 5 -> 11.
  const auto gpt = tiny_gpt(true, 2, 1);
  CHECK(launches(gpt, OpKind::forward, 0) == 4 + 12 + 3);
  CHECK(launches(gpt, OpKind::backward, 0) == 9);
  CHECK(launches(gpt, OpKind::forward, loss) == 9 + 6 + 1 + 1 + 1);
  CHECK(launches(gpt, OpKind::backward, loss) == 6 + 3 + 1 + 1);
  // One micro-batch per step: no accumulation division; bf16: no loss scale.
  const auto single = tiny_gpt(true, 1, 1, scenario::Precision::bf16);
  CHECK(launches(single, OpKind::forward, loss) == 9 + 7);
  CHECK(launches(single, OpKind::backward, loss) == 6 + 3);
  // Two stages: the last loads the micro-batch too, for its labels (12 more on the loss).
  const auto two = tiny_gpt(true, 2, 2);
  CHECK(launches(two, OpKind::forward, 0) == 19);
  CHECK(launches(two, OpKind::forward, loss) == 18 + 12);
  // A bidirectional encoder is not this loop: nothing is added.
  const auto encoder = tiny_gpt(false, 2, 1);
  CHECK(launches(encoder, OpKind::forward, 0) == 4);
  CHECK(launches(encoder, OpKind::forward, loss) == 9);
  // The host floor of the embedding's forward at 45 us a launch: 19 x 45 = 855 us.
  hw::DeviceSpec d = ideal_device(1LL << 40);
  d.host_dispatch = core::Duration{45'000};
  parallel::Op embed{};
  for (const auto& op : gpt.programs.at(0).ops)
    if (op.kind == OpKind::forward && op.microbatch == 0 && op.layer == 0) embed = op;
  CHECK(cost::host_time(embed.work, d).ns == 855'000);
}

TEST_CASE("Megatron's causal softmax kernel reads the lower triangle of the scores",
          "[parallel][softmax]") {
  // s = 1024, e = 2: a matrix's unread elements are s(s-1)/2 = 523,776, 1,047,552 bytes.
  CHECK(parallel::causal_unread_bytes(1, 1024, 2) == 1047552);
  // 16 heads on tensor 8, micro-batch 2: 2 x 2 = 4 matrices, a batch the fused kernel serves.
  // Forward 4 x 1,047,552 = 4,190,208 bytes fewer; backward (gradient and probabilities read)
  // twice that, 8,380,416; the replayed forward of full recomputation as the forward.
  auto ops = [](bool causal, std::int64_t micro_batch) {
    models::kinds::AttentionSpec a{.tokens = 1024, .hidden = 1024, .heads = 16};
    a.causal = causal;
    const models::Model m = chain_model({models::kinds::attention("attn", a, models::DType::fp16)});
    scenario::TrainingSpec t;
    t.precision = scenario::Precision::fp16;
    t.micro_batch = micro_batch;
    t.recompute = scenario::Recompute::full;
    scenario::ParallelSpec p;
    p.tensor = 8;
    const auto plan = parallel::lower(make_scenario(m, ideal_device(1LL << 40), t, p));
    std::array<std::int64_t, 3> bytes{};  // forward, backward, recompute
    for (const auto& op : plan.programs.at(0).ops) {
      if (op.layer != 0 || op.microbatch != 0) continue;
      if (op.kind == parallel::OpKind::forward) bytes[0] = op.work.bytes.value;
      if (op.kind == parallel::OpKind::backward) bytes[1] = op.work.bytes.value;
      if (op.kind == parallel::OpKind::recompute) bytes[2] = op.work.bytes.value;
    }
    return bytes;
  };
  const auto full = ops(false, 2), causal = ops(true, 2);
  CHECK(full[0] - causal[0] == 4190208);
  CHECK(full[1] - causal[1] == 8380416);
  CHECK(full[2] - causal[2] == 4190208);
  // Micro-batch 1: 2 matrices, the eager fallback, which reads every element: no change.
  const auto full1 = ops(false, 1), causal1 = ops(true, 1);
  CHECK(full1 == causal1);
}
