// Megatron-Core's memory as NeMo and Megatron-Bridge run it, against hand counts on small
// models: the distributed optimizer (parallel.zero 1) beside expert parallelism, and Transformer
// Engine's fp8 weight cache (training.fp8_weight_cache: step).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "../support/fixtures.hpp"
#include "../support/plan_bytes.hpp"
#include "models/builders.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

using hw::MemCategory;

scenario::Scenario moe(std::int64_t data, std::int64_t expert, int zero) {
  scenario::ParallelSpec p;
  p.data = data;
  p.expert = expert;
  p.zero = zero;
  return make_scenario(tiny_moe(), ideal_device(1LL << 40), tiny_moe_training(), p);
}

scenario::Scenario fp8(bool cache_step) {
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.gradient_accumulation = 4;
  t.seq_len = 32;
  t.precision = scenario::Precision::fp8;
  t.optimizer = scenario::Optimizer::adam;
  t.fp8_weight_cache_step = cache_step;
  return make_scenario(tiny_moe(32, 0), ideal_device(1LL << 40), t, {});
}

}  // namespace

TEST_CASE("ZeRO-1 beside expert parallelism shards dense and expert states over their groups",
          "[parallel][expert][zero]") {
  const std::int64_t all = tiny_moe().parameters();
  const std::int64_t dense = all - 2 * 98'304;  // the 2 MoE layers' routed experts apart
  // data 8, expert 4: a device holds 98,304 / 4 = 24,576 routed parameters of each MoE layer.
  const auto z1 = parallel::lower(moe(8, 4, 1));
  const auto z0 = parallel::lower(moe(8, 4, 0));
  const std::int64_t experts = 2 * 24'576;
  // Adam's fp32 master, m and v: 12 bytes per parameter. Without ZeRO every rank holds all of
  // its parameters' states.
  CHECK(z0.programs[0].persistent[MemCategory::optimizer_states].value == 12 * (dense + experts));
  // ZeRO-1: dense states over the 8 data ranks, the experts' over the 8 / 4 = 2 ranks that hold
  // the same experts: 12 x dense / 8 + 12 x 49,152 / 2 = 1.5 dense + 294,912.
  CHECK(z1.programs[0].persistent[MemCategory::optimizer_states].value ==
        (12 * dense + 7) / 8 + 294'912);
  // Weights and gradients stay whole (ZeRO-1).
  CHECK(z1.programs[0].persistent[MemCategory::weights] ==
        z0.programs[0].persistent[MemCategory::weights]);
  CHECK(z1.programs[0].model_states[MemCategory::gradients] ==
        z0.programs[0].model_states[MemCategory::gradients]);
}

TEST_CASE("ZeRO-1 beside expert parallelism reduce-scatters and gathers over each group",
          "[parallel][expert][zero]") {
  const std::int64_t all = tiny_moe().parameters();
  const std::int64_t dense = all - 2 * 98'304;
  const auto plan = parallel::lower(moe(8, 4, 1));
  std::int64_t expert_rs = 0, dense_rs = 0;
  for (const auto* op : ops_of(plan, parallel::OpKind::reduce_scatter))
    (op->comm.ranks == 2 ? expert_rs : dense_rs) += op->comm.bytes.value;
  // Each MoE layer's 24,576 routed parameters' bf16 gradients (49,152 bytes) over 2 ranks; the
  // rest over all 8.
  CHECK(expert_rs == 2 * 49'152);
  CHECK(dense_rs == 2 * dense);
  CHECK(ops_of(plan, parallel::OpKind::all_reduce).empty());
  // After the update: the dense bf16 weights gathered over 8 ranks, the experts' over 2.
  const auto gathers = ops_of(plan, parallel::OpKind::all_gather);
  REQUIRE(gathers.size() == 2);
  CHECK(gathers[0]->comm.ranks == 8);
  CHECK(gathers[0]->comm.bytes.value == 2 * dense);
  CHECK(gathers[1]->comm.ranks == 2);
  CHECK(gathers[1]->comm.bytes.value == 2 * 49'152);
}

TEST_CASE("the fp8 weight cache keeps one copy and its transpose per step",
          "[parallel][fp8]") {
  // GEMM parameters: per block QKV and projection 4 x 64^2 = 16,384 and SwiGLU 3 x 64 x 128 =
  // 24,576; 2 blocks; the LM head 100 x 64 = 6,400: 88,320.
  const std::int64_t gemm = 2 * (16'384 + 24'576) + 6'400;
  const auto step = parallel::lower(fp8(true));
  const auto per_mb = parallel::lower(fp8(false));
  // Cached: fp8 weight + fp8 transpose, 2 bytes per GEMM parameter, with the weights.
  CHECK(step.programs[0].persistent[MemCategory::weights].value ==
        per_mb.programs[0].persistent[MemCategory::weights].value + 2 * gemm);
  // Per micro-batch: each forward books 1 byte per GEMM parameter of its layer until the
  // backward; cached: none.
  auto casts = [](const parallel::Plan& p) {
    std::int64_t bytes = 0;
    for (const auto& e : p.programs[0].effects)
      if (e.tensor == parallel::TensorKind::weight_cast) bytes += e.bytes.value;
    return bytes;
  };
  CHECK(casts(step) == 0);
  CHECK(casts(per_mb) > 0);
}

TEST_CASE("the fp8 weight cache holds only the routed experts a rank keeps", "[parallel][fp8][expert]") {
  auto cached = [](std::int64_t expert, bool step) {
    auto s = moe(4, expert, 0);
    s.training.precision = scenario::Precision::fp8;
    s.training.fp8_weight_cache_step = step;
    const auto plan = parallel::lower(s);
    return plan.programs[0].persistent[MemCategory::weights].value;
  };
  const std::int64_t one = cached(1, true) - cached(1, false);
  const std::int64_t four = cached(4, true) - cached(4, false);
  // Expert degree 4 leaves 3/4 of each MoE layer's 98,304 routed parameters to other ranks:
  // 2 layers x 73,728 fewer GEMM parameters, 2 bytes each (fp8 weight + transpose).
  CHECK(one - four == 2 * 2 * 73'728);
}

TEST_CASE("a checkpointed block's fp8 weights are made again by its replay, not kept from the "
          "forward", "[parallel][fp8][recompute]") {
  // torchao's Float8Linear and Transformer Engine without the step cache cast each weight per
  // GEMM call and save it for the backward: under full recomputation the checkpoint drops it,
  // and the replay casts again. Per op kind: bytes the op books and keeps past its end (booked
  // minus freed by the same op), and bytes it frees that earlier ops booked.
  auto casts = [](scenario::Recompute r) {
    auto s = fp8(false);
    s.training.recompute = r;
    const auto plan = parallel::lower(s);
    const auto& P = plan.programs[0];
    std::map<parallel::OpKind, std::int64_t> kept, freed;
    for (const auto& op : P.ops) {
      std::int64_t booked = 0, released = 0;
      for (auto k = op.alloc_begin; k < op.alloc_end; ++k)
        if (P.effects[k].tensor == parallel::TensorKind::weight_cast) booked += P.effects[k].bytes.value;
      for (auto k = op.free_begin; k < op.free_end; ++k)
        if (P.effects[k].tensor == parallel::TensorKind::weight_cast) released += P.effects[k].bytes.value;
      kept[op.kind] += booked - std::min(booked, released);
      freed[op.kind] += released - std::min(booked, released);
    }
    return std::pair{kept, freed};
  };
  // The blocks' GEMM parameters, 2 x (16,384 + 24,576) = 81,920, 1 byte each, per micro-batch
  // (4 of them); the LM head's 6,400 is no block's and stays booked from its forward.
  const std::int64_t blocks = 4 * 81'920, head = 4 * 6'400;
  const auto [none_kept, none_freed] = casts(scenario::Recompute::none);
  CHECK(none_kept.at(parallel::OpKind::forward) == blocks + head);
  CHECK(none_freed.at(parallel::OpKind::backward) == blocks + head);
  const auto [full_kept, full_freed] = casts(scenario::Recompute::full);
  CHECK(full_kept.at(parallel::OpKind::forward) == head);
  CHECK(full_kept.at(parallel::OpKind::recompute) == blocks);
  CHECK(full_freed.at(parallel::OpKind::backward) == blocks + head);
}

TEST_CASE("autocast's casts of a checkpointed block live to the forward's end, then from its replay",
          "[parallel][autocast][recompute]") {
  // torch.autocast caches each weight's 16-bit copy until the forward leaves its region (the
  // unit's forward); a checkpoint keeps no saved tensor, so the replay casts again for the
  // backward. Bytes each op kind books and frees: 2 per GEMM parameter, 4 micro-batches.
  auto s = fp8(false);
  s.training.precision = scenario::Precision::amp_bf16;
  s.training.recompute = scenario::Recompute::full;
  const auto plan = parallel::lower(s);
  const auto& P = plan.programs[0];
  std::map<parallel::OpKind, std::int64_t> booked, freed;
  for (const auto& op : P.ops) {
    for (auto k = op.alloc_begin; k < op.alloc_end; ++k)
      if (P.effects[k].tensor == parallel::TensorKind::weight_cast) booked[op.kind] += P.effects[k].bytes.value;
    for (auto k = op.free_begin; k < op.free_end; ++k)
      if (P.effects[k].tensor == parallel::TensorKind::weight_cast) freed[op.kind] += P.effects[k].bytes.value;
  }
  const std::int64_t blocks = 4 * 2 * 81'920, head = 4 * 2 * 6'400;
  CHECK(booked[parallel::OpKind::forward] == blocks + head);
  CHECK(freed[parallel::OpKind::forward] == blocks);  // the blocks' casts, at the forward's end
  CHECK(booked[parallel::OpKind::recompute] == blocks);
  CHECK(freed[parallel::OpKind::backward] == blocks + head);
}
