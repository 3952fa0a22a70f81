// training.accumulate_grads (sim/parallel/pass_accumulate.cpp): the pass that adds each
// micro-batch's weight gradients into the step's, as PyTorch's autograd (in place, 16-bit) or
// DeepSpeed's BF16_Optimizer (cast to fp32, added, all-reduced in fp32) run it.
#include <catch2/catch.hpp>

#include "../support/adam_layers.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

using scenario::AccumulateGrads;

// adam_layers (tests/support/adam_layers.hpp): 250,000,000-parameter layers, fp16 Adam, four
// micro-batches of one sample, 1 TFLOP/s and 1 TB/s.
constexpr std::int64_t kParams = kAdamLayerParams;

// The accumulation ops (backward ops of no FLOPs) of the plan's first program.
std::vector<parallel::Op> adds(const parallel::Plan& plan) {
  std::vector<parallel::Op> out;
  for (const auto& op : plan.programs[0].ops)
    if (op.kind == parallel::OpKind::backward && op.work.flops == 0) out.push_back(op);
  return out;
}

double step_ms(const parallel::Plan& plan) {
  return core::to_seconds(exec::play(plan).step_time) * 1e3;
}

}  // namespace

TEST_CASE("autograd adds every micro-batch after the first into param.grad",
          "[parallel][accumulate]") {
  const auto fused = parallel::lower(adam_layers(AccumulateGrads::fused));
  const auto autograd = parallel::lower(adam_layers(AccumulateGrads::autograd));
  CHECK(adds(fused).empty());
  // Micro-batches 1, 2, 3 (the first one's gradient is kept as it is): each reads param.grad and
  // the new gradient and writes param.grad, 3 x 2 bytes x 250,000,000 = 1.5 GB in one kernel.
  const auto a = adds(autograd);
  REQUIRE(a.size() == 3);
  for (std::size_t k = 0; k < a.size(); ++k) {
    CHECK(a[k].microbatch == static_cast<std::int32_t>(k) + 1);
    CHECK(a[k].work.bytes.value == 1'500'000'000);
    CHECK(a[k].work.launches == 1);
  }
  // 1.5 GB at 1 TB/s = 1.5 ms each on the only stream: the step is 4.5 ms longer.
  CHECK(step_ms(autograd) - step_ms(fused) == Approx(4.5).epsilon(1e-6));
}

TEST_CASE("DeepSpeed's BF16 optimizer casts and adds every micro-batch into fp32 gradients",
          "[parallel][accumulate]") {
  const auto fused = parallel::lower(adam_layers(AccumulateGrads::fused));
  const auto fp32 = parallel::lower(adam_layers(AccumulateGrads::fp32));
  // Every micro-batch: the cast reads 2 and writes 4 bytes, the add reads 4 + 4 and writes 4:
  // 18 x 250,000,000 = 4.5 GB, two kernels (cast, add) for the one tensor.
  const auto a = adds(fp32);
  REQUIRE(a.size() == 4);
  for (const auto& op : a) {
    CHECK(op.work.bytes.value == 4'500'000'000);
    CHECK(op.work.launches == 2);
  }
  // 4 x 4.5 ms.
  CHECK(step_ms(fp32) - step_ms(fused) == Approx(18.0).epsilon(1e-6));
  // The fp32 copy is a model state of 4 bytes per parameter beside the fp16 gradients.
  CHECK(fp32.programs[0].model_states[hw::MemCategory::gradients].value ==
        fused.programs[0].model_states[hw::MemCategory::gradients].value + 4 * kParams);
}

TEST_CASE("the fp32 gradients are all-reduced over the data ranks in place of ZeRO-1's "
          "reduce-scatter", "[parallel][accumulate]") {
  using parallel::OpKind;
  const auto comm_bytes = [](const parallel::Plan& plan, OpKind kind) {
    std::int64_t b = 0;
    for (const auto& op : plan.programs[0].ops)
      if (op.kind == kind && op.purpose != parallel::CommPurpose::tensor)
        b += op.comm.bytes.value;
    return b;
  };
  const auto z1 = parallel::lower(adam_layers(AccumulateGrads::fused, 2, 1));
  const auto fp32 = parallel::lower(adam_layers(AccumulateGrads::fp32, 2, 1));
  // ZeRO-1 reduce-scatters the fp16 gradients: 2 x 250,000,000 bytes.
  CHECK(comm_bytes(z1, OpKind::reduce_scatter) == 2 * kParams);
  CHECK(comm_bytes(z1, OpKind::all_reduce) == 0);
  // The BF16 optimizer all-reduces the fp32 copy instead: 4 x 250,000,000 bytes in one buffer
  // (under DeepSpeed's 5e8 elements), after the last micro-batch's adds.
  CHECK(comm_bytes(fp32, OpKind::reduce_scatter) == 0);
  CHECK(comm_bytes(fp32, OpKind::all_reduce) == 4 * kParams);
  const auto& ops = fp32.programs[0].ops;
  std::int32_t last_add = -1, reduce = -1;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind == OpKind::backward && ops[i].work.flops == 0)
      last_add = static_cast<std::int32_t>(i);
    if (ops[i].kind == OpKind::all_reduce) reduce = static_cast<std::int32_t>(i);
  }
  REQUIRE(last_add >= 0);
  REQUIRE(reduce > last_add);
  const auto t = exec::play(fp32);
  CHECK(t.devices[0].start[reduce] >= t.devices[0].finish[last_add]);
}

TEST_CASE("under autograd the last backward's reductions wait for its adds",
          "[parallel][accumulate]") {
  using parallel::OpKind;
  const auto plan = parallel::lower(adam_layers(AccumulateGrads::autograd, 2, 1));
  const auto t = exec::play(plan);
  const auto& ops = plan.programs[0].ops;
  core::TimePoint last_add{};
  int reductions = 0;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == OpKind::backward && ops[i].work.flops == 0)
      last_add = t.devices[0].finish[i];
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == OpKind::reduce_scatter) {
      ++reductions;
      CHECK(t.devices[0].start[i] >= last_add);
    }
  // The layer's 500,000,000 bytes of fp16 gradients fill one bucket (buckets close at layer
  // ends once they pass bucket_size).
  CHECK(reductions == 1);
}

TEST_CASE("autograd's adds follow each layer's backward, so the reductions still overlap the "
          "backward", "[parallel][accumulate]") {
  using parallel::OpKind;
  // Two layers of 250,000,000 parameters, 4 micro-batches, data 2, ZeRO-1: the last
  // micro-batch runs B(l1) [2 ms: 2 GFLOP at 1 TFLOP/s], add(l1) [1.5 ms], B(l0), add(l0); l1's
  // bucket (500 MB) is reduced once add(l1) ends, while B(l0) runs.
  const auto plan = parallel::lower(adam_layers(AccumulateGrads::autograd, 2, 1, 2));
  const auto& ops = plan.programs[0].ops;
  // Micro-batches 1-3, one add per layer each.
  CHECK(adds(plan).size() == 6);
  const auto r = exec::play(plan);
  std::size_t add_l1 = 0, backward_l0 = 0, first_reduce = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].microbatch != 3 && ops[i].kind != OpKind::reduce_scatter) continue;
    if (ops[i].kind == OpKind::backward && ops[i].layer == 1 && ops[i].work.flops == 0) add_l1 = i;
    if (ops[i].kind == OpKind::backward && ops[i].layer == 0 && ops[i].work.flops > 0)
      backward_l0 = i;
    if (ops[i].kind == OpKind::reduce_scatter && first_reduce == 0) first_reduce = i;
  }
  REQUIRE(add_l1 > 0);
  REQUIRE(first_reduce > 0);
  CHECK(r.devices[0].start[first_reduce] == r.devices[0].finish[add_l1]);
  CHECK(r.devices[0].start[first_reduce] < r.devices[0].finish[backward_l0]);
}

TEST_CASE("fused-fp32 keeps 4-byte gradients, written by the backward and reduce-scattered in fp32",
          "[parallel][accumulate]") {
  using parallel::OpKind;
  // Megatron-Core's main_grad: the weight-gradient GEMM accumulates into an fp32 buffer, which
  // the distributed optimizer reduce-scatters (Megatron-LM forces it under --bf16).
  const auto fused = parallel::lower(adam_layers(AccumulateGrads::fused, 2, 1));
  const auto f32 = parallel::lower(adam_layers(AccumulateGrads::fused_fp32, 2, 1));
  CHECK(adds(f32).empty());  // no accumulation pass of its own
  // Gradients: 4 bytes x 250,000,000 instead of 2 x 250,000,000.
  CHECK(fused.programs[0].model_states[hw::MemCategory::gradients].value == 2 * kParams);
  CHECK(f32.programs[0].model_states[hw::MemCategory::gradients].value == 4 * kParams);
  std::int64_t rs = 0;
  for (const auto& op : f32.programs[0].ops)
    if (op.kind == OpKind::reduce_scatter) rs += op.comm.bytes.value;
  CHECK(rs == 4 * kParams);
  // Each backward writes 2 more bytes per parameter (0.5 GB), which its 2 GFLOP (2 ms at
  // 1 TFLOP/s) cover: about 1.5 GB at 1 TB/s is still under them. The optimizer step reads the
  // rank's half of the gradients at 4 bytes instead of 2 (0.25 GB more: 0.25 ms), and the free
  // link hides the larger reduce-scatter.
  const auto backward_bytes = [](const parallel::Plan& plan) {
    for (const auto& op : plan.programs[0].ops)
      if (op.kind == OpKind::backward && op.work.flops > 0) return op.work.bytes.value;
    return std::int64_t{0};
  };
  CHECK(backward_bytes(f32) - backward_bytes(fused) == 2 * kParams);
  CHECK(step_ms(f32) - step_ms(fused) == Approx(0.25).epsilon(1e-6));
}

TEST_CASE("fused-fp32 under ZeRO-2 reduce-scatters each micro-batch's fp32 gradients into 4-byte shards",
          "[parallel][accumulate]") {
  using parallel::OpKind;
  // Megatron-FSDP's optim_grads (or DeepSpeed's grad_accum_dtype fp32): the gradients stay fp32,
  // so every micro-batch's reduce-scatter moves 4 bytes per parameter and each rank keeps a
  // 4-byte shard of them.
  const auto fused = parallel::lower(adam_layers(AccumulateGrads::fused, 2, 2));
  const auto f32 = parallel::lower(adam_layers(AccumulateGrads::fused_fp32, 2, 2));
  CHECK(adds(f32).empty());
  CHECK(fused.programs[0].model_states[hw::MemCategory::gradients].value == kParams);      // 2 B / 2 ranks
  CHECK(f32.programs[0].model_states[hw::MemCategory::gradients].value == 2 * kParams);    // 4 B / 2 ranks
  const auto reduced = [](const parallel::Plan& plan) {
    std::int64_t n = 0, bytes = 0;
    for (const auto& op : plan.programs[0].ops)
      if (op.kind == OpKind::reduce_scatter) ++n, bytes += op.comm.bytes.value;
    return std::pair{n, bytes};
  };
  const auto [n16, b16] = reduced(fused);
  const auto [n32, b32] = reduced(f32);
  CHECK(n32 == n16);
  CHECK(n32 == 4);  // one per micro-batch: ZeRO-2 reduces every backward
  CHECK(b16 == 4 * 2 * kParams);
  CHECK(b32 == 4 * 4 * kParams);
}
