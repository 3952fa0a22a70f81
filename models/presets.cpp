#include "models/presets.hpp"

namespace trainsim::models {

namespace {

// GPT-2 (Radford et al. 2019, HF "gpt2*"): vocab 50257, 1024 learned positions, tied head.
TransformerConfig gpt2(std::string name, int layers, std::int64_t hidden, std::int64_t heads) {
  return gpt3_config(std::move(name), layers, hidden, heads, 1024, 50257);
}

// Llama family (Touvron et al. 2023; Meta Llama 3, Dubey et al. 2024; HF config.json):
// RMSNorm, SwiGLU, rotary positions, no biases, untied head, no dropout.
TransformerConfig llama(std::string name, int layers, std::int64_t hidden, std::int64_t heads,
                        std::int64_t kv_heads, std::int64_t ffn, std::int64_t vocab,
                        std::int64_t context) {
  TransformerConfig c;
  c.name = std::move(name);
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.kv_heads = kv_heads;
  c.ffn = ffn;
  c.vocab = vocab;
  c.max_positions = context;
  c.mlp = kinds::MlpActivation::swiglu;
  c.norm = NormKind::rmsnorm;
  c.bias = false;
  c.tied_embeddings = false;
  c.learned_positions = false;
  c.dropout = false;
  return c;
}

// BERT (Devlin et al. 2019, HF bert-*-uncased): post-norm encoder, 512 learned positions, 2
// token types, vocab 30522, pooler; the MLM head is tied to the token embedding (its transform
// and bias are not in the published counts and not modelled).
TransformerConfig bert(std::string name, int layers, std::int64_t hidden, std::int64_t heads) {
  TransformerConfig c = gpt3_config(std::move(name), layers, hidden, heads, 512, 30522);
  c.layout = BlockLayout::post_norm;
  c.token_types = 2;
  c.pooler = true;
  c.causal = false;
  return c;
}

std::string count(std::int64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::vector<Preset> make_presets() {
  std::vector<Preset> p;
  auto add = [&](std::string desc, ModelConfig config) {
    const std::string name = std::visit([](const auto& c) { return c.name; }, config);
    // Parameters do not depend on the sequence length.
    const std::int64_t n = build_config(config, BuildOptions{128, DType::bf16, false}).parameters();
    p.push_back({name, desc + ", " + count(n) + " parameters", std::move(config)});
  };
  add("GPT-2 small: 12 layers, h=768, 12 heads", gpt2("gpt2", 12, 768, 12));
  add("GPT-2 medium: 24 layers, h=1024, 16 heads", gpt2("gpt2-medium", 24, 1024, 16));
  add("GPT-2 large: 36 layers, h=1280, 20 heads", gpt2("gpt2-large", 36, 1280, 20));
  add("GPT-2 XL: 48 layers, h=1600, 25 heads", gpt2("gpt2-xl", 48, 1600, 25));
  add("GPT-3 175B: 96 layers, h=12288, 96 heads, context 2048",
      gpt3_config("gpt3", 96, 12288, 96, 2048));
  // GPT-3 family, Brown et al. 2020 Table 2.1 (1.3B: 16 heads of 128, as d_model 2048 needs;
  // 13B: d_model 5120 = 40 x 128, the table's 5140 is a typo).
  struct Gpt3 {
    const char* name;
    int l;
    std::int64_t h, a;
  };
  for (const Gpt3& g :
       {Gpt3{"125m", 12, 768, 12}, Gpt3{"350m", 24, 1024, 16}, Gpt3{"760m", 24, 1536, 16},
        Gpt3{"1.3b", 24, 2048, 16}, Gpt3{"2.7b", 32, 2560, 32}, Gpt3{"6.7b", 32, 4096, 32},
        Gpt3{"13b", 40, 5120, 40}, Gpt3{"175b", 96, 12288, 96}})
    add("GPT-3 " + std::string(g.name) + " (Brown et al. 2020): " + std::to_string(g.l) +
            " layers, h=" + std::to_string(g.h),
        gpt3_config(std::string("gpt3-") + g.name, g.l, g.h, g.a, 2048));
  // Megatron-LM (Narayanan et al. 2021) Table 1: GPT with vocab 51200, sequence 2048.
  for (const Gpt3& g :
       {Gpt3{"1.7b", 24, 2304, 24}, Gpt3{"3.6b", 30, 3072, 32}, Gpt3{"7.5b", 36, 4096, 32},
        Gpt3{"18.4b", 40, 6144, 48}, Gpt3{"39.1b", 48, 8192, 64}, Gpt3{"76.1b", 60, 10240, 80},
        Gpt3{"145.6b", 80, 12288, 96}, Gpt3{"310.1b", 96, 16384, 128},
        Gpt3{"529.6b", 105, 20480, 128}, Gpt3{"1t", 128, 25600, 160}})
    add("Megatron-LM GPT " + std::string(g.name) + " (Narayanan et al. 2021): " +
            std::to_string(g.l) + " layers, h=" + std::to_string(g.h),
        gpt3_config(std::string("megatron-") + g.name, g.l, g.h, g.a, 2048, 51200));
  add("Llama 2 7B: 32 layers, h=4096, SwiGLU 11008, RMSNorm, rotary, untied",
      llama("llama2-7b", 32, 4096, 32, 0, 11008, 32000, 4096));
  add("Llama 2 13B: 40 layers, h=5120, SwiGLU 13824",
      llama("llama2-13b", 40, 5120, 40, 0, 13824, 32000, 4096));
  add("Llama 2 70B: 80 layers, h=8192, GQA 8 KV heads, SwiGLU 28672",
      llama("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096));
  add("Llama 3 8B: 32 layers, h=4096, GQA 8, SwiGLU 14336, vocab 128256",
      llama("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192));
  add("Llama 3 70B: 80 layers, h=8192, GQA 8, SwiGLU 28672, vocab 128256",
      llama("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192));
  add("Llama 3.1 405B: 126 layers, h=16384, GQA 8, SwiGLU 53248, vocab 128256",
      llama("llama3-405b", 126, 16384, 128, 8, 53248, 128256, 131072));
  add("Mistral 7B v0.1: 32 layers, h=4096, GQA 8, SwiGLU 14336",
      llama("mistral-7b", 32, 4096, 32, 8, 14336, 32000, 32768));
  TransformerConfig mixtral = llama("mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000, 32768);
  mixtral.experts = 8;
  mixtral.top_k = 2;
  add("Mixtral 8x7B: Mistral 7B shape with 8 SwiGLU experts, top-2 (all experts counted)", mixtral);
  add("BERT base (uncased): 12 layers, h=768, post-norm encoder, with pooler",
      bert("bert-base", 12, 768, 12));
  add("BERT large (uncased): 24 layers, h=1024, post-norm encoder, with pooler",
      bert("bert-large", 24, 1024, 16));
  add("ViT-B/16 on 224x224 images, ImageNet-1k head (197 tokens)",
      VitConfig{"vit-b16", 12, 768, 12, 3072, 16, 224, 1000});
  add("ViT-L/16 on 224x224 images, ImageNet-1k head (197 tokens)",
      VitConfig{"vit-l16", 24, 1024, 16, 4096, 16, 224, 1000});
  add("ResNet-50 (torchvision v1.5) on 224x224 images",
      ResNetConfig{"resnet50", {3, 4, 6, 3}, 1000, 224, 64});
  add("ResNet-101 (torchvision v1.5) on 224x224 images",
      ResNetConfig{"resnet101", {3, 4, 23, 3}, 1000, 224, 64});
  add("ResNet-152 (torchvision v1.5) on 224x224 images",
      ResNetConfig{"resnet152", {3, 8, 36, 3}, 1000, 224, 64});
  add("VGG-16 (torchvision) on 224x224 images",
      VggConfig{"vgg16", VggConfig{}.features, 1000, 224});
  add("MLP 784-1024-1024-10 with ReLU (MNIST-sized)", MlpConfig{"mlp", 784, {1024, 1024}, 10});
  return p;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = make_presets();  // immutable after first use
  return all;
}

const Preset* find_preset(std::string_view name) {
  for (const auto& p : presets())
    if (p.name == name) return &p;
  return nullptr;
}

std::string preset_names() {
  std::string out;
  for (const auto& p : presets()) {
    if (!out.empty()) out += ", ";
    out += p.name;
  }
  return out;
}

Model build_config(const ModelConfig& config, const BuildOptions& opts) {
  return std::visit(
      [&](const auto& c) -> Model {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, TransformerConfig>)
          return build_transformer(c, opts);
        else if constexpr (std::is_same_v<T, ResNetConfig>)
          return build_resnet(c, opts);
        else if constexpr (std::is_same_v<T, VitConfig>)
          return build_vit(c, opts);
        else if constexpr (std::is_same_v<T, VggConfig>)
          return build_vgg(c, opts);
        else
          return build_mlp(c, opts);
      },
      config);
}

Model build_preset(const Preset& preset, const BuildOptions& opts) {
  return build_config(preset.config, opts);
}

}  // namespace trainsim::models
