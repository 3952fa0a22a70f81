#pragma once
// Builders: a family's few hyper-parameters in, a finalized layer graph out. Invalid
// configurations throw std::invalid_argument naming the field (callers reading user input
// rethrow it as a located core::ConfigError).
#include <cstdint>
#include <string>
#include <vector>

#include "models/kinds.hpp"
#include "models/model.hpp"

namespace trainsim::models {

enum class NormKind { layernorm, rmsnorm };

// A decoder-only transformer. Per block: ln1 -> attn -> add1 (+ block input) -> ln2 -> mlp ->
// add2 (+ add1); layers named "block.<i>.<part>" with Layer.block = i. Before the blocks one
// "embed" layer (token + learned positions); after them "ln_f" and "loss" (the LM head folded
// into the loss: tied or untied weights).
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
};
// Throws std::invalid_argument when opts.seq_len exceeds max_positions of learned positions.
Model build_transformer(const TransformerConfig& cfg, const BuildOptions& opts);

// GPT-3 style (Brown et al. 2020): ffn = 4h (left 0 so overrides of hidden keep the ratio), learned
// positions of `context` rows, tied embeddings, biases, LayerNorm, GeLU, dropout.
TransformerConfig gpt3_config(std::string name, int layers, std::int64_t hidden, std::int64_t heads,
                              std::int64_t context, std::int64_t vocab = 50257);

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
