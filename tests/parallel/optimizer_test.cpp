// Optimizers as frameworks spend memory, against hand-computed bytes: bitsandbytes' block-wise
// 8-bit states and their 4096-element threshold, Adafactor's factored second moment, the
// foreach AdamW step's sqrt(v) copy, and torchtune's optimizer-in-backward.
#include <catch2/catch.hpp>

#include <algorithm>

#include "../support/fixtures.hpp"
#include "models/param_tensors.hpp"
#include "models/presets.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/optimizer_states.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using hw::MemCategory;
using scenario::Optimizer;
using scenario::Precision;

namespace {

models::Model llama2_7b() {
  models::BuildOptions o;
  o.seq_len = 512;
  return models::build_preset(*models::find_preset("llama2-7b"), o);
}

std::int64_t model_states(const models::Model& m, Precision p, Optimizer o) {
  std::int64_t total = 0;
  for (auto v : m.order) {
    const models::Layer& l = m.graph[v];
    total += scenario::layer_optimizer(p, o, l, std::nullopt, 1, l.params).states.value;
  }
  return total;
}

scenario::TrainingSpec training(Precision p, Optimizer o) {
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.gradient_accumulation = 1;
  t.precision = p;
  t.optimizer = o;
  return t;
}

// The allocations of the plan's optimizer ops, in plan order.
std::vector<std::pair<std::int32_t, std::int64_t>> optimizer_allocs(const parallel::Program& P) {
  std::vector<std::pair<std::int32_t, std::int64_t>> out;
  for (const auto& op : P.ops) {
    if (op.kind != parallel::OpKind::optimizer) continue;
    std::int64_t bytes = 0;
    for (auto e = op.alloc_begin; e < op.alloc_end; ++e) bytes += P.effects[e].bytes.value;
    out.emplace_back(op.layer, bytes);
  }
  return out;
}

}  // namespace

TEST_CASE("bitsandbytes 8-bit states: uint8 + an fp32 absmax per 2048 block, fp32 below 4096",
          "[optimizer]") {
  const auto bytes = [](Precision p, models::ParamTensor t) {
    return scenario::tensor_optimizer_bytes(p, Optimizer::adamw_8bit, t).value;
  };
  // 4096 x 4096 = 16,777,216 elements: 2 x 16,777,216 + 2 x 4 x 8,192 blocks = 33,619,968.
  CHECK(bytes(Precision::bf16_true, {4096, 4096}) == 33'619'968);
  // Mixed precision adds the fp32 master: + 4 x 16,777,216.
  CHECK(bytes(Precision::bf16, {4096, 4096}) == 33'619'968 + 67'108'864);
  // min_8bit_size = 4096: 4095 elements keep two fp32 states, 8 x 4095; 4096 go 8-bit:
  // 2 x 4096 + 8 x 2 blocks; 4097: 2 x 4097 + 8 x 3 blocks.
  CHECK(bytes(Precision::fp32, {4095}) == 32'760);
  CHECK(bytes(Precision::fp32, {4096}) == 8'208);
  CHECK(bytes(Precision::fp32, {4097}) == 8'218);
  // count copies: three 1024-element biases stay fp32, 3 x 8 x 1024.
  CHECK(bytes(Precision::fp32, {1024, 0, 1, 3}) == 24'576);
}

TEST_CASE("Adafactor keeps a row and a column per matrix, a full second moment per vector",
          "[optimizer]") {
  const auto bytes = [](Precision p, models::ParamTensor t) {
    return scenario::tensor_optimizer_bytes(p, Optimizer::adafactor, t).value;
  };
  // 11008 x 4096 in fp32: (11008 + 4096) x 4; in bf16-true the gradient's dtype: x 2.
  CHECK(bytes(Precision::fp32, {11008, 4096}) == 60'416);
  CHECK(bytes(Precision::bf16_true, {11008, 4096}) == 30'208);
  CHECK(bytes(Precision::amp_bf16, {4096}) == 16'384);
  // A 64 x 3 x 3 x 3 conv weight factors its last two dimensions: 192 x (3 + 3) x 4.
  CHECK(bytes(Precision::fp32, {3, 3, 192}) == 4'608);
}

TEST_CASE("Llama-2-7B: 8-bit and Adafactor states tensor by tensor", "[optimizer]") {
  const auto m = llama2_7b();
  // Every parameter is listed by shape: the tensors add up to the model's 6,738,415,616.
  std::int64_t listed = 0;
  for (auto v : m.order)
    for (const auto& t : models::param_tensors(m.graph[v])) listed += t.elements();
  CHECK(listed == 6'738'415'616LL);
  // 8-bit, per block: q, k, v, o 4096 x 4096 at 33,619,968 each; gate, up, down 11008 x 4096
  // (45,088,768 = 22,016 blocks) at 90,177,536 + 176,128 = 90,353,664 each; two 4096 norms at
  // 8,208: 405,557,280. x 32 = 12,977,832,960; embedding and head 32000 x 4096 (64,000
  // blocks) 262,656,000 each; the final norm 8,208: 13,503,153,168.
  CHECK(model_states(m, Precision::amp_bf16, Optimizer::adamw_8bit) == 13'503'153'168LL);
  // Adafactor in fp32, per block: 4 x (4096 + 4096) x 4 + 3 x (11008 + 4096) x 4 + 2 x 4096 x 4
  // = 345,088; x 32 = 11,042,816; embedding and head (32000 + 4096) x 4 each, the final norm
  // 16,384: 11,347,968.
  CHECK(model_states(m, Precision::fp32, Optimizer::adafactor) == 11'347'968LL);
  // Lowering books them: one GPU, amp-bf16, 8-bit.
  const auto s = make_scenario(m, ideal_device(1LL << 40),
                               training(Precision::amp_bf16, Optimizer::adamw_8bit));
  const auto plan = parallel::lower(s);
  CHECK(plan.programs.at(0).model_states[MemCategory::optimizer_states].value == 13'503'153'168LL);
}

TEST_CASE("foreach AdamW allocates sqrt(v) for every parameter at once; fused Adam none",
          "[optimizer]") {
  const auto m = chain_model({plain_layer("a", 1000, 0, 8), plain_layer("b", 3000, 0, 8)});
  // fp32 AdamW: torch._foreach_sqrt(exp_avg_sqs) = 4 x 4000 bytes, in the step.
  auto plan = parallel::lower(make_scenario(m, ideal_device(1LL << 30),
                                            training(Precision::fp32, Optimizer::adamw)));
  auto allocs = optimizer_allocs(plan.programs.at(0));
  REQUIRE(allocs.size() == 1);
  CHECK(allocs[0].second == 16'000);
  // bf16-true: v in bf16, 2 x 4000.
  plan = parallel::lower(make_scenario(m, ideal_device(1LL << 30),
                                       training(Precision::bf16_true, Optimizer::adamw)));
  CHECK(optimizer_allocs(plan.programs.at(0)).at(0).second == 8'000);
  // Megatron mixed precision (fused Adam) and bitsandbytes: no temporary.
  plan = parallel::lower(
      make_scenario(m, ideal_device(1LL << 30), training(Precision::bf16, Optimizer::adamw)));
  CHECK(optimizer_allocs(plan.programs.at(0)).at(0).second == 0);
  plan = parallel::lower(make_scenario(m, ideal_device(1LL << 30),
                                       training(Precision::fp32, Optimizer::adamw_8bit)));
  CHECK(optimizer_allocs(plan.programs.at(0)).at(0).second == 0);
  // Adafactor, fp32: update = grad^2 + eps and the row x column product, 2 x 4 x the largest
  // tensor (the 3000-element vector).
  plan = parallel::lower(make_scenario(m, ideal_device(1LL << 30),
                                       training(Precision::fp32, Optimizer::adafactor)));
  CHECK(optimizer_allocs(plan.programs.at(0)).at(0).second == 24'000);
}

TEST_CASE("optimizer_in_backward steps each layer after its backward and frees its gradients",
          "[optimizer]") {
  const auto m = chain_model({plain_layer("a", 1000, 0, 8), plain_layer("b", 3000, 0, 8)});
  auto t = training(Precision::fp32, Optimizer::adamw);
  t.optimizer_in_backward = true;
  const auto plan = parallel::lower(make_scenario(m, ideal_device(1LL << 30), t));
  const auto& P = plan.programs.at(0);
  // Backward runs b then a: one step per layer, each with sqrt(v) of its one tensor (4 x 3000,
  // then 4 x 1000), each freeing that layer's 4-byte gradients.
  const auto allocs = optimizer_allocs(P);
  REQUIRE(allocs.size() == 2);
  CHECK(allocs[0] == std::pair<std::int32_t, std::int64_t>{1, 12'000});
  CHECK(allocs[1] == std::pair<std::int32_t, std::int64_t>{0, 4'000});
  for (const auto& op : P.ops) {
    if (op.kind != parallel::OpKind::optimizer) continue;
    std::int64_t grads = 0;
    for (auto e = op.free_begin; e < op.free_end; ++e)
      if (P.effects[e].tensor == parallel::TensorKind::param_grad) grads += P.effects[e].bytes.value;
    CHECK(grads == (op.layer == 1 ? 12'000 : 4'000));
  }
}

TEST_CASE("paged AdamW: the driver evicts states to host instead of running out", "[optimizer]") {
  // One 1000-parameter layer, fp32: weights 4,000 + gradients 4,000 + AdamW states 8,000 B
  // (bitsandbytes' kernels make no sqrt(v) copy). On a device 3,000 B short of the peak the
  // paged states (8,000 B) give 3,000 B up: it fits, and those bytes come back in and go out
  // again each step over a 1 GB/s link: 2 x 3,000 B = 6 us more.
  const auto m = chain_model({plain_layer("a", 1000, 0, 8)});
  auto run = [&](std::int64_t capacity) {
    auto s = make_scenario(m, ideal_device(capacity), training(Precision::fp32, Optimizer::paged_adamw));
    s.cluster.pcie = free_link();
    s.cluster.pcie.bandwidth = core::Bandwidth{1e9};
    return exec::play(parallel::lower(s));
  };
  const auto roomy = run(1LL << 30);
  const std::int64_t peak = roomy.devices.at(0).peak.value;
  CHECK(peak >= 16'000);
  CHECK(roomy.devices.at(0).paged_spill.value == 0);
  const auto tight = run(peak - 3'000);
  CHECK(tight.devices.at(0).fits);
  CHECK(tight.ooms.empty());
  CHECK(tight.devices.at(0).paged_spill.value == 3'000);
  CHECK(tight.devices.at(0).peak.value == peak - 3'000);
  // (the one rounding place rounds seconds up to whole nanoseconds)
  CHECK(tight.step_time.ns - roomy.step_time.ns >= 6'000);
  CHECK(tight.step_time.ns - roomy.step_time.ns <= 6'001);
  // 9,000 B short is more than the 8,000 B of states: all of them go and it still runs out.
  const auto short_by_more = run(peak - 9'000);
  CHECK_FALSE(short_by_more.devices.at(0).fits);
  CHECK(short_by_more.devices.at(0).paged_spill.value == 8'000);
}

TEST_CASE("paged states are not in PyTorch's allocated and reserved figures", "[optimizer]") {
  // The layer of the case above without the allocator model on an ideal device (no context):
  // the device's peak holds weights 4,000 + gradients 4,000 + states 8,000 = 16,000 B, while
  // the states live in managed memory that PyTorch's allocator never hands out, so its
  // allocated and reserved peaks are 8,000 B less, evicted or not.
  const auto m = chain_model({plain_layer("a", 1000, 0, 8)});
  auto run = [&](std::int64_t capacity) {
    auto s = make_scenario(m, ideal_device(capacity),
                           training(Precision::fp32, Optimizer::paged_adamw));
    s.training.caching_allocator = false;
    s.cluster.pcie = free_link();
    s.cluster.pcie.bandwidth = core::Bandwidth{1e9};
    return exec::play(parallel::lower(s));
  };
  const auto roomy = run(1LL << 30).devices.at(0);
  CHECK(roomy.allocated_peak.value == roomy.peak.value - 8'000);
  CHECK(roomy.reserved_peak.value == roomy.peak.value - 8'000);
  // 3,000 B evicted: the device holds 3,000 B less, PyTorch's figures stay where they were.
  const auto tight = run(roomy.peak.value - 3'000).devices.at(0);
  CHECK(tight.paged_spill.value == 3'000);
  CHECK(tight.allocated_peak.value == roomy.allocated_peak.value);
}
