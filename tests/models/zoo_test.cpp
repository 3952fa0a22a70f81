// The model zoo: exact parameter counts of every preset against published figures (or, where
// a paper rounds, against the paper's own formula and rounding), and the MoE accounting.
#include <catch2/catch.hpp>

#include <cmath>

#include "models/presets.hpp"

using namespace trainsim;
using namespace trainsim::models;

namespace {

std::int64_t params(const std::string& name) {
  const Preset* p = find_preset(name);
  REQUIRE(p);
  return build_preset(*p, {128, DType::bf16, false}).parameters();
}

const Layer& layer(const Model& m, const std::string& name) {
  const auto v = find_layer(m, name);
  REQUIRE(v);
  return m.graph[*v];
}

}  // namespace

TEST_CASE("GPT-3 family counts are exact and near Brown et al. Table 2.1", "[zoo][oracle]") {
  struct Row {
    const char* name;
    std::int64_t exact;
    double table;
  };
  // exact = 12*L*h^2 + 13*L*h + (50257 + 2048)*h + 2h (tied head, final LayerNorm).
  for (const Row& r :
       {Row{"gpt3-125m", 125'226'240, 125e6}, Row{"gpt3-350m", 355'871'744, 350e6},
        Row{"gpt3-760m", 760'300'032, 760e6}, Row{"gpt3-1.3b", 1'315'723'264, 1.3e9},
        Row{"gpt3-2.7b", 2'651'553'280, 2.7e9}, Row{"gpt3-6.7b", 6'658'404'352, 6.7e9},
        Row{"gpt3-13b", 12'853'386'240, 13.0e9}, Row{"gpt3-175b", 174'604'259'328, 175.0e9}}) {
    INFO(r.name);
    const std::int64_t n = params(r.name);
    CHECK(n == r.exact);
    // The table's sizes are nominal: 350M is really 356M and 13.0B 12.85B (within 2%).
    CHECK(std::abs(double(n) / r.table - 1.0) < 0.02);
  }
  CHECK(params("gpt3-175b") == params("gpt3"));
  // These round exactly to the table's figure at its precision.
  CHECK(std::round(double(params("gpt3-125m")) / 1e6) == 125);
  CHECK(std::round(double(params("gpt3-760m")) / 1e6) == 760);
  CHECK(std::round(double(params("gpt3-6.7b")) / 1e8) == 67);
  CHECK(std::round(double(params("gpt3-175b")) / 1e9) == 175);
}

TEST_CASE("Megatron-LM family matches Narayanan et al. Table 1 and its formula", "[zoo][oracle]") {
  struct Row {
    const char* name;
    int l;
    double h;
    double table_billions;
  };
  for (const Row& r :
       {Row{"megatron-1.7b", 24, 2304, 1.7}, Row{"megatron-3.6b", 30, 3072, 3.6},
        Row{"megatron-7.5b", 36, 4096, 7.5}, Row{"megatron-18.4b", 40, 6144, 18.4},
        Row{"megatron-39.1b", 48, 8192, 39.1}, Row{"megatron-76.1b", 60, 10240, 76.1},
        Row{"megatron-145.6b", 80, 12288, 145.6}, Row{"megatron-310.1b", 96, 16384, 310.1},
        Row{"megatron-529.6b", 105, 20480, 529.6}, Row{"megatron-1t", 128, 25600, 1008.0}}) {
    INFO(r.name);
    const double V = 51200, s = 2048, l = r.l, h = r.h;
    // P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)); trainsim also counts the final LayerNorm (2h).
    const double formula = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
    const std::int64_t n = params(r.name);
    CHECK(double(n) - formula == Approx(2 * h).margin(1));
    CHECK(std::round(formula / 1e8) / 10 == Approx(r.table_billions));
    CHECK(std::round(double(n) / 1e8) / 10 == Approx(r.table_billions));
  }
}

TEST_CASE("Llama 70B and 405B counts from their Hugging Face configs, by hand", "[zoo][oracle]") {
  // Per layer: q and o h x h, k and v h x (kv_heads x 128), gate/up/down 3 x h x ffn, two RMSNorm
  // weights h; then the embeddings and the untied head V x h each and the final norm h.
  //   Llama-3.1-405B (h 16384, 126 layers, 8 KV heads, ffn 53248, V 128256):
  //     2 x 268,435,456 + 2 x 16,777,216 + 3 x 872,415,232 + 32,768 = 3,187,703,808 per layer,
  //     x 126 = 401,650,679,808; + 2 x 2,101,346,304 + 16,384 = 405,853,388,800.
  //   Llama-3.1-70B (h 8192, 80 layers, 8 KV heads, ffn 28672, V 128256):
  //     2 x 67,108,864 + 2 x 8,388,608 + 3 x 234,881,024 + 16,384 = 855,654,400 per layer,
  //     x 80 = 68,452,352,000; + 2 x 1,050,673,152 + 8,192 = 70,553,706,496.
  //   Llama-2-70B: the same blocks, V 32000: 68,452,352,000 + 2 x 262,144,000 + 8,192
  //     = 68,976,648,192.
  const auto llama = [](std::int64_t h, std::int64_t layers, std::int64_t kv, std::int64_t ffn,
                        std::int64_t vocab) {
    const std::int64_t per_layer = 2 * h * h + 2 * h * kv * 128 + 3 * h * ffn + 2 * h;
    return layers * per_layer + 2 * vocab * h + h;
  };
  CHECK(llama(16384, 126, 8, 53248, 128256) == 405'853'388'800);
  CHECK(llama(8192, 80, 8, 28672, 128256) == 70'553'706'496);
  CHECK(llama(8192, 80, 8, 28672, 32000) == 68'976'648'192);
  CHECK(params("llama3-405b") == llama(16384, 126, 8, 53248, 128256));
  CHECK(params("llama3-70b") == llama(8192, 80, 8, 28672, 128256));
  CHECK(params("llama2-70b") == llama(8192, 80, 8, 28672, 32000));
}

TEST_CASE("zoo presets have their published parameter counts", "[zoo][oracle]") {
  // Hugging Face transformers counts (llama3-405b: Llama 3.1 405B).
  CHECK(params("llama2-13b") == 13'015'864'320);
  CHECK(params("llama2-70b") == 68'976'648'192);
  CHECK(params("llama3-8b") == 8'030'261'248);
  CHECK(params("llama3-70b") == 70'553'706'496);
  CHECK(params("llama3-405b") == 405'853'388'800);
  CHECK(params("mistral-7b") == 7'241'732'096);
  CHECK(params("mixtral-8x7b") == 46'702'792'704);
  CHECK(params("bert-base") == 109'482'240);  // BertModel with pooler
  CHECK(params("bert-large") == 335'141'888);
  // timm / HF ViTForImageClassification with the ImageNet-1k head; torchvision CNNs.
  CHECK(params("vit-b16") == 86'567'656);
  CHECK(params("vit-l16") == 304'326'632);
  CHECK(params("resnet101") == 44'549'160);
  CHECK(params("resnet152") == 60'192'808);
  CHECK(params("vgg16") == 138'357'544);
}

TEST_CASE("preset descriptions carry the exact count", "[zoo]") {
  CHECK_THAT(find_preset("mixtral-8x7b")->description,
             Catch::Contains("46,702,792,704 parameters"));
  CHECK_THAT(find_preset("gpt2")->description, Catch::Contains("124,439,808 parameters"));
}

TEST_CASE("an MoE MLP counts all experts but computes and keeps top_k", "[zoo][moe]") {
  const BuildOptions opts{256, DType::bf16, false};
  const Model moe = build_preset(*find_preset("mixtral-8x7b"), opts);
  const Model dense = build_preset(*find_preset("mistral-7b"), opts);
  const Layer& e = layer(moe, "block.0.mlp");
  const Layer& d = layer(dense, "block.0.mlp");
  const std::int64_t s = 256, h = 4096, E = 8;
  CHECK(e.params == E * d.params + h * E);  // + router
  CHECK(e.params_split == E * d.params_split);
  CHECK(e.flops == Approx(2 * d.flops + 2.0 * s * h * E));
  CHECK(e.saved_split.value == 2 * d.saved_split.value);
  CHECK(e.saved.value - e.saved_split.value == d.saved.value - d.saved_split.value + 4 * s * E);
  // Attention is untouched.
  CHECK(layer(moe, "block.0.attn").params == layer(dense, "block.0.attn").params);
}

TEST_CASE("image zoo models are not sequence models and ViT runs 197 tokens", "[zoo]") {
  const Model vit = build_preset(*find_preset("vit-b16"), {4096, DType::bf16, false});
  CHECK_FALSE(vit.sequence_model);
  CHECK(vit.num_blocks == 12);
  // The attention runs over 196 patches + the class token whatever seq_len says.
  CHECK(layer(vit, "block.0.attn").output.value == 2 * 197 * 768);
  CHECK(layer(vit, "head").output.value == 2 * 1000);
  const Model vgg = build_preset(*find_preset("vgg16"), {});
  CHECK_FALSE(vgg.sequence_model);
  CHECK(layer(vgg, "fc6").params == 25088 * 4096 + 4096);
}

TEST_CASE("BERT is a post-norm encoder with a pooler feeding the loss", "[zoo]") {
  const Model m = build_preset(*find_preset("bert-base"), {512, DType::bf16, false});
  CHECK(layer(m, "embed").params == (30522 + 512 + 2) * 768);
  CHECK(layer(m, "pooler").params == 768 * 768 + 768);
  CHECK_FALSE(find_layer(m, "ln_f"));
  CHECK(boost::in_degree(*find_layer(m, "loss"), m.graph) == 2);
  // Post-norm: ln1 reads add1 (attention + block input).
  const Vertex ln1 = *find_layer(m, "block.0.ln1");
  CHECK(m.graph[boost::source(*boost::in_edges(ln1, m.graph).first, m.graph)].name ==
        "block.0.add1");
  CHECK_THROWS_AS(build_preset(*find_preset("bert-base"), {1024, DType::bf16, false}),
                  std::invalid_argument);
}

TEST_CASE("every preset builds with default options", "[zoo]") {
  for (const auto& p : presets()) {
    INFO(p.name);
    CHECK(build_preset(p, BuildOptions{}).parameters() > 0);
  }
}
