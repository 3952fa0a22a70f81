#include "models/presets.hpp"

namespace trainsim::models {

namespace {

// GPT-2 (Radford et al. 2019, HF "gpt2*"): vocab 50257, 1024 learned positions, tied head.
TransformerConfig gpt2(std::string name, int layers, std::int64_t hidden, std::int64_t heads) {
  return gpt3_config(std::move(name), layers, hidden, heads, 1024, 50257);
}

// Llama 2 7B (Touvron et al. 2023, HF config.json): RMSNorm, SwiGLU 11008, rotary positions,
// no biases, untied head, vocab 32000, context 4096, no dropout.
TransformerConfig llama2_7b() {
  TransformerConfig c;
  c.name = "llama2-7b";
  c.layers = 32;
  c.hidden = 4096;
  c.heads = 32;
  c.kv_heads = 0;  // = heads (multi-head attention; 70B uses GQA, 7B does not)
  c.ffn = 11008;
  c.vocab = 32000;
  c.max_positions = 4096;
  c.mlp = kinds::MlpActivation::swiglu;
  c.norm = NormKind::rmsnorm;
  c.bias = false;
  c.tied_embeddings = false;
  c.learned_positions = false;
  c.dropout = false;
  return c;
}

std::vector<Preset> make_presets() {
  std::vector<Preset> p;
  p.push_back({"gpt2", "GPT-2 small: 12 layers, h=768, 12 heads, 124,439,808 parameters",
               gpt2("gpt2", 12, 768, 12)});
  p.push_back({"gpt2-medium", "GPT-2 medium: 24 layers, h=1024, 16 heads, 354,823,168 parameters",
               gpt2("gpt2-medium", 24, 1024, 16)});
  p.push_back({"gpt2-large", "GPT-2 large: 36 layers, h=1280, 20 heads, 774,030,080 parameters",
               gpt2("gpt2-large", 36, 1280, 20)});
  p.push_back({"gpt2-xl", "GPT-2 XL: 48 layers, h=1600, 25 heads, 1,557,611,200 parameters",
               gpt2("gpt2-xl", 48, 1600, 25)});
  p.push_back({"gpt3",
               "GPT-3 175B: 96 layers, h=12288, 96 heads, context 2048, 174,604,259,328 "
               "parameters",
               gpt3_config("gpt3", 96, 12288, 96, 2048)});
  p.push_back({"llama2-7b",
               "Llama 2 7B: 32 layers, h=4096, SwiGLU 11008, RMSNorm, rotary, untied, "
               "6,738,415,616 parameters",
               llama2_7b()});
  p.push_back({"resnet50", "ResNet-50 (torchvision v1.5) on 224x224 images, 25,557,032 parameters",
               ResNetConfig{"resnet50", {3, 4, 6, 3}, 1000, 224, 64}});
  p.push_back({"mlp", "MLP 784-1024-1024-10 with ReLU (MNIST-sized), 1,863,690 parameters",
               MlpConfig{"mlp", 784, {1024, 1024}, 10}});
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

Model build_config(const std::variant<TransformerConfig, ResNetConfig, MlpConfig>& config,
                   const BuildOptions& opts) {
  return std::visit(
      [&](const auto& c) -> Model {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, TransformerConfig>)
          return build_transformer(c, opts);
        else if constexpr (std::is_same_v<T, ResNetConfig>)
          return build_resnet(c, opts);
        else
          return build_mlp(c, opts);
      },
      config);
}

Model build_preset(const Preset& preset, const BuildOptions& opts) {
  return build_config(preset.config, opts);
}

}  // namespace trainsim::models
