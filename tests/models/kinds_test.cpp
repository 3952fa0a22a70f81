// Oracle tests for the layer kinds: Korthikanti et al. 2022 activation bytes, FLOPs closed
// forms, and hand-computed sizes for the image kinds.
#include <catch2/catch.hpp>

#include "models/builders.hpp"
#include "models/kinds.hpp"
#include "models/presets.hpp"

using namespace trainsim;
using namespace trainsim::models;

namespace {

struct BlockBytes {
  std::int64_t saved = 0, split = 0, core = 0;
};

BlockBytes block_bytes(const Model& m, int block) {
  BlockBytes b;
  for (auto v : boost::make_iterator_range(boost::vertices(m.graph))) {
    const Layer& l = m.graph[v];
    if (l.block != block) continue;
    b.saved += l.saved.value;
    b.split += l.saved_split.value;
    b.core += l.saved_attention_core.value;
  }
  return b;
}

TransformerConfig gpt3_175b() {
  return std::get<TransformerConfig>(find_preset("gpt3")->config);
}

}  // namespace

TEST_CASE("a GPT-3 175B block saves 34sh + 5as^2 bytes per sample at 16 bits", "[kinds][oracle]") {
  // Korthikanti et al. 2022, eq. (1) per sample (b = 1): s=2048, h=12288, a=96.
  const std::int64_t s = 2048, h = 12288, a = 96;
  const Model m = build_transformer(gpt3_175b(), {s, DType::bf16, false});
  const BlockBytes b = block_bytes(m, 17);
  CHECK(34 * s * h + 5 * a * s * s == 2'868'903'936);
  CHECK(b.saved == 2'868'903'936);
  CHECK(b.core == 5 * a * s * s);  // what selective recomputation drops

  SECTION("its parts: attention 11sh + 5as^2, MLP 19sh, each LayerNorm 2sh, adds nothing") {
    const Layer& attn = m.graph[*find_layer(m, "block.17.attn")];
    const Layer& mlp = m.graph[*find_layer(m, "block.17.mlp")];
    CHECK(attn.saved.value == 11 * s * h + 5 * a * s * s);
    CHECK(attn.saved_split.value == 8 * s * h + 5 * a * s * s);
    CHECK(mlp.saved.value == 19 * s * h);
    CHECK(mlp.saved_split.value == 16 * s * h);
    CHECK(m.graph[*find_layer(m, "block.17.ln1")].saved.value == 2 * s * h);
    CHECK(m.graph[*find_layer(m, "block.17.add1")].saved.value == 0);
  }
}

TEST_CASE(
    "under tensor parallelism t without sequence parallelism a block keeps "
    "10sh + 24sh/t + 5as^2/t",
    "[kinds][oracle]") {
  const std::int64_t s = 2048, h = 12288, a = 96;
  const Model m = build_transformer(gpt3_175b(), {s, DType::bf16, false});
  const BlockBytes b = block_bytes(m, 0);
  for (std::int64_t t : {1, 2, 4, 8}) {
    INFO("t = " << t);
    const std::int64_t per_rank = (b.saved - b.split) + b.split / t;
    CHECK(per_rank == 10 * s * h + 24 * s * h / t + 5 * a * s * s / t);
  }
}

TEST_CASE("flash attention keeps no s^2 term: QKV input, Q, K, V, output and log-sum-exp",
          "[kinds]") {
  const std::int64_t h = 1024, a = 16;
  auto flash = [&](std::int64_t s, bool dropout) {
    return kinds::attention("a", {s, h, a, 0, true, dropout, true}, DType::bf16);
  };
  for (std::int64_t s : {512, 2048}) {
    const Layer l = flash(s, false);
    CHECK(l.saved.value == 2 * (5 * s * h) + 4 * a * s);
    CHECK(l.saved_attention_core.value == 0);
    CHECK(l.saved.value - l.saved_split.value == 2 * s * h);  // the replicated QKV input
    // With dropout only the 1-byte output-dropout mask is added (the kernel regenerates the
    // attention-dropout mask from its seed).
    CHECK(flash(s, true).saved.value == l.saved.value + s * h);
  }
  // Linear in s: doubling s exactly doubles the bytes.
  CHECK(flash(4096, true).saved.value == 2 * flash(2048, true).saved.value);
  // FLOPs do not change with the kernel.
  const Layer std_kernel = kinds::attention("a", {2048, h, a, 0, true, true, false}, DType::bf16);
  CHECK(flash(2048, true).flops == std_kernel.flops);
}

TEST_CASE("attention without dropout keeps 5e*sh + e*as^2", "[kinds]") {
  const std::int64_t s = 1024, h = 2048, a = 16;
  for (DType dt : {DType::bf16, DType::fp32}) {
    const std::int64_t e = dtype_bytes(dt);
    const Layer l = kinds::attention("a", {s, h, a, 0, false, false, false}, dt);
    CHECK(l.saved.value == 5 * e * s * h + e * a * s * s);
    CHECK(l.saved_attention_core.value == e * a * s * s);
    CHECK(l.params == 4 * h * h);
    CHECK(l.params_split == 4 * h * h);
  }
}

TEST_CASE("grouped-query attention sizes K and V by kv_heads", "[kinds]") {
  const std::int64_t s = 512, h = 4096, a = 32, kv = 8, d = h / a, e = 2;
  const Layer mha = kinds::attention("a", {s, h, a, 0, false, false, true}, DType::bf16);
  const Layer gqa = kinds::attention("a", {s, h, a, kv, false, false, true}, DType::bf16);
  CHECK(mha.saved.value - gqa.saved.value == 2 * e * s * (h - kv * d));
  CHECK(gqa.params == h * (h + 2 * kv * d) + h * h);
  CHECK(gqa.kv_heads == kv);
  CHECK(gqa.heads == a);
  CHECK(mha.kv_heads == a);
  CHECK_THROWS_AS(kinds::attention("a", {s, h, a, 5, false, false, true}, DType::bf16),
                  std::invalid_argument);
  CHECK_THROWS_AS(kinds::attention("a", {s, 1000, 16, 0, false, false, true}, DType::bf16),
                  std::invalid_argument);
}

TEST_CASE("SwiGLU MLP has 3hf weights and keeps input, gate, up and product", "[kinds]") {
  const std::int64_t s = 256, h = 4096, f = 11008, e = 2;
  const Layer l =
      kinds::mlp("m", {s, h, f, kinds::MlpActivation::swiglu, false, false}, DType::bf16);
  CHECK(l.params == 3 * h * f);
  CHECK(l.saved.value == e * s * h + 3 * e * s * f);
  CHECK(l.saved_split.value == 3 * e * s * f);
  CHECK(l.flops == Approx(6.0 * s * h * f));
  CHECK(l.tp_allreduce_forward == 1);
  CHECK(l.tp_allreduce_backward == 1);
  CHECK(l.tp_allreduce_bytes == l.output);
}

TEST_CASE("a GPT block's forward FLOPs are 24sh^2 + 4s^2h", "[kinds][oracle]") {
  // Narayanan et al. 2021 count 24bsh^2 + 4bs^2h per layer (GEMMs only).
  const std::int64_t s = 2048, h = 12288;
  const Model m = build_transformer(gpt3_175b(), {s, DType::bf16, false});
  double block = 0, core = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(m.graph))) {
    const Layer& l = m.graph[v];
    if (l.block == 3 && l.matmul) block += l.flops;
    if (l.block == 3) core += l.attention_core_flops;
  }
  CHECK(block == Approx(24.0 * s * h * h + 4.0 * s * s * h).epsilon(1e-12));
  CHECK(core == Approx(4.0 * s * s * h).epsilon(1e-12));
}

TEST_CASE("tensor-parallel split of parameters: row-parallel biases and norms replicated",
          "[kinds]") {
  const std::int64_t s = 128, h = 768, a = 12;
  const Layer attn = kinds::attention("a", {s, h, a, 0, true, true, false}, DType::bf16);
  CHECK(attn.params == 4 * h * h + 4 * h);
  CHECK(attn.params - attn.params_split == h);
  const Layer mlp =
      kinds::mlp("m", {s, h, 4 * h, kinds::MlpActivation::gelu, true, true}, DType::bf16);
  CHECK(mlp.params == 8 * h * h + 5 * h);
  CHECK(mlp.params - mlp.params_split == h);
  const Layer ln = kinds::layernorm("ln", {s, h}, DType::bf16);
  CHECK(ln.params == 2 * h);
  CHECK(ln.params_split == 0);
  CHECK(kinds::rmsnorm("rn", {s, h}, DType::bf16).params == h);
  const Layer emb = kinds::embedding("e", {s, 50257, h, 1024, false}, DType::bf16);
  CHECK(emb.params == 50257 * h + 1024 * h);
  CHECK(emb.params_split == 50257 * h);
  CHECK(emb.tp_allreduce_forward == 1);
  CHECK(emb.tp_allreduce_backward == 0);
  CHECK(emb.saved.value == 0);
  CHECK(kinds::embedding("e", {s, 50257, h, 1024, true}, DType::bf16).saved.value == s * h);
}

TEST_CASE("the loss keeps fp32 logits 4sV and the head input", "[kinds]") {
  const std::int64_t s = 1024, h = 768, V = 50257;
  const Layer tied = kinds::loss("l", {s, h, V, kinds::LossHead::tied}, DType::bf16);
  CHECK(tied.params == 0);
  CHECK(tied.saved.value == 2 * s * h + 4 * s * V);
  CHECK(tied.saved_split.value == 4 * s * V);
  CHECK(tied.tp_allreduce_bytes.value == 2 * s * h);
  const Layer untied = kinds::loss("l", {s, h, V, kinds::LossHead::untied}, DType::fp32);
  CHECK(untied.params == V * h);
  CHECK(untied.saved.value == 4 * s * h + 4 * s * V);  // logits stay 4 bytes
  const Layer none = kinds::loss("l", {1, 0, 10, kinds::LossHead::none}, DType::bf16);
  CHECK(none.saved.value == 40);
  CHECK(none.saved_split.value == 0);
}

TEST_CASE("fp32 activations double every 16-bit byte count of a model without masks", "[kinds]") {
  TransformerConfig c = std::get<TransformerConfig>(find_preset("llama2-7b")->config);
  c.layers = 2;
  const Model half = build_transformer(c, {512, DType::bf16, false});
  const Model full = build_transformer(c, {512, DType::fp32, false});
  REQUIRE(boost::num_vertices(half.graph) == boost::num_vertices(full.graph));
  int compared = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(half.graph))) {
    const Layer& a = half.graph[v];
    const Layer& b = full.graph[v];
    if (a.kind == LayerKind::loss) continue;  // fp32 logits are 4 bytes either way
    INFO(a.name);
    CHECK(b.saved.value == 2 * a.saved.value);
    CHECK(b.saved_split.value == 2 * a.saved_split.value);
    CHECK(b.output.value == 2 * a.output.value);
    CHECK(b.params == a.params);
    ++compared;
  }
  CHECK(compared == 1 + 2 * 6 + 1);
}

TEST_CASE("conv2d output size, parameters, FLOPs and saved input", "[kinds]") {
  // ResNet stem: 3 -> 64, 7x7, stride 2, padding 3 on 224x224 gives 112x112.
  const kinds::Conv2dSpec stem{3, 64, 7, 2, 3, 1, false, 224, 224, true};
  CHECK(kinds::conv2d_output_hw(stem) == std::pair<std::int64_t, std::int64_t>{112, 112});
  const Layer l = kinds::conv2d("c", stem, DType::bf16);
  CHECK(l.params == 64 * 3 * 49);
  CHECK(l.saved.value == 2 * 3 * 224 * 224);
  CHECK(l.output.value == 2 * 64 * 112 * 112);
  CHECK(l.flops == Approx(2.0 * 64 * 112 * 112 * 3 * 49));
  // Grouped (depthwise) with bias, not saving its input.
  const Layer dw = kinds::conv2d("d", {32, 32, 3, 1, 1, 32, true, 10, 10, false}, DType::fp32);
  CHECK(dw.params == 32 * 9 + 32);
  CHECK(dw.saved.value == 0);
  CHECK_THROWS_AS(kinds::conv2d("x", {3, 8, 9, 1, 0, 1, false, 4, 4, true}, DType::bf16),
                  std::invalid_argument);
  CHECK_THROWS_AS(kinds::conv2d("x", {3, 8, 1, 1, 0, 2, false, 4, 4, true}, DType::bf16),
                  std::invalid_argument);
}

TEST_CASE("batchnorm, pooling, activation, dropout and add sizes", "[kinds]") {
  const kinds::ImageShape x{64, 112, 112};
  const std::int64_t n = 64 * 112 * 112;
  const Layer bn = kinds::batchnorm("bn", x, DType::bf16);
  CHECK(bn.params == 128);
  CHECK(bn.saved.value == 2 * n);

  const kinds::PoolSpec maxpool{kinds::PoolMode::max, x, 3, 2, 1, 1};
  CHECK(kinds::pool_output_hw(maxpool).first == 56);
  const Layer mp = kinds::pooling("mp", maxpool, DType::bf16);
  CHECK(mp.saved.value == 2 * n + 8 * 64 * 56 * 56);
  CHECK(mp.output.value == 2 * 64 * 56 * 56);
  const Layer gap =
      kinds::pooling("gap", {kinds::PoolMode::adaptive_avg, {2048, 7, 7}, 0, 0, 0, 1}, DType::bf16);
  CHECK(gap.saved.value == 0);
  CHECK(gap.output.value == 2 * 2048);

  using kinds::ActivationFn;
  using kinds::Save;
  CHECK(kinds::activation("r", 100, ActivationFn::relu, Save::automatic, DType::bf16).saved.value ==
        200);
  CHECK(kinds::activation("r", 100, ActivationFn::relu, Save::none, DType::bf16).saved.value == 0);
  CHECK(kinds::activation("g", 100, ActivationFn::gelu, Save::input, DType::fp32).saved.value ==
        400);
  const Layer drop = kinds::dropout("d", 100, DType::bf16);
  CHECK(drop.saved.value == 100);
  CHECK(drop.backward_factor == 1.0);
  CHECK(drop.io_bytes.value == 500);
  const Layer add = kinds::add("a", 100, DType::bf16);
  CHECK(add.saved.value == 0);
  CHECK(add.io_bytes.value == 600);
  CHECK_THROWS_AS(kinds::add("a", 0, DType::bf16), std::invalid_argument);
}

TEST_CASE("a generic layer takes its numbers as given and checks them", "[kinds]") {
  kinds::GenericSpec g;
  g.params = 10;
  g.params_split = 4;
  g.saved = core::Bytes{100};
  g.saved_split = core::Bytes{60};
  g.output = core::Bytes{8};
  g.flops = 1e6;
  const Layer l = kinds::generic("g", g);
  CHECK(l.params == 10);
  CHECK(l.saved_split.value == 60);
  CHECK(l.flops == 1e6);
  g.params_split = 11;
  CHECK_THROWS_AS(kinds::generic("g", g), std::invalid_argument);
}
