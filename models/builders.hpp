#pragma once
// Builders: a family's few hyper-parameters in, a finalized layer graph out. Invalid
// configurations throw std::invalid_argument naming the field (callers reading user input
// rethrow it as a located core::ConfigError).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/kinds.hpp"
#include "models/model.hpp"

namespace trainsim::models {


enum class NormKind { layernorm, rmsnorm };

// How a transformer block wires its sublayers (x is the block input):
//   sequential  pre-norm GPT/Llama: add1 = x + attn(ln1(x)); x' = add1 + mlp(ln2(add1))
//   parallel    GPT-NeoX use_parallel_residual: add1 = attn(ln1(x)) + mlp(ln2(x)); x' = add1 + x
//   parallel_shared_norm  phi, Falcon-7B: as parallel with one norm: mlp(ln1(x))
//   post_norm   BERT: ln1 = norm(x + attn(x)); x' = ln2(ln1 + mlp(ln1)); the embedding is
//               followed by a norm ("embed_ln") and there is no final norm.
enum class BlockLayout { sequential, parallel, parallel_shared_norm, post_norm };

// A transformer language model (decoder, or BERT-style encoder: the same memory and FLOPs).
// Layers per block are named "block.<i>.<part>" (ln1, attn, add1, ln2, mlp, add2) with
// Layer.block = i. Before the blocks one "embed" layer (token + learned positions + token
// types); after them "ln_f" (not with post_norm), optionally "pooler", and "loss" (the LM
// head folded into the loss: tied or untied weights), or with `classes` "pooler",
// "classifier" and "loss" over the classes.
struct TransformerConfig {
  std::string name;
  int layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;  // 0: = heads (multi-head attention)
  std::int64_t ffn = 0;       // 0: 4 * hidden
  std::int64_t vocab = 0;
  std::int64_t max_positions = 0;  // rows of learned position embeddings; the context limit
  kinds::MlpActivation mlp = kinds::MlpActivation::gelu;
  NormKind norm = NormKind::layernorm;
  bool bias = true;               // biases in attention and MLP projections
  bool tied_embeddings = true;    // LM head shares the token embedding
  bool learned_positions = true;  // false: rotary / no position parameters
  bool dropout = true;            // dropout after embedding, in attention and after sublayers
  std::int64_t head_dim = 0;      // 0: hidden / heads (Gemma 256, Falcon 64 with multi-query)
  std::optional<bool> qkv_bias;   // QKV projection bias; unset: = bias (Qwen2: QKV only)
  std::optional<bool> out_bias;   // attention output projection bias; unset: = bias
  std::optional<bool> mlp_bias;   // MLP biases; unset: = bias
  bool head_bias = false;         // untied LM head with a bias (phi-2)
  BlockLayout layout = BlockLayout::sequential;
  std::int64_t token_types = 0;  // token-type embedding rows (BERT: 2)
  bool pooler = false;           // BERT pooler: h*h + h on the first token, feeding the loss
  // > 0: a sequence classifier instead of the language-model head (BertForSequenceClassification):
  // the pooler, then "classifier" (h x classes + bias) and a cross-entropy over the classes.
  std::int64_t classes = 0;
  std::int64_t experts = 0;      // > 1: mixture-of-experts MLP (all experts counted)
  std::int64_t top_k = 0;        // experts per token (FLOPs and activations)
  std::int64_t expert_ffn = 0;   // width of each routed expert; 0: = ffn
  std::int64_t shared_expert_ffn = 0;  // > 0: a shared expert of this width in every MoE MLP
  bool shared_expert_gate = false;     // its sigmoid gate (Qwen2-MoE)
  bool expert_bias = false;            // the router's per-expert score bias (DeepSeek-V3)
  std::vector<bool> dense_blocks;      // blocks whose MLP is dense (ffn) despite experts > 1
  bool qk_norm = false;                // RMSNorm over the whole Q and K projections (OLMoE)
  bool causal = true;  // causal self-attention (decoder); false: bidirectional (BERT, ViT)
  std::optional<kinds::MlaSpec> mla;   // multi-head latent attention (tokens, hidden, heads,
                                       // flash are filled in from the model and options)
};
// Throws std::invalid_argument when opts.seq_len exceeds max_positions of learned positions.
Model build_transformer(const TransformerConfig& cfg, const BuildOptions& opts);

// GPT-3 style (Brown et al. 2020): ffn = 4h (left 0 so overrides of hidden keep the ratio), learned
// positions of `context` rows, tied embeddings, biases, LayerNorm, GeLU, dropout.
TransformerConfig gpt3_config(std::string name, int layers, std::int64_t hidden, std::int64_t heads,
                              std::int64_t context, std::int64_t vocab = 50257);

// Vision Transformer (Dosovitskiy et al. 2021, ViT-B/16 as in HF / timm) for classification:
// "patch_embed" conv (k = stride = patch), "cls_pos" (class token + learned positions over
// T = (image/patch)^2 + 1 tokens), pre-norm blocks as a sequential TransformerConfig over T
// tokens (LayerNorm, GeLU, biases, no dropout), "ln_f", "head" (h -> classes on the class
// token) and "loss". An image model: one sample = one image (seq_len is ignored).
struct VitConfig {
  std::string name;
  int layers = 12;
  std::int64_t hidden = 768;
  std::int64_t heads = 12;
  std::int64_t ffn = 0;  // 0: 4 * hidden
  std::int64_t patch = 16;
  std::int64_t image_size = 224;
  std::int64_t classes = 1000;
};
Model build_vit(const VitConfig& cfg, const BuildOptions& opts);

// VGG (Simonyan & Zisserman 2015, torchvision): 3x3 convs (padding 1, bias) + ReLU, 0 in
// `features` meaning a 2x2 max pool; then an adaptive average pool to 7x7 and the classifier
// fc6 (-> 4096), ReLU, dropout, fc7 (-> 4096), ReLU, dropout, fc8 (-> classes).
struct VggConfig {
  std::string name;
  std::vector<std::int64_t> features{64, 64,  0,   128, 128, 0,   256, 256, 256,
                                     0,  512, 512, 512, 0,   512, 512, 512, 0};  // VGG-16 ("D")
  std::int64_t classes = 1000;
  std::int64_t image_size = 224;
};
Model build_vgg(const VggConfig& cfg, const BuildOptions& opts);

// ResNet v1.5 with bottleneck blocks as in torchvision (stride on the 3x3 conv, BatchNorm with
// weight and bias, no conv biases). Blocks are named "layer<stage>.<i>.<part>" and numbered
// across stages in Layer.block. An in-place ReLU whose output the next conv keeps is built
// with no save of its own, and a downsample conv shares its input with conv1 (saved once).
struct ResNetConfig {
  std::string name;
  std::vector<int> blocks{3, 4, 6, 3};  // bottleneck blocks per stage
  std::int64_t classes = 1000;
  std::int64_t image_size = 224;  // square RGB input
  std::int64_t base_width = 64;
};
Model build_resnet(const ResNetConfig& cfg, const BuildOptions& opts);

// A multi-layer perceptron on flat inputs: fc<i> (+ ReLU) for each hidden width, a last fc to
// `classes` logits, softmax cross-entropy. Not a sequence model (one sample = one vector).
struct MlpConfig {
  std::string name;
  std::int64_t input = 0;
  std::vector<std::int64_t> hidden;
  std::int64_t classes = 0;
};
Model build_mlp(const MlpConfig& cfg, const BuildOptions& opts);

}  // namespace trainsim::models
