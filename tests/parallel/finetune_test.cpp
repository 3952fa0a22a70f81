// Fine-tuning (training.lora) against exact counts and hand-computed bytes: trainable parameters
// as PEFT's print_trainable_parameters prints them, model states of frozen and trained
// parameters, quantized base weights (bitsandbytes NF4 / double quantization / LLM.int8), and
// the backward that stops below the lowest adapter.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "models/builders.hpp"
#include "sim/exec/player.hpp"
#include "models/presets.hpp"
#include "sim/parallel/eager_modules.hpp"
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

TEST_CASE("QLoRA: each pass writes the NF4 weights in bf16 and its GEMMs read them back", "[finetune]") {
  // Llama-2-7B attention: q, k, v, o 4096 x 4096 each; MLP: gate, up, down 4096 x 11008.
  // Per pass, per linear: 2 x in x out x 2 B (the dequantized weight written, then read by the
  // GEMM); bitsandbytes launches dequantize_4bit once per weight, and under double
  // quantization dequantize_blockwise for the absmax first.
  auto t = mixed_adamw();
  const auto m = preset("llama2-7b");
  std::size_t attn = 0, mlp = 0;
  while (m.graph[m.order[attn]].kind != models::LayerKind::attention) ++attn;
  while (m.graph[m.order[mlp]].kind != models::LayerKind::mlp) ++mlp;
  for (auto base : {scenario::BaseWeights::nf4, scenario::BaseWeights::nf4_dq}) {
    t.lora = lora(8, {LinearRole::q, LinearRole::v}, base);
    auto s = make_scenario(m, ideal_device(1LL << 40), t);
    auto shards = parallel::shard_layers(s.model, 1, false, 1);
    parallel::apply_training(s, 1, shards);
    const int per_weight = base == scenario::BaseWeights::nf4_dq ? 2 : 1;
    CHECK(shards[attn].dequant_traffic.value == 4 * 2 * 4096LL * 4096 * 2);  // 268,435,456
    CHECK(shards[mlp].dequant_traffic.value == 3 * 2 * 4096LL * 11008 * 2);  // 541,065,216
    CHECK(shards[attn].dequant_launches == 4 * per_weight);
    CHECK(shards[mlp].dequant_launches == 3 * per_weight);
  }
  // A 16-bit base is read as stored: nothing to dequantize.
  t.lora = lora(8, {LinearRole::q, LinearRole::v});
  auto s = make_scenario(m, ideal_device(1LL << 40), t);
  auto shards = parallel::shard_layers(s.model, 1, false, 1);
  parallel::apply_training(s, 1, shards);
  CHECK(shards[attn].dequant_traffic.value == 0);
  CHECK(shards[mlp].dequant_launches == 0);

  // In the played plan, with full recomputation: the MLP's forward, its replay and its backward
  // each move the dequantized weights, beside the difference of the weights as stored.
  t.recompute = scenario::Recompute::full;
  auto mlp_bytes = [&](scenario::BaseWeights base) {
    t.lora = lora(8, {LinearRole::q, LinearRole::v}, base);
    const auto plan = parallel::lower(make_scenario(m, ideal_device(1LL << 40), t));
    std::array<std::int64_t, 3> bytes{};  // forward, backward, recompute (the block's replay)
    for (const auto& op : plan.programs.at(0).ops) {
      if (op.microbatch != 0) continue;
      if (op.layer == static_cast<std::int32_t>(mlp) && op.kind == parallel::OpKind::forward) bytes[0] = op.work.bytes.value;
      if (op.layer == static_cast<std::int32_t>(mlp) && op.kind == parallel::OpKind::backward) bytes[1] = op.work.bytes.value;
      if (op.kind == parallel::OpKind::recompute && op.layer >= static_cast<std::int32_t>(mlp) && bytes[2] == 0)
        bytes[2] = op.work.bytes.value;
    }
    return bytes;
  };
  const auto b16 = mlp_bytes(scenario::BaseWeights::precision);
  const auto b4 = mlp_bytes(scenario::BaseWeights::nf4);
  // Stored: 3 x 25,362,432 B of NF4 for 3 x 4096 x 11008 x 2 B of bf16.
  const std::int64_t stored = 3 * 25'362'432LL - 3 * 4096LL * 11008 * 2;
  CHECK(b4[0] - b16[0] == stored + 541'065'216);
  CHECK(b4[1] - b16[1] == stored + 541'065'216);
  // The first block's replay holds its attention's and MLP's dequantization (the replay reads
  // activations only, not the stored weights).
  CHECK(b4[2] - b16[2] == 268'435'456 + 541'065'216);
}

TEST_CASE("LoRA: backward stops below the first adapter, frozen GEMMs compute input gradients only",
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
  // A frozen MLP (no adapters): backward = forward (dX only); its GEMMs keep no input (the
  // frozen weights need no gradient): less 2 B x 512 x 4096 (gate/up input) and 2 B x 512 x
  // 11008 (down input).
  CHECK(shards[mlp].backward_factor == Approx(1.0));
  CHECK(shards[mlp].saved.value == full[mlp].saved.value - 2 * 512 * 4096 - 2 * 512 * 11008);
  CHECK(shards[mlp].trainable == 0);
  // The attention with q and v adapters: s = 512, r = 8, h = 4096.
  // adapter forward = 2 x 512 x 8 x (4096 + 4096) per adapter, x 2 = 134,217,728 FLOPs;
  // backward = (F - core) + 2 core + 2 x adapters; saved += 2 x 2 B x 512 x 8 (rank-r outputs);
  // lora_A (no dropout) keeps the q/v input the frozen linears do not; the standard core's
  // attn x V product, the frozen o_proj's input, is kept by nothing: less 2 B x 512 x 4096.
  const double F = full[attn].flops, core = full[attn].core_flops, A = 134'217'728.0;
  CHECK(shards[attn].flops == Approx(F + A));
  CHECK(shards[attn].flops * shards[attn].backward_factor == Approx(F + core + 2 * A));
  CHECK(shards[attn].saved.value == full[attn].saved.value + 2 * 2 * 512 * 8 - 2 * 512 * 4096);
  // Dropout > 0: each adapter's dropout output (2 B) and mask (1 B) of the 4096-wide input, and
  // then nothing keeps the input itself (2 B x 512 x 4096).
  s.training.lora->dropout = 0.05;
  auto dropped = full;
  parallel::apply_training(s, 1, dropped);
  CHECK(dropped[attn].saved.value ==
        shards[attn].saved.value + 2 * 3 * 512 * 4096 - 2 * 512 * 4096);
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

namespace {

// tiny_llama_config (tests/support/fixtures.hpp) with `layers` blocks and `kv_heads`
// key/value heads (0: multi-head), 16 tokens, flash attention, bf16 activations.
models::Model tiny_llama(int layers = 2, std::int64_t kv_heads = 0) {
  models::TransformerConfig c = tiny_llama_config();
  c.name = "tiny-llama";
  c.layers = layers;
  c.kv_heads = kv_heads;
  return models::build_transformer(c, {16, models::DType::bf16, true});
}

struct TinySaved {
  std::vector<std::int64_t> attn, mlp, norm;
  std::int64_t loss = 0;
};

// Saved bytes per sample of each attention, MLP and RMSNorm (in order) and of the loss after
// apply_training.
TinySaved tiny_saved(const scenario::TrainingSpec& t, std::int64_t kv_heads = 0) {
  const auto s = make_scenario(tiny_llama(2, kv_heads), ideal_device(1LL << 40), t);
  auto shards = parallel::shard_layers(s.model, 1, false, 1);
  parallel::apply_modules(s, 1, false, shards);
  parallel::apply_training(s, 1, shards);
  TinySaved out;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    switch (s.model.graph[s.model.order[i]].kind) {
      case models::LayerKind::attention: out.attn.push_back(shards[i].saved.value); break;
      case models::LayerKind::mlp: out.mlp.push_back(shards[i].saved.value); break;
      case models::LayerKind::rmsnorm: out.norm.push_back(shards[i].saved.value); break;
      case models::LayerKind::loss: out.loss = shards[i].saved.value; break;
      default: break;
    }
  }
  return out;
}

scenario::TrainingSpec tiny_training(std::initializer_list<LinearRole> roles, double dropout,
                                     scenario::BaseWeights base = scenario::BaseWeights::precision) {
  auto t = mixed_adamw();
  t.seq_len = 16;
  t.precision = scenario::Precision::bf16_true;
  t.lora = lora(4, roles, base);
  t.lora->dropout = dropout;
  return t;
}

}  // namespace

// The tiny model's formulas per sample (e = 2, s = 16, h = 64, f = 128, a = 4, V = 100):
//   attention: QKV input e*s*h 2,048 + Q, K, V 6,144 + projection input 2,048 + 4*a*s LSE 256
//   MLP:       input e*s*h 2,048 + gate and up outputs 8,192 + down input e*s*f 4,096
//   loss:      head input e*s*h 2,048 + fp32 logits 4*s*V 6,400
TEST_CASE("LoRA: a frozen linear keeps no input, lora_A without dropout keeps it", "[finetune]") {
  // q targeted, no dropout: lora_A reads the QKV input itself, so it stays; the flash kernel
  // keeps its output (the projection's input). Adapter: e*s*r = 2 x 16 x 4 = 128.
  auto r = tiny_saved(tiny_training({LinearRole::q}, 0));
  CHECK(r.attn == std::vector<std::int64_t>{10'496 + 128, 10'496 + 128});
  // Frozen MLPs keep gate's and up's outputs only: 14,336 - 2,048 - 4,096.
  CHECK(r.mlp == std::vector<std::int64_t>{8'192, 8'192});
  // The LM head is frozen: its input goes, the fp32 logits stay.
  CHECK(r.loss == 6'400);
  // Dropout: lora_A keeps the dropout's output (2 B) and its mask (1 B), 3 x 16 x 64 = 3,072,
  // and nothing keeps the QKV input (2,048).
  r = tiny_saved(tiny_training({LinearRole::q}, 0.05));
  CHECK(r.attn == std::vector<std::int64_t>{10'496 - 2'048 + 128 + 3'072, 10'496 - 2'048 + 128 + 3'072});
  // q and v: one dropout each (PEFT), or one for the fused QKV (LitGPT's LoRAQKVLinear), whose
  // zero_pad keeps index_copy's source, the q and v deltas: 2 x (2 x 16 x 64) = 4,096.
  auto t = tiny_training({LinearRole::q, LinearRole::v}, 0.05);
  r = tiny_saved(t);
  CHECK(r.attn[1] == 10'496 - 2'048 + 2 * (128 + 3'072));
  t.lora->layout = scenario::LoraLayout::fused_qkv;
  r = tiny_saved(t);
  // LitGPT's attention also keeps its whole fused qkv output through SDPA's saved v, a view of
  // it (multi-head): the q and k parts beyond the V booked, e*s*(64 + 64) = 4,096.
  CHECK(r.attn[1] == 10'496 - 2'048 + 2 * 128 + 3'072 + 4'096 + 4'096);
  // q, k and v all enabled: zero_pad returns the delta, nothing to scatter.
  t.lora = lora(4, {LinearRole::q, LinearRole::k, LinearRole::v});
  t.lora->dropout = 0.05;
  t.lora->layout = scenario::LoraLayout::fused_qkv;
  r = tiny_saved(t);
  CHECK(r.attn[1] == 10'496 - 2'048 + 3 * 128 + 3'072 + 4'096);
}

TEST_CASE("LitGPT's fused qkv: v's view keeps the fused output (MHA), GQA's k and v are copied "
          "at every head's width", "[finetune]") {
  // q, k and v adapted without dropout, so the two layouts keep the same adapter tensors (no
  // dropout output, and zero_pad has nothing to scatter): PEFT's layout is the reference.
  auto t = tiny_training({LinearRole::q, LinearRole::k, LinearRole::v}, 0);
  const auto separate = tiny_saved(t);
  t.lora->layout = scenario::LoraLayout::fused_qkv;
  // Multi-head (4 groups of 4 heads' worth): + e*s*(q 64 + k 64) = 4,096.
  CHECK(tiny_saved(t).attn[1] - separate.attn[1] == 4'096);
  // Two key/value heads of 16: k and v are expanded to the 4 heads and copied, so SDPA keeps
  // them 64 wide instead of 32: + 2 x e*s*(64 - 32) = 2,048 (the fused output is not kept).
  t.lora->layout = scenario::LoraLayout::separate;
  const auto gqa_separate = tiny_saved(t, 2);
  t.lora->layout = scenario::LoraLayout::fused_qkv;
  CHECK(tiny_saved(t, 2).attn[1] - gqa_separate.attn[1] == 2'048);
}

TEST_CASE("QLoRA: bitsandbytes' MatMul4Bit keeps its input, torchao's NF4 keeps none", "[finetune]") {
  auto t = tiny_training({LinearRole::q}, 0.05, scenario::BaseWeights::nf4);
  CHECK(t.lora->quantizer == scenario::Quantizer::bitsandbytes);  // the default
  // torchao: as a bf16 frozen base.
  t.lora->quantizer = scenario::Quantizer::torchao;
  auto r = tiny_saved(t);
  CHECK(r.attn[1] == 10'496 - 2'048 + 128 + 3'072);
  CHECK(r.mlp[1] == 8'192);
  t.lora->quantizer = scenario::Quantizer::bitsandbytes;
  r = tiny_saved(t);
  // Block 1: ctx.tensors = (A, B) since A needs a gradient: the QKV input, the projection's
  // (the flash output already kept), the MLP's input and down's input all stay.
  CHECK(r.attn[1] == 10'496 + 128 + 3'072);
  CHECK(r.mlp == std::vector<std::int64_t>{14'336, 14'336});
  // Block 0's attention reads the embedding's frozen output: no gradient, so no A is kept.
  CHECK(r.attn[0] == 10'496 - 2'048 + 128 + 3'072);
  // The head stays 16-bit (not quantized): its input goes.
  CHECK(r.loss == 6'400);
  // LLM.int8 (MatMul8bitLt): A and its int8 transpose CAt (1 B x s x in) per linear:
  // attention q, k, v, o 4 x 16 x 64; MLP gate, up 2 x 16 x 64 and down 16 x 128.
  t.lora->base = scenario::BaseWeights::int8;
  r = tiny_saved(t);
  CHECK(r.attn[1] == 10'496 + 128 + 3'072 + 4'096);
  CHECK(r.mlp[1] == 14'336 + 4'096);
  CHECK(r.attn[0] == 10'496 - 2'048 + 128 + 3'072 + 1'024);  // o's CAt only
}

TEST_CASE("LoRA with eager modules: frozen norm weights and projections keep less", "[finetune]") {
  auto t = tiny_training({LinearRole::q}, 0);
  t.eager_modules = true;
  // Eager RMSNorm (x.float() ... weight * x_normed.to(dtype)): the frozen weight's product keeps
  // nothing; the fp32 upcast 4 x 16 x 64 = 4,096 stays (the first norm, below the adapters,
  // keeps nothing at all). The attention output's contiguous copy (2,048) is the frozen
  // projection's input alone; SiLU's output (e*s*f 4,096) stays.
  auto r = tiny_saved(t);
  CHECK(r.norm == std::vector<std::int64_t>{0, 4'096, 4'096, 4'096, 4'096});
  CHECK(r.attn[1] == 10'496 + 128);
  CHECK(r.mlp[1] == 8'192 + 4'096);
  // LitGPT's RMSNorm in the input dtype: x * x keeps x (the formula's 2,048), no upcast.
  t.norm_upcast = false;
  r = tiny_saved(t);
  CHECK(r.norm == std::vector<std::int64_t>{0, 2'048, 2'048, 2'048, 2'048});
}

TEST_CASE("LoRA under full recomputation: only the recomputed block's saved tensors matter",
          "[finetune]") {
  // Dropout 0.05 instead of 0 on q changes each attention's saved bytes by +3,072 - 2,048 =
  // +1,024 per sample (its output and mask kept, the QKV input no longer). Without
  // recomputation every block's attention is alive at the peak: 4 blocks x 1,024 x 2 samples.
  // Under full recomputation only the block being recomputed holds its saved tensors.
  const auto peak = [](scenario::Recompute rc, double dropout) {
    auto t = tiny_training({LinearRole::q}, dropout);
    t.micro_batch = 2;
    t.recompute = rc;
    const auto s = make_scenario(tiny_llama(4), ideal_device(1LL << 40), t);
    return exec::play(parallel::lower(s)).devices[0].at_peak[MemCategory::activations].value;
  };
  CHECK(peak(scenario::Recompute::none, 0.05) - peak(scenario::Recompute::none, 0) == 4 * 1'024 * 2);
  CHECK(peak(scenario::Recompute::full, 0.05) - peak(scenario::Recompute::full, 0) == 1'024 * 2);
}
