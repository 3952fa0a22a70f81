// training.recompute: selective-op, torchtitan's op-level selective activation checkpointing
// (sim/parallel/recompute_policy.hpp; pytorch/torchtitan parallelize_llama.py at 9dec370,
// `_save_list` and `_custom_policy`). Computed by hand for one Llama-3-8B block (h = 4,096,
// 32 heads, 8 KV heads of 128: hk = 1,024, f = 14,336), one sample of s = 8,192 tokens, bf16
// (e = 2), flash attention. The block's mm in order: wq 1, wk 2, wv 3, wo 4, w1 5, w3 6, w2 7;
// the odd ones are kept, the even ones recomputed.
//   attention keeps wq's e s h = 67,108,864, wv's e s hk = 16,777,216, SDPA's output e s h =
//     67,108,864 and log-sum-exp 4 x 32 x s = 1,048,576: 152,043,520 bytes;
//     recomputes wk 2 s h hk = 68,719,476,736 and wo 2 s h h = 274,877,906,944 FLOPs:
//     343,597,383,680.
//   MLP keeps w1's e s f = 234,881,024 and w2's e s h = 67,108,864: 301,989,888 bytes;
//     recomputes w3, 2 s h f = 962,072,674,304 FLOPs.
//   RMSNorms and residual adds keep nothing and run again: 4 s h = 134,217,728 FLOPs per norm,
//     s h = 33,554,432 per add.
//   The checkpoint keeps the block's input, e s h = 67,108,864.
// Per block: 521,142,272 bytes kept (63,616 per token) and 1,306,005,602,304 FLOPs recomputed.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "models/presets.hpp"
#include "sim/parallel/eager_modules.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/parallel/recompute_policy.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using parallel::TensorKind;

namespace {

constexpr std::int64_t kSeq = 8192;

scenario::Scenario llama3_8b(scenario::Recompute r, bool flash = true, std::int64_t tensor = 1) {
  models::BuildOptions o;
  o.seq_len = kSeq;
  o.activation_dtype = models::DType::bf16;
  o.flash_attention = flash;
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.seq_len = kSeq;
  t.precision = scenario::Precision::bf16;
  t.flash_attention = flash;
  t.recompute = r;
  scenario::ParallelSpec p;
  p.tensor = tensor;
  return make_scenario(models::build_preset(*models::find_preset("llama3-8b"), o),
                       ideal_device(1LL << 50), t, p);
}

// The policy's entries for block 0's layers, by name suffix.
struct Block0 {
  parallel::OpPolicyLayer ln1, attn, add1, ln2, mlp, add2;
};
Block0 block0(const scenario::Scenario& s, std::int64_t tensor = 1) {
  const auto shards = parallel::shard_layers(s.model, tensor, false, 1);
  const auto p = parallel::op_policy(s.model, shards, tensor,
                                     {models::DType::bf16, s.training.flash_attention});
  Block0 b;
  for (std::size_t i = 0; i < s.model.order.size(); ++i) {
    const std::string& n = s.model.graph[s.model.order[i]].name;
    if (n == "block.0.ln1") b.ln1 = p[i];
    if (n == "block.0.attn") b.attn = p[i];
    if (n == "block.0.add1") b.add1 = p[i];
    if (n == "block.0.ln2") b.ln2 = p[i];
    if (n == "block.0.mlp") b.mlp = p[i];
    if (n == "block.0.add2") b.add2 = p[i];
  }
  return b;
}

std::int64_t booked(const parallel::Plan& plan, TensorKind kind, parallel::OpKind op_kind) {
  std::int64_t sum = 0;
  const auto& P = plan.programs.at(0);
  for (const auto& op : P.ops)
    if (op.kind == op_kind)
      for (auto k = op.alloc_begin; k < op.alloc_end; ++k)
        if (P.effects[k].tensor == kind) sum += P.effects[k].bytes.value;
  return sum;
}

}  // namespace

TEST_CASE("selective-op keeps the odd mm's outputs and SDPA's of a Llama-3-8B block",
          "[recompute][selective-op]") {
  const Block0 b = block0(llama3_8b(scenario::Recompute::selective_op));
  CHECK(b.attn.kept.value == 152'043'520);
  CHECK(b.mlp.kept.value == 301'989'888);
  CHECK(b.ln1.kept.value == 0);
  CHECK(b.ln2.kept.value == 0);
  CHECK(b.add1.kept.value == 0);
  CHECK(b.add2.kept.value == 0);
  CHECK(b.attn.saved_mm == 2);  // wq, wv
  CHECK(b.mlp.saved_mm == 2);   // w1, w2
}

TEST_CASE("selective-op recomputes the even mm and every element-wise op",
          "[recompute][selective-op]") {
  const Block0 b = block0(llama3_8b(scenario::Recompute::selective_op));
  CHECK(b.attn.flops == Approx(343'597'383'680.0).epsilon(1e-12));
  CHECK(b.attn.gemms == 2);  // wk, wo
  CHECK(b.mlp.flops == Approx(962'072'674'304.0).epsilon(1e-12));
  CHECK(b.mlp.gemms == 1);  // w3
  CHECK(b.ln1.flops == Approx(134'217'728.0));
  CHECK(b.add2.flops == Approx(33'554'432.0));
  // Without flash attention the decomposed core (bmm, softmax) is recomputed and SDPA keeps
  // nothing: 4 s^2 h = 1,099,511,627,776 core FLOPs more, the SDPA output and lse not kept.
  const Block0 std_core = block0(llama3_8b(scenario::Recompute::selective_op, false));
  CHECK(std_core.attn.kept.value == 152'043'520 - 67'108'864 - 1'048'576);
  CHECK(std_core.attn.flops == Approx(343'597'383'680.0 + 1'099'511'627'776.0).epsilon(1e-12));
}

TEST_CASE("selective-op under tensor parallelism divides the kept outputs as the weights split",
          "[recompute][selective-op]") {
  // t = 2: wq and wv (column-parallel) keep half their outputs, SDPA's output and lse half
  // (16 heads); w2 (row-parallel) keeps its full-width partial sum e s h. Attention:
  // 33,554,432 + 8,388,608 + 33,554,432 + 524,288 = 76,021,760; MLP: 117,440,512 + 67,108,864
  // = 184,549,376; wk and wo recompute half their FLOPs: 171,798,691,840.
  const Block0 b = block0(llama3_8b(scenario::Recompute::selective_op, true, 2), 2);
  CHECK(b.attn.kept.value == 76'021'760);
  CHECK(b.mlp.kept.value == 184'549'376);
  CHECK(b.attn.flops == Approx(171'798'691'840.0).epsilon(1e-12));
}

TEST_CASE("selective-op's plan: forwards book the kept bytes and the checkpoint, one recompute op "
          "per block replays the rest",
          "[recompute][selective-op]") {
  const auto s = llama3_8b(scenario::Recompute::selective_op);
  const auto plan = parallel::lower(s);
  const std::int64_t blocks = 32;
  // Forwards: per block 152,043,520 + 301,989,888 saved and e s h = 67,108,864 checkpointed;
  // outside the blocks the final norm and the loss keep what they keep under `none`.
  const auto none = parallel::lower(llama3_8b(scenario::Recompute::none));
  const std::int64_t outside = [&] {
    const auto shards = parallel::shard_layers(s.model, 1, false, 1);
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < shards.size(); ++i)
      if (s.model.graph[s.model.order[i]].block < 0) sum += shards[i].saved.value;
    return sum;
  }();
  CHECK(booked(plan, TensorKind::saved, parallel::OpKind::forward) ==
        blocks * (152'043'520 + 301'989'888) + outside);
  CHECK(booked(plan, TensorKind::checkpoint, parallel::OpKind::forward) == blocks * 67'108'864);
  // Each recompute op books the rest of its block's saved tensors (kind `core`, re-created
  // apart), so that after it the block holds what it holds without recomputation.
  CHECK(booked(plan, TensorKind::core, parallel::OpKind::recompute) +
            blocks * (152'043'520 + 301'989'888) + outside ==
        booked(none, TensorKind::saved, parallel::OpKind::forward));
  double flops = 0;
  int ops = 0;
  for (const auto& op : plan.programs.at(0).ops)
    if (op.kind == parallel::OpKind::recompute) {
      flops += op.work.flops;
      ++ops;
      CHECK(op.kernels == 3);  // wk, wo, w3
    }
  CHECK(ops == blocks);
  CHECK(flops == Approx(blocks * 1'306'005'602'304.0).epsilon(1e-12));
  // HFU counts them; MFU does not.
  CHECK(plan.hardware_flops - plan.model_flops == Approx(flops).epsilon(1e-12));
}

// The chunk's first layer is the embedding (outside the blocks): blocks are counted from the
// first block, so 16 of the 32 are checkpointed, whichever policy checkpoints them. Full
// recomputation is torchtitan's selective_ac_option "2" on Llama-3-8B: 16 of 32 blocks
// checkpointed whole. Either way each checkpointed block keeps its input e s h = 67,108,864 bytes.
TEST_CASE("recompute_layers counts blocks past the embedding", "[recompute][selective-op]") {
  for (const auto policy : {scenario::Recompute::selective_op, scenario::Recompute::full}) {
    auto s = llama3_8b(policy);
    s.training.recompute_layers = 16;
    const auto plan = parallel::lower(s);
    int ops = 0;
    for (const auto& op : plan.programs.at(0).ops) ops += op.kind == parallel::OpKind::recompute;
    CHECK(ops == 16);
    CHECK(booked(plan, TensorKind::checkpoint, parallel::OpKind::forward) == 16 * 67'108'864);
  }
}

// training.modules: eager, the element-wise kernels' bytes (eager_io) of a Llama-3-8B block in
// bf16 (e = n = 2), per sample of s = 8,192 tokens:
//   RMSNorm: (20 + 2 (2 + 4)) s h = 32 x 33,554,432 = 1,073,741,824
//   attention: RoPE (16 + 4) s (hq + hk) = 20 x 41,943,040 = 838,860,800; the output's copy
//     4 s hq = 134,217,728; K and V expanded 4 s (hq + hk) = 167,772,160: 1,140,850,688
//   MLP: 2e s f = 4 x 117,440,512 = 469,762,048
// Compiled: only the expansion stays (167,772,160); the norm and the MLP add nothing.
TEST_CASE("eager modules' element-wise kernels move these bytes", "[eager][modules]") {
  const auto s = llama3_8b(scenario::Recompute::none);
  const auto& m = s.model;
  for (std::size_t i = 0; i < m.order.size(); ++i) {
    const models::Layer& l = m.graph[m.order[i]];
    const auto eager = parallel::eager_io(l, 2, 2, false);
    const auto compiled = parallel::eager_io(l, 2, 2, true);
    if (l.name == "block.0.ln1") {
      CHECK(eager.replicated.value == 1'073'741'824);
      CHECK(compiled.replicated.value == 0);
    }
    if (l.name == "block.0.attn") {
      CHECK(eager.split.value == 1'140'850'688);
      CHECK(compiled.split.value == 167'772'160);
    }
    if (l.name == "block.0.mlp") {
      CHECK(eager.split.value == 469'762'048);
      CHECK(compiled.split.value == 0);
    }
  }
  // In fp32 norms (autocast) the casts go: 20 s h.
  const models::Layer& ln = m.graph[m.order[1]];
  REQUIRE(ln.kind == models::LayerKind::rmsnorm);
  CHECK(parallel::eager_io(ln, 2, 4, false).replicated.value == 20 * (ln.output.value / 4));
}

TEST_CASE("selective-op with eager modules recomputes their element-wise kernels too",
          "[recompute][selective-op][eager]") {
  // The policy's recomputed bytes grow by the attention's and the MLP's eager_io (above):
  // 1,140,850,688 + 469,762,048 per sample and block.
  auto s = llama3_8b(scenario::Recompute::selective_op);
  const auto shards = parallel::shard_layers(s.model, 1, false, 1);
  const auto fused = parallel::op_policy(s.model, shards, 1, {models::DType::bf16, true});
  const auto eager = parallel::op_policy(s.model, shards, 1, {models::DType::bf16, true, true});
  double added = 0;
  for (std::size_t i = 0; i < shards.size(); ++i)
    if (s.model.graph[s.model.order[i]].block == 0)
      added += double(eager[i].bytes.value - fused[i].bytes.value);
  CHECK(added == 1'140'850'688.0 + 469'762'048.0);
}
