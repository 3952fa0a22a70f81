// Fine-tuning (training.lora) against exact counts and hand-computed bytes: trainable parameters
// as PEFT's print_trainable_parameters prints them, model states of frozen and trained
// parameters, quantized base weights (bitsandbytes NF4 / double quantization / LLM.int8), and
// the backward that stops below the lowest adapter.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "models/presets.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/parallel/shard.hpp"
#include "sim/scenario/finetune.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using hw::MemCategory;
using models::LinearRole;

namespace {

models::Model preset(const char* name, std::int64_t seq_len = 512) {
  models::BuildOptions o;
  o.seq_len = seq_len;
  return models::build_preset(*models::find_preset(name), o);
}

scenario::LoraSpec lora(std::int64_t rank, std::initializer_list<LinearRole> roles,
                        scenario::BaseWeights base = scenario::BaseWeights::precision) {
  scenario::LoraSpec l;
  l.rank = rank;
  for (auto r : roles) l.targets[static_cast<std::size_t>(r)] = true;
  l.base = base;
  return l;
}

scenario::LoraSpec all_linear(std::int64_t rank) {
  scenario::LoraSpec l;
  l.rank = rank;
  l.targets.fill(true);
  return l;
}

scenario::TrainingSpec mixed_adamw() {
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.gradient_accumulation = 1;
  t.seq_len = 512;
  t.precision = scenario::Precision::bf16;
  t.optimizer = scenario::Optimizer::adamw;
  return t;
}

}  // namespace

TEST_CASE("trainable parameters equal PEFT's print_trainable_parameters", "[finetune]") {
  // Llama-2-7B, r=8 on q_proj and v_proj: 32 blocks x 2 x 8 x (4096 + 4096) = 4,194,304
  // (the figure PEFT prints for this config: "trainable params: 4,194,304").
  const auto l2 = preset("llama2-7b");
  CHECK(scenario::trainable_parameters(l2, lora(8, {LinearRole::q, LinearRole::v})) == 4'194'304);
  // Llama-3-8B, r=16 on every linear of the blocks (h 4096, kv width 1024, ffn 14336):
  // per block 16 x [2 x (4096 + 4096) + 2 x (4096 + 1024) + 3 x (4096 + 14336)] = 1,310,720;
  // x 32 = 41,943,040.
  const auto l3 = preset("llama3-8b");
  CHECK(scenario::trainable_parameters(l3, all_linear(16)) == 41'943'040);
  // Without LoRA every parameter is trained.
  CHECK(scenario::trainable_parameters(l2, std::nullopt) == l2.parameters());
}

TEST_CASE("quantized base weights take the bytes bitsandbytes stores", "[finetune]") {
  using scenario::BaseWeights;
  // 4096 x 4096 = 16,777,216 weights; 262,144 blocks of 64; 1,024 groups of 256 blocks.
  // nf4:    8,388,608 codes + 4 x 262,144 absmax             = 9,437,184 (0.5625 B/weight)
  // nf4-dq: 8,388,608 + 262,144 8-bit absmax + 4 x 1,024 + 4 = 8,654,852 (0.5159 B/weight)
  // int8:   16,777,216 + 4 x 4,096 row scales                = 16,793,600
  CHECK(scenario::base_weight_bytes(BaseWeights::nf4, 4096, 4096, 2).value == 9'437'184);
  CHECK(scenario::base_weight_bytes(BaseWeights::nf4_dq, 4096, 4096, 2).value == 8'654'852);
  CHECK(scenario::base_weight_bytes(BaseWeights::int8, 4096, 4096, 2).value == 16'793'600);
  CHECK(scenario::base_weight_bytes(BaseWeights::bf16, 4096, 4096, 4).value == 33'554'432);
  CHECK(scenario::base_weight_bytes(BaseWeights::precision, 4096, 4096, 4).value == 67'108'864);
}

TEST_CASE("LoRA: frozen parameters hold weights only, adapters all three states", "[finetune]") {
  auto t = mixed_adamw();
  t.lora = lora(8, {LinearRole::q, LinearRole::v});
  const auto s = make_scenario(preset("llama2-7b"), ideal_device(1LL << 40), t);
  const auto plan = parallel::lower(s);
  const auto& P = plan.programs.at(0);
  // 6,738,415,616 parameters at 2 B (the base, bf16) + 4,194,304 adapters at 2 B;
  // gradients 2 B and Adam states with the fp32 master 12 B for the adapters only.
  CHECK(P.model_states[MemCategory::weights].value == (6'738'415'616LL + 4'194'304) * 2);
  CHECK(P.model_states[MemCategory::gradients].value == 4'194'304LL * 2);
  CHECK(P.model_states[MemCategory::optimizer_states].value == 4'194'304LL * 12);
  CHECK(P.parameters == 6'738'415'616LL + 4'194'304);
}

TEST_CASE("QLoRA: NF4 linear weights, 16-bit embedding, norms and head", "[finetune]") {
  auto t = mixed_adamw();
  t.lora = lora(8, {LinearRole::q, LinearRole::v}, scenario::BaseWeights::nf4);
  const auto s = make_scenario(preset("llama2-7b"), ideal_device(1LL << 40), t);
  const auto plan = parallel::lower(s);
  // Per block: q, k, v, o 4096 x 4096 at 9,437,184 B each; gate, up, down 4096 x 11008:
  // 22,544,384 codes + 4 x 704,512 absmax = 25,362,432 B each.
  // 32 x (4 x 9,437,184 + 3 x 25,362,432) = 3,642,753,024.
  // 16-bit: embedding and head 2 x 32000 x 4096 + norms 65 x 4096 = 262,410,240 params x 2 B.
  // Adapters 4,194,304 x 2 B.
  CHECK(plan.programs.at(0).model_states[MemCategory::weights].value ==
        3'642'753'024LL + 262'410'240LL * 2 + 4'194'304LL * 2);
}

TEST_CASE("LoRA: backward stops below the first adapter; frozen GEMMs compute input gradients only",
          "[finetune]") {
  auto t = mixed_adamw();
  t.lora = lora(8, {LinearRole::q, LinearRole::v});
  auto s = make_scenario(preset("llama2-7b"), ideal_device(1LL << 40), t);
  const auto full = parallel::shard_layers(s.model, 1, false, 1);
  auto shards = full;
  parallel::apply_training(s, 1, shards);
  const auto& m = s.model;
  std::size_t attn = 0, mlp = 0;
  while (m.graph[m.order[attn]].kind != models::LayerKind::attention) ++attn;
  while (m.graph[m.order[mlp]].kind != models::LayerKind::mlp) ++mlp;
  // Below the first attention (the embedding, the first norm): no gradient, nothing saved.
  for (std::size_t i = 0; i < attn; ++i) {
    CHECK_FALSE(shards[i].grad_out);
    CHECK(shards[i].saved.value == 0);
    CHECK(shards[i].backward_factor == 0);
  }
  CHECK(shards[attn].grad_out);
  // A frozen MLP (no adapters): backward = forward (dX only), saved tensors as in full training.
  CHECK(shards[mlp].backward_factor == Approx(1.0));
  CHECK(shards[mlp].saved == full[mlp].saved);
  CHECK(shards[mlp].trainable == 0);
  // The attention with q and v adapters: s = 512, r = 8, h = 4096.
  // adapter forward = 2 x 512 x 8 x (4096 + 4096) per adapter, x 2 = 134,217,728 FLOPs;
  // backward = (F - core) + 2 core + 2 x adapters; saved += 2 x 2 B x 512 x 8 (rank-r outputs).
  const double F = full[attn].flops, core = full[attn].core_flops, A = 134'217'728.0;
  CHECK(shards[attn].flops == Approx(F + A));
  CHECK(shards[attn].flops * shards[attn].backward_factor == Approx(F + core + 2 * A));
  CHECK(shards[attn].saved.value == full[attn].saved.value + 2 * 2 * 512 * 8);
  // Dropout > 0: each adapter's dropout output (2 B) and mask (1 B) of the 4096-wide input too.
  s.training.lora->dropout = 0.05;
  auto dropped = full;
  parallel::apply_training(s, 1, dropped);
  CHECK(dropped[attn].saved.value == shards[attn].saved.value + 2 * 3 * 512 * 4096);
}

TEST_CASE("QLoRA: each quantized layer dequantizes its largest linear weight per pass",
          "[finetune]") {
  auto t = mixed_adamw();
  t.lora = lora(8, {LinearRole::q, LinearRole::v}, scenario::BaseWeights::nf4_dq);
  const auto s = make_scenario(preset("llama2-7b"), ideal_device(1LL << 40), t);
  const auto plan = parallel::lower(s);
  // Llama-2-7B's MLP: 4096 x 11008 weights in bf16 = 90,177,536 B, booked and freed by each
  // forward and backward of the layer; 32 blocks x (forward + backward) = 64 in the MLPs.
  int mlp_dequant = 0;
  for (const auto& op : plan.programs.at(0).ops)
    for (auto k = op.alloc_begin; k < op.alloc_end; ++k) {
      const auto& e = plan.programs.at(0).effects[k];
      if ((e.tensor == parallel::TensorKind::dequantized ||
           e.tensor == parallel::TensorKind::dequantized_backward) &&
          e.bytes.value == 90'177'536)
        ++mlp_dequant;
    }
  CHECK(mlp_dequant == 64);
}

TEST_CASE("no training.lora trains everything as before", "[finetune]") {
  const auto t = mixed_adamw();
  const auto s = make_scenario(preset("llama2-7b"), ideal_device(1LL << 40), t);
  const auto plan = parallel::lower(s);  // kept: P refers into it
  const auto& P = plan.programs.at(0);
  const std::int64_t n = 6'738'415'616LL;
  CHECK(P.model_states[MemCategory::weights].value == n * 2);
  CHECK(P.model_states[MemCategory::gradients].value == n * 2);
  CHECK(P.model_states[MemCategory::optimizer_states].value == n * 12);
}
