// A cloned first block with a quantized base (training.model_init: cloned-layer beside
// training.lora.quantize_on_load: whole; pass_load.cpp): torchtune's Llama-2 builders at 0914d5c
// build one block whose LoRALinears quantize their bf16 weights with torchao 0.1's to_nf4, then
// the embedding, head and final norm, then deep-copy the block once per block (each NF4 weight
// dequantized and quantized again, its packed data copied), drop the first block, and
// load_state_dict quantizes every checkpoint weight once more. Bytes computed by hand for a tiny
// Llama (2 blocks, h 128, MLP 256, vocabulary 512, LoRA rank 8 on every linear, nf4-dq).
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "../support/fixtures.hpp"
#include "models/builders.hpp"
#include "models/presets.hpp"
#include "sim/exec/allocator_model.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/finetune.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

constexpr std::int64_t kAttn = 128 * 128;  // q, k, v, o: 16,384 elements
constexpr std::int64_t kMlp = 128 * 256;   // gate, up, down: 32,768 elements
// nf4-dq: n/2 + n/64 + 4 ceil(n/64/256) + 4 bytes.
constexpr std::int64_t kAttnPacked = 8192 + 256 + 4 + 4;    // 8,456
constexpr std::int64_t kMlpPacked = 16384 + 512 + 8 + 4;    // 16,908
constexpr std::int64_t kBlockPacked = 4 * kAttnPacked + 3 * kMlpPacked;  // 84,548
// The first block's adapters in bf16: A (8 x in) and B (out x 8), 2,048 B per 128-wide side,
// 4,096 per 256-wide one; its two RMSNorm weights, 256 B each.
constexpr std::int64_t kBlockAdapters = 4 * (2048 + 2048) + 3 * (2048 + 4096);  // 34,816
constexpr std::int64_t kBlockNorms = 2 * 256;
// Outside the blocks: the embedding and the head (512 x 128 in bf16) and the final norm.
constexpr std::int64_t kOuter = 2 * 512 * 128 * 2 + 256;  // 262,400

scenario::Scenario tiny_qlora(bool cloned) {
  models::TransformerConfig c;  // as models/presets.cpp's llama()
  c.name = "tiny-llama";
  c.layers = 2;
  c.hidden = 128;
  c.heads = 2;
  c.ffn = 256;
  c.vocab = 512;
  c.max_positions = 512;
  c.mlp = models::kinds::MlpActivation::swiglu;
  c.norm = models::NormKind::rmsnorm;
  c.bias = false;
  c.tied_embeddings = false;
  c.learned_positions = false;
  c.dropout = false;
  models::BuildOptions o;
  o.seq_len = 64;
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.seq_len = 64;
  t.precision = scenario::Precision::bf16_true;
  t.optimizer = scenario::Optimizer::adamw;
  if (cloned) t.model_init = scenario::TrainingSpec::ModelInit::cloned_layer;
  scenario::LoraSpec l;
  l.rank = 8;
  l.targets.fill(true);
  l.base = scenario::BaseWeights::nf4_dq;
  l.quantize_on_load = scenario::QuantizeOnLoad::whole;
  t.lora = l;
  return make_scenario(models::build_transformer(c, o), ideal_device(1LL << 40), t);
}

// The signed bytes of each effect: + allocated, - freed.
std::vector<std::int64_t> signed_bytes(const parallel::Program& P) {
  std::vector<std::int64_t> out;
  for (const auto& l : P.load) out.push_back(l.alloc ? l.effect.bytes.value : -l.effect.bytes.value);
  return out;
}

}  // namespace

TEST_CASE("quantize_on_load with a cloned block: the first block's q_proj, built and quantized",
          "[finetune][model_init]") {
  const auto plan = parallel::lower(tiny_qlora(true));
  const auto b = signed_bytes(plan.programs.at(0));
  const std::int64_t n = kAttn;
  // nn.Linear's bf16 weight, to_nf4's two abs(), the scaled blocks, the n x 16 differences and
  // their abs(), min's values and int64 indices, the shift and the or, the packed weight, the
  // frees, then the LoRALinear's adapters A and B.
  const std::vector<std::int64_t> q = {
      2 * n, 2 * n, -2 * n, 2 * n, -2 * n, 2 * n, 32 * n, 32 * n, -32 * n, 2 * n, 8 * n,
      -32 * n, -2 * n, 4 * n, 4 * n, -4 * n, kAttnPacked, -4 * n, -8 * n, -2 * n, -2 * n, 2048, 2048};
  REQUIRE(b.size() > q.size());
  CHECK(std::vector<std::int64_t>(b.begin(), b.begin() + q.size()) == q);
}

TEST_CASE("quantize_on_load with a cloned block: build, copies, drop and load, in bytes",
          "[finetune][model_init]") {
  const auto plan = parallel::lower(tiny_qlora(true));
  const auto& P = plan.programs.at(0);
  const auto b = signed_bytes(P);
  // The first block: 7 weights x 21 effects (as the q_proj above), 14 adapters, 2 norms; the
  // 3 tensors outside the blocks; 14 copies x 43 (the dequantization's 21, to_nf4's 19, the
  // dequantized weight freed, the model's packed data copied in, the clone's freed); the first
  // block's 23 tensors freed; 14 weights loaded x 22 (to_nf4 of the checkpoint's weight: 21,
  // and the packed data it replaces freed).
  REQUIRE(b.size() == 7 * 21 + 14 + 2 + 3 + 14 * 43 + 23 + 14 * 22);  // 1,099
  // After the first block: embedding, final norm, head, in the model's layer order.
  const std::size_t outer = 7 * 21 + 14 + 2;
  CHECK(b[outer] == 512 * 128 * 2);
  CHECK(b[outer + 1] == 256);
  CHECK(b[outer + 2] == 512 * 128 * 2);
  // The first copy's q_proj: get_original_weight's shifted and masked halves (n/2 uint8) widened
  // to int64 (4 n), the two table look-ups (n bf16 bytes each), the repeated scalers and the
  // scaled halves, the stacked bf16 weight, its locals freed; then to_nf4 as above with the
  // clone's packed data, the dequantized weight freed, the model's packed data, the clone's freed.
  const std::int64_t n = kAttn;
  const std::vector<std::int64_t> copy = {
      n / 2, 4 * n, -n / 2, n / 2, 4 * n, -n / 2, n, n, n, n, -n, n, n, -n, 2 * n,
      -4 * n, -4 * n, -n, -n, -n, -n,
      2 * n, -2 * n, 2 * n, -2 * n, 2 * n, 32 * n, 32 * n, -32 * n, 2 * n, 8 * n,
      -32 * n, -2 * n, 4 * n, 4 * n, -4 * n, kAttnPacked, -4 * n, -8 * n, -2 * n,
      -2 * n, kAttnPacked, -kAttnPacked};
  const std::size_t copies = outer + 3;
  CHECK(std::vector<std::int64_t>(b.begin() + copies, b.begin() + copies + copy.size()) == copy);
  // The first block freed after the copies, in the order it was built.
  const std::size_t drop = copies + 14 * 43;
  CHECK(b[drop] == -kAttnPacked);
  CHECK(b[drop + 1] == -2048);
  std::int64_t live = 0, most = 0;
  for (const std::int64_t x : b) most = std::max(most, live += x);
  // What stays: every packed weight (2 blocks) and the tensors outside the blocks.
  CHECK(live == 2 * kBlockPacked + kOuter);  // 431,496
  // The most: the last copy's MLP weight in to_nf4 (68 n), beside the other copies' packed
  // weights, the whole first block and the tensors outside the blocks: 2,762,688 B, above the
  // load's (every packed weight, the outer tensors and 68 n: 2,659,720).
  CHECK(most == 2 * kBlockPacked - kMlpPacked + kBlockPacked + kBlockAdapters + kBlockNorms + kOuter +
                    68 * kMlp);
}

TEST_CASE("quantize_on_load: load_state_dict's packed data replaces the built one", "[finetune]") {
  for (const bool cloned : {false, true}) {
    const auto plan = parallel::lower(tiny_qlora(cloned));
    const auto& P = plan.programs.at(0);
    // The last weight loaded: to_nf4's packed data allocated (the model's from now on), its
    // intermediates and the checkpoint's weight freed, then the packed data built before.
    const auto& last = P.load.back();
    CHECK_FALSE(last.alloc);
    CHECK(last.effect.category == hw::MemCategory::weights);
    CHECK(last.effect.bytes.value == kMlpPacked);
    const auto& adopted = P.load[P.load.size() - 6];
    CHECK(adopted.alloc);
    CHECK(adopted.effect.category == hw::MemCategory::weights);
    CHECK(adopted.effect.bytes.value == kMlpPacked);
    CHECK(adopted.effect.layer != last.effect.layer);
    // The state buffers leave out what the load keeps: without the cloned block the packed
    // weights only (the tensors outside the blocks stay in the flat buffer), with it those too.
    std::int64_t booked = 0;
    for (const auto& e : exec::AllocatorModel::state_buffers(P)) booked += e.bytes.value;
    const std::int64_t kept = 2 * kBlockPacked + (cloned ? kOuter : 0);
    CHECK(booked + kept == P.persistent.total().value - P.persistent[hw::MemCategory::reserved].value);
  }
}

namespace {

scenario::Scenario qlora_7b(bool cloned) {
  auto s = tiny_qlora(cloned);
  models::BuildOptions o;
  o.seq_len = 64;
  s.model = models::build_preset(*models::find_preset("llama2-7b"), o);
  return s;
}

// The states' flat buffers, then the load, through the allocator model: its reserved bytes after.
std::int64_t reserved_after_load(const parallel::Program& P) {
  exec::AllocatorModel a(P);
  for (const auto& e : exec::AllocatorModel::state_buffers(P)) a.allocate(e, -1);
  a.play_load(P);
  return a.allocator().reserved();
}

}  // namespace

TEST_CASE("quantize_on_load with a cloned block: Llama-2-7B's build leaves more reserved",
          "[finetune][model_init]") {
  const auto with = parallel::lower(qlora_7b(true));
  const auto without = parallel::lower(qlora_7b(false));
  const std::int64_t r_with = reserved_after_load(with.programs.at(0));
  const std::int64_t r_without = reserved_after_load(without.programs.at(0));
  // The same tensors stay (the model's states, with the packed weights, embedding and head
  // booked by the load instead of the flat buffer) ...
  CHECK(with.programs.at(0).persistent.total() == without.programs.at(0).persistent.total());
  // ... but the embedding and head (2 x 262,144,000 B) and the first block (its packed weights
  // 104,399,132 B, adapters and norms) are carved from the first block's to_nf4 segments before
  // the copies quantize: the copies' 1.44 GB n x 16 tensors no longer fit what is left.
  CHECK(r_with > r_without);
  UNSCOPED_INFO("reserved after the load: " << r_with << " B with the cloned block, " << r_without << " without");
  // The copies' transient bytes are the build's without the clone (the dequantization's 14 n is
  // below to_nf4's 68 n): what is added is at most the tensors now live beside them and one more
  // set of segments for an MLP weight's to_nf4.
  CHECK(r_with - r_without < 2 * 262'144'000 + 104'399'132 + 68 * 4096LL * 11008);
}
