#pragma once
// One function per layer kind: dimensions in, a filled `Layer` out. All sizes are per sample
// (one sequence of `tokens` tokens, or one image) and in bytes of the activation dtype
// e = dtype_bytes(dtype); dropout masks are 1 byte per element. Every formula is written next
// to its function in kinds_*.cpp and summarised in docs/models.md.
//
// Activation accounting follows Korthikanti et al. 2022, "Reducing Activation Recomputation
// in Large Transformer Models" (section 4): each tensor kept for backward is counted once, by
// the layer that needs it. trainsim sums `saved` over layers and cannot see storage shared
// between two layers, so where two layers would keep the same tensor (a ReLU's output that
// the next conv keeps as its input) one of them is built with its save turned off.
//
// Invalid dimensions (zero or negative sizes, heads not dividing hidden, ...) throw
// std::invalid_argument with a message naming the dimension; callers reading user input
// rethrow it as a located core::ConfigError.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "models/layer.hpp"

namespace trainsim::models::kinds {

// y = x W^T (+ b), applied to each of `tokens` rows. Not split under tensor parallelism.
struct LinearSpec {
  std::int64_t tokens = 1;  // rows per sample (seq_len for sequence models, 1 otherwise)
  std::int64_t in = 0;
  std::int64_t out = 0;
  bool bias = true;
  std::int64_t gemm_input_bytes = 0;  // bytes per element of the kept input; 0: the dtype's (fp8: 1)
};
Layer linear(std::string name, const LinearSpec& spec, DType dtype);

// Token embedding (vocab-parallel under tensor parallelism), optionally with learned position
// embeddings of `max_positions` rows (replicated) and a dropout on the sum.
struct EmbeddingSpec {
  std::int64_t tokens = 0;
  std::int64_t vocab = 0;
  std::int64_t hidden = 0;
  std::int64_t max_positions = 0;  // 0: no learned positions (rotary or none)
  bool dropout = false;
  std::int64_t token_types = 0;  // rows of token-type (segment) embeddings, replicated (BERT: 2)
};
Layer embedding(std::string name, const EmbeddingSpec& spec, DType dtype);

// LayerNorm (weight and bias) or RMSNorm (weight only) over the last `hidden` features.
struct NormSpec {
  std::int64_t tokens = 0;
  std::int64_t hidden = 0;
  bool save_input = true;  // false when another norm already keeps the same input tensor
};
Layer layernorm(std::string name, const NormSpec& spec, DType dtype);
Layer rmsnorm(std::string name, const NormSpec& spec, DType dtype);

// Self-attention sublayer: QKV projection, scores, softmax (+ dropout), attention x V, output
// projection and (with dropout) the dropout after it. Megatron split: heads across ranks.
struct AttentionSpec {
  std::int64_t tokens = 0;    // s
  std::int64_t hidden = 0;    // h
  std::int64_t heads = 0;     // a; must divide h unless head_dim is given
  std::int64_t kv_heads = 0;  // grouped-query attention; 0 means = heads; must divide heads
  bool bias = true;           // QKV projection bias
  bool dropout = false;
  bool flash = false;         // FlashAttention-style kernel: no s x s tensors kept
  std::int64_t head_dim = 0;  // d; 0 means h / a. Q and the projection input are a*d wide
  std::optional<bool> out_bias = std::nullopt;  // output projection bias; unset: = bias
  bool qk_norm = false;  // RMSNorm over the whole Q (a*d) and K (k*d) projections (OLMoE)
  // Autocast: softmax runs in fp32 and keeps its fp32 output; attn x V keeps its 16-bit cast.
  bool softmax_fp32 = false;
  std::int64_t gemm_input_bytes = 0;  // kept QKV and projection inputs; 0: the dtype's (fp8: 1)
  bool causal = false;  // each query attends to the keys at or before it (decoder LM)
};
Layer attention(std::string name, const AttentionSpec& spec, DType dtype);

// Multi-head latent attention (DeepSeek-V2/V3): queries through a low-rank q_a (h -> q_rank),
// RMSNorm, q_b (q_rank -> a*(d_nope + d_rope)), or one q projection when q_rank is 0; keys and
// values through kv_a (h -> kv_rank + d_rope, the d_rope part a rotary key shared by all heads),
// RMSNorm over kv_rank, kv_b (kv_rank -> a*(d_nope + d_v)); output o (a*d_v -> h). No biases.
// Megatron split: the per-head q_b, kv_b and o across ranks; the down projections replicated.
struct MlaSpec {
  std::int64_t tokens = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t q_rank = 0;   // q_lora_rank; 0: a full-rank q projection
  std::int64_t kv_rank = 0;  // kv_lora_rank
  std::int64_t nope_dim = 0;
  std::int64_t rope_dim = 0;
  std::int64_t v_dim = 0;
  bool flash = false;
};
Layer mla_attention(std::string name, const MlaSpec& spec, DType dtype);

enum class MlpActivation { gelu, swiglu, geglu };
// Feed-forward sublayer. gelu: fc1 (h->f), GeLU, fc2 (f->h). swiglu / geglu: gate and up
// (h->f), silu(gate)*up or gelu(gate)*up, down (f->h). Plus the dropout after it when `dropout`.
// Mixture of experts when experts > 1: a router (h->experts, no bias) picks top_k experts per
// token, each expert an MLP as above. Parameters count every expert; FLOPs and saved
// activations count top_k experts per token (perfectly balanced routing, no capacity padding).
struct MlpSpec {
  std::int64_t tokens = 0;
  std::int64_t hidden = 0;
  std::int64_t ffn = 0;
  MlpActivation activation = MlpActivation::gelu;
  bool bias = true;
  bool dropout = false;
  std::int64_t experts = 0;  // 0 or 1: a dense MLP
  std::int64_t top_k = 0;    // experts per token, 1..experts (required when experts > 1)
  bool save_input = true;    // false when another layer keeps the same input (a shared norm)
  std::int64_t shared_ffn = 0;  // > 0: an always-active shared expert of this width (MoE only)
  bool shared_gate = false;     // the shared expert's output scaled by a sigmoid gate h -> 1
  bool expert_bias = false;     // the router's per-expert score bias (DeepSeek-V3), E values
  std::int64_t gemm_input_bytes = 0;  // kept fc1/gate/up and fc2/down inputs; 0: the dtype's
};
Layer mlp(std::string name, const MlpSpec& spec, DType dtype);

// Softmax cross-entropy over `vocab` classes. `head` says where the logits come from:
// tied/untied: the layer folds in the LM-head projection h -> vocab (tied: the weights belong to
// the embedding and are not counted again); none: the input already is the logits (hidden is
// ignored and taken = vocab).
enum class LossHead { none, tied, untied };
struct LossSpec {
  std::int64_t tokens = 0;
  std::int64_t hidden = 0;
  std::int64_t vocab = 0;
  LossHead head = LossHead::untied;
  bool head_bias = false;  // untied head with a V-element bias (phi-2)
};
Layer loss(std::string name, const LossSpec& spec, DType dtype);

// 2-D convolution over a C x H x W input (PyTorch semantics). Not split under tensor
// parallelism. `save_input=false` when another layer already keeps the same input tensor
// (a ResNet downsample conv shares its input with the block's first conv).
struct Conv2dSpec {
  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;
  std::int64_t kernel = 1;
  std::int64_t stride = 1;
  std::int64_t padding = 0;
  std::int64_t groups = 1;
  bool bias = true;
  std::int64_t height = 0;  // input height
  std::int64_t width = 0;   // input width
  bool save_input = true;
};
// Output H and W: floor((H + 2 padding - kernel) / stride) + 1.
std::pair<std::int64_t, std::int64_t> conv2d_output_hw(const Conv2dSpec& spec);
Layer conv2d(std::string name, const Conv2dSpec& spec, DType dtype);

// A C x H x W activation tensor (for the image kinds below).
struct ImageShape {
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
};
// BatchNorm2d with weight and bias (running statistics are buffers, not parameters).
Layer batchnorm(std::string name, const ImageShape& input, DType dtype);

enum class PoolMode { max, avg, adaptive_avg };
struct PoolSpec {
  PoolMode mode = PoolMode::max;
  ImageShape input;
  std::int64_t kernel = 0;       // max/avg
  std::int64_t stride = 0;       // max/avg; 0 means = kernel
  std::int64_t padding = 0;      // max/avg
  std::int64_t output_size = 1;  // adaptive_avg: output is output_size x output_size
};
std::pair<std::int64_t, std::int64_t> pool_output_hw(const PoolSpec& spec);
Layer pooling(std::string name, const PoolSpec& spec, DType dtype);

enum class ActivationFn { relu, gelu, silu };
// What an element-wise activation keeps for backward. `automatic`: what PyTorch keeps
// (relu: its output; gelu, silu: their input). `none` when the consumer keeps the same tensor.
enum class Save { automatic, input, output, none };
Layer activation(std::string name, std::int64_t elements, ActivationFn fn, Save save, DType dtype);
// Dropout over `elements` values: keeps a 1-byte mask per element.
Layer dropout(std::string name, std::int64_t elements, DType dtype);
// Residual add of two tensors of `elements` values: keeps nothing.
Layer add(std::string name, std::int64_t elements, DType dtype);

// A layer described by its numbers directly (per sample, already in bytes).
struct GenericSpec {
  std::int64_t params = 0;
  std::int64_t params_split = 0;
  core::Bytes saved{};
  core::Bytes saved_split{};
  core::Bytes output{};
  double flops = 0;
  double backward_factor = 2.0;
  bool matmul = false;
  core::Bytes io_bytes{};
};
Layer generic(std::string name, const GenericSpec& spec);

}  // namespace trainsim::models::kinds
