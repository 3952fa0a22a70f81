#pragma once
// A layer is plain data: what it owns (parameters), what it keeps for backward (saved
// activations), what it hands on (output) and what it costs (FLOPs, bytes moved), all per
// sample — one sequence of seq_len tokens, or one image — and already in bytes for the
// activation dtype the model was built with. The split fields say how the layer divides under
// Megatron-style tensor parallelism so sim/parallel can shard it without knowing layer kinds.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"

namespace trainsim::models {

enum class DType { fp32, fp16, bf16 };
int dtype_bytes(DType t);  // 4, 2, 2

enum class LayerKind {
  linear,
  embedding,
  layernorm,
  rmsnorm,
  attention,
  mlp,
  conv2d,
  batchnorm,
  pooling,
  activation,
  dropout,
  add,   // residual add
  loss,  // softmax cross-entropy (optionally with the output projection folded in)
  generic
};
std::string_view to_string(LayerKind k);
std::optional<LayerKind> layer_kind_from_string(std::string_view s);
std::string layer_kind_names();  // "linear, embedding, ..." for error messages

// The linear maps inside a layer, by role (the Hugging Face Llama module names: q_proj, k_proj,
// v_proj, o_proj, gate_proj, up_proj, down_proj; a GeLU MLP's fc1 is `up` and fc2 `down`; a
// plain linear layer is `other`). Fine-tuning reads them: LoRA adapts them by role and QLoRA
// quantizes them (sim/scenario/finetune.hpp).
enum class LinearRole : std::uint8_t { q, k, v, o, gate, up, down, other };
inline constexpr std::size_t kLinearRoles = 8;
std::string_view to_string(LinearRole r);
// One role's weight: an in x out matrix (bias not counted), `count` of them (a mixture of
// experts' experts; 0 when the layer has no such linear). Under Megatron tensor parallelism a
// row-parallel weight (o, down) splits its input dimension, a column-parallel one its output;
// `split` is false for a replicated weight.
struct LinearWeight {
  std::int64_t in = 0, out = 0, count = 0, tokens = 0;
  bool row_parallel = false;
  bool split = true;
};

// One parameter tensor (an nn.Parameter) outside `linears`, by shape: a vector of `rows`
// elements when cols is 0, else a lead x rows x cols tensor (lead 1 for a matrix; a conv
// weight's out x in/groups leading dimensions before its k x k kernel); `count` copies.
// Optimizers whose state size depends on the shape read it (sim/scenario/optimizer_states.hpp).
struct ParamTensor {
  std::int64_t rows = 0, cols = 0, lead = 1, count = 1;
  std::int64_t elements() const { return lead * rows * (cols > 0 ? cols : 1) * count; }
};

struct Layer {
  std::string name;  // unique in the model, e.g. "block.17.attn"
  LayerKind kind = LayerKind::generic;
  int block = -1;  // index of the repeated block (transformer layer) it sits in; -1 outside blocks

  // Parameters (element count, dtype-free). `params_split` of them are divided across tensor
  // ranks (column/row-parallel weights, attention heads, vocab rows); the rest are replicated.
  std::int64_t params = 0;
  std::int64_t params_split = 0;
  // The weights of its linear maps by role (indexed by LinearRole), part of `params`.
  std::array<LinearWeight, kLinearRoles> linears{};
  // The other parameter tensors (biases, norm weights, embedding tables, the LM head, routers).
  // With the linears' weights they add up to `params` for the built-in kinds; a layer read as
  // `generic` lists none (models/param_tensors.hpp then counts its params as one vector).
  std::vector<ParamTensor> tensors;

  // Activation bytes saved for backward, per sample. `saved_split` of them are divided across
  // tensor ranks; the rest are replicated under tensor parallelism and divided only with
  // sequence parallelism. `saved_attention_core` (part of saved_split) is what selective
  // recomputation drops: the s x s softmax, its dropout mask and output (Korthikanti et al. 2022).
  core::Bytes saved{};
  core::Bytes saved_split{};
  core::Bytes saved_attention_core{};

  // Output activation bytes per sample (what the next layer reads); transient in forward.
  core::Bytes output{};
  bool output_split = false;  // true when the output is divided across tensor ranks

  // Forward FLOPs per sample; backward = backward_factor x forward (2 for matmul layers: grads
  // of inputs and of weights; 1 for parameter-free element-wise layers).
  double flops = 0;
  double backward_factor = 2.0;
  double attention_core_flops = 0;  // part of `flops` in QK^T, softmax and attn x V
  bool matmul = false;              // dominated by GEMMs (tensor cores) vs memory-bound
  // Parameters its GEMMs read as weights (a tied LM head reads the embedding's V*h): what a
  // precision that casts weights per forward (autocast, fp8) copies. Split like params_split.
  std::int64_t gemm_params = 0;
  // Activation bytes read and written by the forward kernel(s), per sample (roofline input).
  core::Bytes io_bytes{};

  // Megatron tensor parallelism: all-reduces of `output` per sample in forward / backward
  // (attention and MLP: 1 and 1; vocab-parallel embedding: 1 and 0).
  int tp_allreduce_forward = 0;
  int tp_allreduce_backward = 0;
  // Size of each of those all-reduces, per sample: `output` for attention, MLP and embedding;
  // the input gradient (e*s*h) for the loss head, whose output is only a 4-byte loss.
  core::Bytes tp_allreduce_bytes{};

  // Divisibility facts for validating tensor degrees (0 when not applicable).
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t kv_width = 0;  // attention: K (= V) width, kv_heads x head_dim (context parallelism)
  bool causal = false;        // attention: causal mask (decoder LM; Megatron's upper-triangular softmax)
  std::int64_t vocab = 0;

  // Mixture of experts (0 for dense layers): `experts` routed experts, `top_k` per token.
  // The routed experts' share of the figures above, which expert parallelism divides:
  // their parameters (part of params_split), their forward FLOPs and their saved bytes (part
  // of saved_split), per sample with perfectly balanced routing.
  std::int64_t experts = 0;
  std::int64_t top_k = 0;
  std::int64_t expert_params = 0;
  double expert_flops = 0;
  core::Bytes expert_saved{};
  // Switch Transformer's capacity factor (Fedus et al. 2021, section 2.2): each expert takes at
  // most ceil(factor x tokens x top_k / experts) of a micro-batch's tokens, its buffer padded to
  // that many (Megatron-LM --moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity);
  // tokens past it are dropped. 0: no capacity, no dropping (Mixtral, Qwen2-MoE, OLMoE,
  // DeepSeek-V3 route every token).
  double capacity_factor = 0;
};

}  // namespace trainsim::models
