// Optimizers as frameworks spend memory, against hand-computed bytes: bitsandbytes' block-wise
// 8-bit states and their 4096-element threshold, torchao's 4-bit states, Adafactor's factored
// second moment, the foreach AdamW step's sqrt(v) copy, and torchtune's optimizer-in-backward.
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

std::int64_t model_states(const models::Model& m, Precision p, Optimizer o,
                          std::int64_t block = 2048) {
  std::int64_t total = 0;
  for (auto v : m.order) {
    const models::Layer& l = m.graph[v];
    total += scenario::layer_optimizer(p, o, block, l, std::nullopt, 1, l.params).states.value;
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

TEST_CASE("bitsandbytes 8-bit states: uint8 + an fp32 absmax per block, fp32 below 4096",
          "[optimizer]") {
  const auto bytes = [](Precision p, models::ParamTensor t, std::int64_t block) {
    return scenario::tensor_optimizer_bytes(p, Optimizer::adamw_8bit, t, block).value;
  };
  // bitsandbytes < 0.44, blocks of 2048: 4096 x 4096 = 16,777,216 elements:
  // 2 x 16,777,216 + 2 x 4 x 8,192 blocks = 33,619,968.
  CHECK(bytes(Precision::bf16_true, {4096, 4096}, 2048) == 33'619'968);
  // bitsandbytes >= 0.44 (and torchao), blocks of 256: 2 x 16,777,216 + 2 x 4 x 65,536 =
  // 34,078,720.
  CHECK(bytes(Precision::bf16_true, {4096, 4096}, 256) == 34'078'720);
  // Mixed precision adds the fp32 master: + 4 x 16,777,216.
  CHECK(bytes(Precision::bf16, {4096, 4096}, 2048) == 33'619'968 + 67'108'864);
  // min_8bit_size = 4096: 4095 elements keep two fp32 states, 8 x 4095; 4096 go 8-bit:
  // 2 x 4096 + 8 x 2 blocks; 4097: 2 x 4097 + 8 x 3 blocks (of 2048), + 8 x 17 (of 256).
  CHECK(bytes(Precision::fp32, {4095}, 2048) == 32'760);
  CHECK(bytes(Precision::fp32, {4096}, 2048) == 8'208);
  CHECK(bytes(Precision::fp32, {4097}, 2048) == 8'218);
  CHECK(bytes(Precision::fp32, {4097}, 256) == 8'330);
  // count copies: three 1024-element biases stay fp32, 3 x 8 x 1024.
  CHECK(bytes(Precision::fp32, {1024, 0, 1, 3}, 256) == 24'576);
}

TEST_CASE("torchao 4-bit states: packed codes + an fp32 scale per 128, else the param's dtype",
          "[optimizer]") {
  const auto bytes = [](Precision p, models::ParamTensor t, std::int64_t block) {
    return scenario::tensor_optimizer_bytes(p, Optimizer::adamw_4bit, t, block).value;
  };
  // OptimState4bit.zeros: codes of n / 2 uint8 and n / block fp32 scales per state. 4096 x 4096
  // = 16,777,216 elements in blocks of 128: 2 x (8,388,608 + 4 x 131,072) = 17,825,792.
  CHECK(bytes(Precision::bf16_true, {4096, 4096}, 128) == 17'825'792);
  // 11008 x 4096 = 45,088,768 elements, 352,256 blocks: 2 x (22,544,384 + 1,409,024).
  CHECK(bytes(Precision::bf16_true, {11008, 4096}, 128) == 47'906'816);
  // A 4096-element norm is quantized too (4096 >= 4096, 32 blocks): 2 x (2,048 + 128).
  CHECK(bytes(Precision::bf16_true, {4096}, 128) == 4'352);
  // _new_buffer's fallback, zeros_like(p): 4095 elements, or 5000 (not a multiple of 128),
  // keep two buffers of the parameter's dtype: 2 x 2 B in bf16-true, 2 x 4 B in fp32.
  CHECK(bytes(Precision::bf16_true, {4095}, 128) == 16'380);
  CHECK(bytes(Precision::bf16_true, {5000}, 128) == 20'000);
  CHECK(bytes(Precision::fp32, {5000}, 128) == 40'000);
  // Mixed precision adds the fp32 master: + 4 x 16,777,216.
  CHECK(bytes(Precision::bf16, {4096, 4096}, 128) == 17'825'792 + 67'108'864);
  // The large-tensor figure: half a byte per state.
  CHECK(scenario::state_bytes_per_param(Precision::bf16_true, Optimizer::adamw_4bit)
            .optimizer_states == 1);
}

TEST_CASE("bitsandbytes 32-bit states are fp32 whatever the parameter dtype", "[optimizer]") {
  // PagedAdamW (optim_bits = 32): two fp32 buffers, 8 B per element, beside bf16 weights;
  // torch.optim.AdamW on the same bf16 parameters keeps bf16 states (4 B).
  CHECK(scenario::state_bytes_per_param(Precision::bf16_true, Optimizer::paged_adamw)
            .optimizer_states == 8);
  CHECK(scenario::state_bytes_per_param(Precision::bf16_true, Optimizer::adamw)
            .optimizer_states == 4);
  CHECK(scenario::tensor_optimizer_bytes(Precision::bf16_true, Optimizer::paged_adamw,
                                         {4096, 4096}, 256)
            .value == 8 * 16'777'216);
}

TEST_CASE("paged optimizers keep only large tensors' state buffers in unified memory",
          "[optimizer]") {
  const auto paged = [](Optimizer o, models::ParamTensor t) {
    return scenario::tensor_paged_bytes(o, t).value;
  };
  // get_state_buffer pages a tensor of 100,000 elements or more: its two uint8 buffers
  // (2 x 100,000); the absmax (torch.zeros) stays PyTorch's.
  CHECK(paged(Optimizer::paged_adamw_8bit, {100'000}) == 200'000);
  CHECK(paged(Optimizer::paged_adamw_8bit, {99'999}) == 0);
  // 32-bit: two fp32 buffers, 8 x 4096 x 4096.
  CHECK(paged(Optimizer::paged_adamw, {4096, 4096}) == 134'217'728);
  // A 4096-element norm's states are torch.zeros_like: not paged.
  CHECK(paged(Optimizer::paged_adamw, {4096}) == 0);
  CHECK(paged(Optimizer::adamw_8bit, {4096, 4096}) == 0);
}

TEST_CASE("Adafactor keeps a row and a column per matrix, a full second moment per vector",
          "[optimizer]") {
  const auto bytes = [](Precision p, models::ParamTensor t) {
    return scenario::tensor_optimizer_bytes(p, Optimizer::adafactor, t, 256).value;
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
  // Blocks of 256: q, k, v, o at 34,078,720; gate, up, down 2 x 45,088,768 + 8 x 176,128 =
  // 91,586,560; norms 2 x 4096 + 8 x 16 = 8,320: 411,091,200 per block, x 32 = 13,154,918,400;
  // embedding and head 262,144,000 + 8 x 512,000 = 266,240,000 each; the final norm 8,320:
  // 13,687,406,720.
  CHECK(model_states(m, Precision::amp_bf16, Optimizer::adamw_8bit, 256) == 13'687'406'720LL);
  // Adafactor in fp32, per block: 4 x (4096 + 4096) x 4 + 3 x (11008 + 4096) x 4 + 2 x 4096 x 4
  // = 345,088; x 32 = 11,042,816; embedding and head (32000 + 4096) x 4 each, the final norm
  // 16,384: 11,347,968.
  CHECK(model_states(m, Precision::fp32, Optimizer::adafactor) == 11'347'968LL);
  // Lowering books them: one GPU, amp-bf16, 8-bit.
  auto s = make_scenario(m, ideal_device(1LL << 40),
                         training(Precision::amp_bf16, Optimizer::adamw_8bit));
  CHECK(parallel::lower(s).programs.at(0).model_states[MemCategory::optimizer_states].value ==
        13'687'406'720LL);
  s.training.optimizer_block = 2048;  // training.optimizer_block: 2048, bitsandbytes < 0.44
  CHECK(parallel::lower(s).programs.at(0).model_states[MemCategory::optimizer_states].value ==
        13'503'153'168LL);
}

TEST_CASE("Llama-2-7B: torchao 4-bit states, 1.0625 B per parameter", "[optimizer]") {
  const auto m = llama2_7b();
  // Every tensor of Llama-2-7B has a multiple of 128 elements and at least 4096: per block
  // q, k, v, o at 17,825,792; gate, up, down at 47,906,816; two norms at 4,352: 215,032,320,
  // x 32 = 6,881,034,240; embedding and head 131,072,000 elements at 2 x (65,536,000 +
  // 4 x 1,024,000) = 139,264,000 each; the final norm 4,352: 7,159,566,592 =
  // 6,738,415,616 x (1 + 8 / 128).
  CHECK(model_states(m, Precision::bf16_true, Optimizer::adamw_4bit, 128) == 7'159'566'592LL);
  // Lowering books them with the 4-bit default block, 128.
  const auto s = make_scenario(m, ideal_device(1LL << 40),
                               training(Precision::bf16_true, Optimizer::adamw_4bit));
  CHECK(s.training.effective_optimizer_block() == 128);
  CHECK(parallel::lower(s).programs.at(0).model_states[MemCategory::optimizer_states].value ==
        7'159'566'592LL);
}

TEST_CASE("foreach AdamW allocates sqrt(v) for every parameter at once, fused Adam none",
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
  // torchao's 4-bit AdamW: one compiled step per parameter, no temporary (docs/finetuning.md).
  plan = parallel::lower(make_scenario(m, ideal_device(1LL << 30),
                                       training(Precision::bf16_true, Optimizer::adamw_4bit)));
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
  // Layers of 100,000 and 1,000 parameters, fp32: weights 404,000 + gradients 404,000 + AdamW
  // states 808,000 B (bitsandbytes' kernels make no sqrt(v) copy), of which the large tensor's
  // 800,000 B are paged (get_state_buffer pages tensors of 100,000 elements or more; the small
  // one's 8,000 B are torch.zeros_like). On a device 300,000 B short of the peak the paged
  // states give 300,000 B up: it fits, and those bytes come back in and go out again each step
  // over a 1 GB/s link: 2 x 300,000 B = 600 us more.
  const auto m = chain_model({plain_layer("a", 100'000, 0, 8), plain_layer("b", 1'000, 0, 8)});
  auto run = [&](std::int64_t capacity) {
    auto s = make_scenario(m, ideal_device(capacity), training(Precision::fp32, Optimizer::paged_adamw));
    s.cluster.pcie = free_link();
    s.cluster.pcie.bandwidth = core::Bandwidth{1e9};
    return exec::play(parallel::lower(s));
  };
  const auto roomy = run(1LL << 30);
  const std::int64_t peak = roomy.devices.at(0).peak.value;
  CHECK(peak >= 1'616'000);
  CHECK(roomy.devices.at(0).paged_spill.value == 0);
  const auto tight = run(peak - 300'000);
  CHECK(tight.devices.at(0).fits);
  CHECK(tight.ooms.empty());
  CHECK(tight.devices.at(0).paged_spill.value == 300'000);
  CHECK(tight.devices.at(0).peak.value == peak - 300'000);
  // (the one rounding place rounds seconds up to whole nanoseconds)
  CHECK(tight.step_time.ns - roomy.step_time.ns >= 600'000);
  CHECK(tight.step_time.ns - roomy.step_time.ns <= 600'001);
  // 900,000 B short is more than the 800,000 B of paged states: all of them go and it still
  // runs out.
  const auto short_by_more = run(peak - 900'000);
  CHECK_FALSE(short_by_more.devices.at(0).fits);
  CHECK(short_by_more.devices.at(0).paged_spill.value == 800'000);
}

TEST_CASE("paged states are not in PyTorch's allocated and reserved figures", "[optimizer]") {
  // The layers of the case above without the allocator model on an ideal device (no context):
  // the device's peak holds weights, gradients and all 808,000 B of states, while the large
  // tensor's 800,000 B live in managed memory that PyTorch's allocator never hands out, so its
  // allocated and reserved peaks are 800,000 B less, evicted or not; the small tensor's
  // 8,000 B count.
  const auto m = chain_model({plain_layer("a", 100'000, 0, 8), plain_layer("b", 1'000, 0, 8)});
  auto run = [&](std::int64_t capacity) {
    auto s = make_scenario(m, ideal_device(capacity),
                           training(Precision::fp32, Optimizer::paged_adamw));
    s.training.caching_allocator = false;
    s.cluster.pcie = free_link();
    s.cluster.pcie.bandwidth = core::Bandwidth{1e9};
    return exec::play(parallel::lower(s));
  };
  const auto roomy = run(1LL << 30).devices.at(0);
  CHECK(roomy.allocated_peak.value == roomy.peak.value - 800'000);
  CHECK(roomy.reserved_peak.value == roomy.peak.value - 800'000);
  // 300,000 B evicted: the device holds 300,000 B less, PyTorch's figures stay where they were.
  const auto tight = run(roomy.peak.value - 300'000).devices.at(0);
  CHECK(tight.paged_spill.value == 300'000);
  CHECK(tight.allocated_peak.value == roomy.allocated_peak.value);
}

TEST_CASE("paged 8-bit AdamW: the absmax stays PyTorch's memory", "[optimizer]") {
  // One 1,000,000-parameter layer, bf16-true, paged 8-bit AdamW with blocks of 256: states
  // 2 x 1,000,000 uint8 + 2 x 4 x 3,907 absmax = 2,031,256 B, of which the uint8 buffers
  // (2,000,000 B) are paged and the absmax (31,256 B) is torch.zeros.
  const auto m = chain_model({plain_layer("a", 1'000'000, 0, 8)});
  const auto s = make_scenario(m, ideal_device(1LL << 30),
                               training(Precision::bf16_true, Optimizer::paged_adamw_8bit));
  const auto plan = parallel::lower(s);
  CHECK(plan.programs.at(0).model_states[MemCategory::optimizer_states].value == 2'031'256);
  CHECK(plan.programs.at(0).paged.value == 2'000'000);
}
