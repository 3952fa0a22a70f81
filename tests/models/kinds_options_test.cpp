// The kind options added for the model zoo and HF import: head_dim, separate biases, GeGLU,
// mixture of experts, token types, head bias, and save_input on shared tensors; in C++ and in
// the layer-graph YAML.
#include <catch2/catch.hpp>

#include "models/kinds.hpp"
#include "models/model_yaml.hpp"
#include "sim/core/error.hpp"

using namespace trainsim;
using namespace trainsim::models;

TEST_CASE("attention with a head_dim wider than hidden / heads", "[kinds]") {
  // Gemma 7B: h = 3072, 16 heads of 256 (hq = 4096), multi-head KV.
  const std::int64_t s = 64, h = 3072, a = 16, d = 256, hq = a * d;
  kinds::AttentionSpec spec{s, h, a, 0, false, false, true, d, false};
  const Layer l = kinds::attention("a", spec, DType::bf16);
  CHECK(l.params == h * (hq + 2 * hq) + hq * h);
  CHECK(l.saved_split.value == 2 * s * (2 * hq + 2 * hq) + 4 * a * s);  // flash: lse only
  CHECK(l.attention_core_flops == Approx(4.0 * s * s * hq));
  CHECK(l.flops == Approx(2.0 * s * h * 3 * hq + 4.0 * s * s * hq + 2.0 * s * hq * h));
  // Without head_dim, heads must divide hidden; with it, they need not.
  spec.hidden = 3000;
  CHECK_NOTHROW(kinds::attention("a", spec, DType::bf16));
  spec.head_dim = 0;
  CHECK_THROWS_AS(kinds::attention("a", spec, DType::bf16), std::invalid_argument);
}

TEST_CASE("QKV and output biases are separate", "[kinds]") {
  const std::int64_t h = 64;
  const auto qkv_only =
      kinds::attention("a", {8, h, 4, 0, true, false, false, 0, false}, DType::bf16);
  const auto out_only =
      kinds::attention("a", {8, h, 4, 0, false, false, false, 0, true}, DType::bf16);
  CHECK(qkv_only.params == 4 * h * h + 3 * h);
  CHECK(out_only.params == 4 * h * h + h);
}

TEST_CASE("MoE MLP validates top_k and geglu counts as swiglu", "[kinds][moe]") {
  kinds::MlpSpec m{16, 64, 128, kinds::MlpActivation::geglu, false, false, 4, 0, true};
  CHECK_THROWS_WITH(kinds::mlp("m", m, DType::bf16), Catch::Contains("top_k must be between 1"));
  m.top_k = 5;
  CHECK_THROWS_AS(kinds::mlp("m", m, DType::bf16), std::invalid_argument);
  m.top_k = 1;
  const Layer moe = kinds::mlp("m", m, DType::bf16);
  m.experts = 0;
  const Layer dense = kinds::mlp("m", m, DType::bf16);
  CHECK(dense.params == 3 * 64 * 128);
  CHECK(moe.params == 4 * dense.params + 64 * 4);
  CHECK(moe.saved_split == dense.saved_split);  // top-1
  m.save_input = false;
  CHECK(kinds::mlp("m", m, DType::bf16).saved.value == dense.saved.value - 2 * 16 * 64);
}

TEST_CASE("embedding token types and LM head bias", "[kinds]") {
  const Layer e = kinds::embedding("e", {8, 100, 16, 32, false, 2}, DType::bf16);
  CHECK(e.params == (100 + 32 + 2) * 16);
  CHECK(e.params_split == 100 * 16);
  const Layer l = kinds::loss("l", {8, 16, 100, kinds::LossHead::untied, true}, DType::bf16);
  CHECK(l.params == 100 * 16 + 100);
  CHECK_THROWS_AS(kinds::loss("l", {8, 16, 100, kinds::LossHead::tied, true}, DType::bf16),
                  std::invalid_argument);
  CHECK(kinds::layernorm("n", {8, 16, false}, DType::bf16).saved.value == 0);
}

TEST_CASE("the layer-graph YAML reads the new keys", "[kinds][yaml]") {
  const std::string doc = R"(model:
  name: moe
  layers:
    - {name: embed, kind: embedding, vocab: 100, hidden: 64, max_positions: 32, token_types: 2}
    - {name: attn, kind: attention, hidden: 64, heads: 2, kv_heads: 1, head_dim: 16, bias: true, out_bias: false}
    - {name: mlp, kind: mlp, hidden: 64, ffn: 128, activation: geglu, bias: false, experts: 4, top_k: 2}
    - {name: ln, kind: rmsnorm, hidden: 64, save_input: false}
    - {name: loss, kind: loss, vocab: 100, hidden: 64, head: untied, head_bias: true}
)";
  const BuildOptions opts{16, DType::bf16, false};
  const Model m = build_model(YAML::Load(doc)["model"], "s.yaml", "model", opts, "");
  const std::int64_t h = 64;
  CHECK(m.parameters() == (100 + 32 + 2) * h + (h * (32 + 2 * 16) + (32 + 2 * 16) + 32 * h) +
                              (4 * 3 * h * 128 + h * 4) + h + (100 * h + 100));
  // experts without top_k is a located error.
  std::string bad = doc;
  bad.replace(bad.find(", top_k: 2"), 10, "");
  try {
    build_model(YAML::Load(bad)["model"], "s.yaml", "model", opts, "");
    FAIL("no error");
  } catch (const core::ConfigError& e) {
    CHECK(e.where().line == 6);
    CHECK_THAT(e.what(), Catch::Contains("missing required key 'top_k'"));
  }
}
