// Sequence-model kinds. Notation per sample: s tokens, h hidden, a heads, k = kv_heads,
// d = h/a head dim, f ffn, V vocab, e activation bytes. Mask bytes are 1 per element.
// FLOPs of the matmul kinds count GEMMs only (2*m*n*k); their element-wise work (bias, GeLU,
// softmax) is memory-bound and enters the roofline through io_bytes instead.
#include "models/kinds.hpp"
#include "models/kinds_util.hpp"

namespace trainsim::models::kinds {

using core::Bytes;
using detail::bytes;
using detail::prod;
using detail::sum;
using detail::require_positive;

// linear: params = in*out (+ out bias), replicated.
// saved = e*t*in (input, for the weight gradient; g*t*in with gemm_input_bytes g); output = e*t*out; flops = 2*t*in*out;
// io = e*t*(in + out).
Layer linear(std::string name, const LinearSpec& spec, DType dtype) {
  require_positive(spec.tokens, "tokens");
  require_positive(spec.in, "in");
  require_positive(spec.out, "out");
  const std::int64_t e = dtype_bytes(dtype), t = spec.tokens;
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::linear;
  const std::int64_t g = spec.gemm_input_bytes > 0 ? spec.gemm_input_bytes : e;
  l.params = sum({prod({spec.in, spec.out}), spec.bias ? spec.out : 0});
  l.gemm_params = l.params;
  l.saved = bytes({g, t, spec.in});
  l.output = bytes({e, t, spec.out});
  l.flops = 2.0 * double(t) * double(spec.in) * double(spec.out);
  l.matmul = true;
  l.io_bytes = bytes({e, t, sum({spec.in, spec.out})});
  l.linears[static_cast<std::size_t>(LinearRole::other)] = {spec.in, spec.out, 1, t, false, false};
  if (spec.bias) l.tensors.push_back({spec.out});
  return l;
}

// embedding: params = V*h (split by vocab rows) + P*h learned positions + T*h token types
// (both replicated).
// saved = s*h dropout mask (replicated) with dropout, else nothing (the token ids are input).
// output = e*s*h. flops = s*h per element-wise pass (position add, type add, dropout).
// io = 2e*s*h (gather rows, write) + e*s*h per position or type add + (2e+1)*s*h for dropout.
// Tensor parallel: one forward all-reduce of the output (vocab-parallel lookup), none back.
Layer embedding(std::string name, const EmbeddingSpec& spec, DType dtype) {
  require_positive(spec.tokens, "tokens");
  require_positive(spec.vocab, "vocab");
  require_positive(spec.hidden, "hidden");
  detail::require_non_negative(spec.max_positions, "max_positions");
  detail::require_non_negative(spec.token_types, "token_types");
  if (spec.max_positions > 0 && spec.tokens > spec.max_positions)
    throw std::invalid_argument("sequence length (" + std::to_string(spec.tokens) +
                                ") exceeds max_positions (" + std::to_string(spec.max_positions) +
                                ") of the learned position embeddings");
  const std::int64_t e = dtype_bytes(dtype), s = spec.tokens, h = spec.hidden;
  const std::int64_t sh = prod({s, h});
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::embedding;
  l.params_split = prod({spec.vocab, h});
  l.params = sum({l.params_split, prod({sum({spec.max_positions, spec.token_types}), h})});
  l.tensors.push_back({spec.vocab, h});
  if (spec.max_positions > 0) l.tensors.push_back({spec.max_positions, h});
  if (spec.token_types > 0) l.tensors.push_back({spec.token_types, h});
  l.saved = spec.dropout ? Bytes{sh} : Bytes{};
  l.output = Bytes{e * sh};
  const int adds = (spec.max_positions > 0 ? 1 : 0) + (spec.token_types > 0 ? 1 : 0);
  const int passes = adds + (spec.dropout ? 1 : 0);
  l.flops = double(passes) * double(sh);
  l.backward_factor = 1.0;
  l.io_bytes = bytes({2 * e, sh});
  l.io_bytes += bytes({e * adds, sh});
  if (spec.dropout) l.io_bytes += bytes({2 * e + 1, sh});
  l.tp_allreduce_forward = 1;
  l.tp_allreduce_bytes = l.output;
  l.vocab = spec.vocab;
  return l;
}

namespace {
// Norms: saved = e*s*h input (replicated; the per-token statistics are ignored, as in
// Korthikanti et al.; 0 when save_input is off); output = e*s*h; io = 2e*s*h; flops =
// ops_per_element * s*h.
Layer norm(std::string name, LayerKind kind, const NormSpec& spec, DType dtype,
           std::int64_t params_per_feature, double ops_per_element) {
  require_positive(spec.tokens, "tokens");
  require_positive(spec.hidden, "hidden");
  const std::int64_t e = dtype_bytes(dtype), sh = prod({spec.tokens, spec.hidden});
  Layer l;
  l.name = std::move(name);
  l.kind = kind;
  l.params = prod({params_per_feature, spec.hidden});
  l.tensors.push_back({spec.hidden, 0, 1, params_per_feature});  // weight [and bias]
  l.saved = spec.save_input ? bytes({e, sh}) : Bytes{};
  l.output = bytes({e, sh});
  l.flops = ops_per_element * double(sh);
  l.io_bytes = bytes({2 * e, sh});
  return l;
}
}  // namespace

// layernorm: params 2h (weight, bias); 8 ops/element (mean 1, variance 3, normalize 2, affine 2).
Layer layernorm(std::string name, const NormSpec& spec, DType dtype) {
  return norm(std::move(name), LayerKind::layernorm, spec, dtype, 2, 8.0);
}
// rmsnorm: params h (weight); 4 ops/element (square and sum 2, scale 1, weight 1).
Layer rmsnorm(std::string name, const NormSpec& spec, DType dtype) {
  return norm(std::move(name), LayerKind::rmsnorm, spec, dtype, 1, 4.0);
}

// attention, with hq = a*d the Q width (= h unless head_dim is given) and hk = k*d the K/V width
// (below written for hq = h; with head_dim, h becomes hq in Q, the core and the proj input):
// params = h*(h + 2hk) QKV weight [+ (h + 2hk) QKV bias] + h*h proj weight [+ h proj bias];
//   split: QKV weight and bias (column-parallel), proj weight (row-parallel); proj bias replicated.
// saved, replicated: e*s*h QKV input [+ s*h output-dropout mask];
// saved, split: e*s*h Q + e*s*hk K + e*s*hk V + e*s*h proj input, and the attention core:
//   standard: e*a*s^2 softmax output [+ a*s^2 dropout mask + e*a*s^2 dropout output];
//   flash:    4*a*s fp32 log-sum-exp and no s^2 term (the kernel recomputes the scores).
//   With dropout, e=2, k=a: 11*s*h + 5*a*s^2 (Korthikanti et al. 2022, eq. 1 attention part).
// saved_attention_core = the s^2 terms (what selective recomputation drops; 0 with flash).
// softmax_fp32 (autocast): the standard core keeps the fp32 softmax output, its mask and the
//   e-byte cast attn x V reads: (4 + e)*a*s^2 [+ a*s^2].
// gemm_input_bytes g (fp8: 1): the QKV input and the proj input are kept at g bytes, not e.
// flops = 2*s*h*(h + 2hk) + 2*s^2*h (QK^T) + 2*s^2*h (attn x V) + 2*s*h^2; core = 4*s^2*h.
// qk_norm (OLMoE's RMSNorm over the whole Q and K): + hq + hk weights (split with the heads),
//   + e*s*(hq + hk) saved (split: the norms' inputs), + 4*s*(hq + hk) FLOPs, + 2e*s*(hq + hk) io.
Layer attention(std::string name, const AttentionSpec& spec, DType dtype) {
  require_positive(spec.tokens, "tokens");
  require_positive(spec.hidden, "hidden");
  require_positive(spec.heads, "heads");
  const std::int64_t kv = spec.kv_heads == 0 ? spec.heads : spec.kv_heads;
  require_positive(kv, "kv_heads");
  detail::require_non_negative(spec.head_dim, "head_dim");
  if (spec.head_dim == 0) detail::require_divides(spec.heads, "heads", spec.hidden, "hidden");
  detail::require_divides(kv, "kv_heads", spec.heads, "heads");
  const std::int64_t e = dtype_bytes(dtype), s = spec.tokens, h = spec.hidden, a = spec.heads;
  const std::int64_t d = spec.head_dim == 0 ? h / a : spec.head_dim;
  const std::int64_t hq = prod({a, d}), hk = prod({kv, d});
  const std::int64_t sh = prod({s, h}), shq = prod({s, hq}), shk = prod({s, hk});
  const std::int64_t ass = prod({a, s, s});

  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::attention;
  const std::int64_t qkv = sum({hq, prod({2, hk})});  // Q, K and V outputs
  const std::int64_t qkv_w = prod({h, qkv}), qkv_b = spec.bias ? qkv : 0;
  const std::int64_t proj_w = prod({hq, h}), proj_b = spec.out_bias.value_or(spec.bias) ? h : 0;
  l.params_split = sum({qkv_w, qkv_b, proj_w});
  l.params = sum({l.params_split, proj_b});
  l.linears[static_cast<std::size_t>(LinearRole::q)] = {h, hq, 1, s};
  l.linears[static_cast<std::size_t>(LinearRole::k)] = {h, hk, 1, s};
  l.linears[static_cast<std::size_t>(LinearRole::v)] = {h, hk, 1, s};
  l.linears[static_cast<std::size_t>(LinearRole::o)] = {hq, h, 1, s, true};
  if (spec.bias) l.tensors.insert(l.tensors.end(), {{hq}, {hk}, {hk}});
  if (proj_b > 0) l.tensors.push_back({h});

  l.gemm_params = l.params;

  const std::int64_t g = spec.gemm_input_bytes > 0 ? spec.gemm_input_bytes : e;
  const Bytes replicated = bytes({g, sh}) + (spec.dropout ? Bytes{sh} : Bytes{});
  Bytes core{};
  if (!spec.flash && spec.softmax_fp32)
    core = bytes({4 + e, ass}) + (spec.dropout ? Bytes{ass} : Bytes{});
  else if (!spec.flash)
    core = bytes({e, ass}) + (spec.dropout ? bytes({1 + e, ass}) : Bytes{});
  const Bytes lse = spec.flash ? bytes({4, a, s}) : Bytes{};
  // Q, K, V and the projection's input.
  l.saved_split = bytes({e, sum({shq, prod({2, shk})})}) + bytes({g, shq}) + lse + core;
  l.saved_attention_core = core;
  if (spec.qk_norm) {  // the norms' weights and inputs: the un-normed Q and K
    l.params_split = sum({l.params_split, hq, hk});
    l.params = sum({l.params, hq, hk});
    l.tensors.insert(l.tensors.end(), {{hq}, {hk}});
    l.saved_split += bytes({e, sum({shq, shk})});
  }
  l.saved = replicated + l.saved_split;

  l.output = bytes({e, sh});
  const double S = double(s), H = double(h), HQ = double(hq), HK = double(hk);
  l.attention_core_flops = 4.0 * S * S * HQ;
  l.flops = 2.0 * S * H * (HQ + 2.0 * HK) + l.attention_core_flops + 2.0 * S * HQ * H;
  if (spec.qk_norm) l.flops += 4.0 * S * (HQ + HK);  // RMSNorm: 4 ops per element
  l.matmul = true;

  // io: QKV GEMM reads e*s*h and writes e*s*(h + 2hk); proj GEMM reads and writes e*s*h.
  // standard core: scores read Q,K write e*a*s^2; softmax reads and writes e*a*s^2;
  //   [dropout reads e*a*s^2, writes (e+1)*a*s^2]; attn x V reads e*a*s^2 + V, writes e*s*h.
  // flash core: reads Q, K, V and writes e*s*h + the 4*a*s log-sum-exp.
  // [output dropout reads e*s*h, writes (e+1)*s*h].
  Bytes io = bytes({e, sum({sh, shq, prod({2, shk})})}) + bytes({e, sum({sh, shq})});
  if (spec.flash) {
    io += bytes({e, sum({shq, prod({2, shk})})}) + bytes({e, shq}) + lse;
  } else {
    io += bytes({e, sum({shq, shk})}) + bytes({e, ass});              // scores
    io += bytes({2 * e, ass});                                  // softmax
    if (spec.dropout) io += bytes({2 * e + 1, ass});            // attention dropout
    io += bytes({e, ass}) + bytes({e, shk}) + bytes({e, shq});  // attn x V
  }
  if (spec.dropout) io += bytes({2 * e + 1, sh});
  if (spec.qk_norm) io += bytes({2 * e, sum({shq, shk})});
  l.io_bytes = io;

  l.tp_allreduce_forward = 1;
  l.tp_allreduce_backward = 1;
  l.tp_allreduce_bytes = l.output;
  l.heads = a;
  l.kv_heads = kv;
  l.kv_width = hk;
  l.causal = spec.causal;
  return l;
}

// mlp, gelu: params = h*f [+ f] fc1 + f*h [+ h] fc2; split: fc1 weight and bias, fc2 weight.
//   saved, replicated: e*s*h fc1 input [+ s*h dropout mask]; split: e*s*f GeLU input +
//   e*s*f fc2 input. With f = 4h, e=2 and dropout: 19*s*h (Korthikanti et al. 2022).
//   flops = 4*s*h*f.
// mlp, swiglu: params = 3*h*f [+ 2f + h]; split: gate, up (weights, biases), down weight.
//   saved, split: e*s*f gate output + e*s*f up output + e*s*f product (down's input); silu of
//   the gate is recomputed from the gate output in backward rather than kept.
//   flops = 6*s*h*f.
// mlp, geglu: as swiglu with gelu(gate) (Gemma).
// Without save_input the e*s*h input is not counted (another layer keeps the same tensor).
// gemm_input_bytes g (fp8: 1): the fc1/gate/up input and the fc2/down input are kept at g bytes.
// mixture of experts (E = experts > 1, k = top_k): params = E * (expert params above) + h*E
//   router weight (replicated; experts split as dense MLPs). saved: e*s*h input and 4*s*E fp32
//   router probabilities (replicated) + k * (split saved of one dense expert): each token's
//   activations exist in each of its k experts. flops = 2*s*h*E + k * dense flops.
//   [expert_bias: + E router score biases (DeepSeek-V3's e_score_correction_bias), replicated.]
//   The routed experts' part (E * expert params, k * expert FLOPs, k * expert saved) is also
//   kept in expert_params / expert_flops / expert_saved for expert parallelism.
// shared expert (shared_ffn = fs > 0; Qwen2-MoE, DeepSeek-V3): one more dense MLP of width fs
//   that every token visits: its params, saved (split) and FLOPs as a dense MLP's above;
//   [shared_gate: + h params (replicated), 2*s*h FLOPs and the e*s sigmoid output saved].
// output = e*s*h; one all-reduce forward and one backward under tensor parallelism.
Layer mlp(std::string name, const MlpSpec& spec, DType dtype) {
  require_positive(spec.tokens, "tokens");
  require_positive(spec.hidden, "hidden");
  require_positive(spec.ffn, "ffn");
  detail::require_non_negative(spec.experts, "experts");
  const bool moe = spec.experts > 1;
  if (moe && (spec.top_k < 1 || spec.top_k > spec.experts))
    throw std::invalid_argument("top_k must be between 1 and experts (" +
                                std::to_string(spec.experts) + "), got " +
                                std::to_string(spec.top_k));
  const std::int64_t E = moe ? spec.experts : 1, k = moe ? spec.top_k : 1;
  const std::int64_t e = dtype_bytes(dtype), s = spec.tokens, h = spec.hidden, f = spec.ffn;
  const std::int64_t sh = prod({s, h}), sf = prod({s, f}), hf = prod({h, f});
  const bool glu = spec.activation != MlpActivation::gelu;
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::mlp;
  const std::int64_t in_mats = glu ? 2 : 1;  // matrices h -> f
  const std::int64_t expert_split = sum({prod({in_mats + 1, hf}), spec.bias ? prod({in_mats, f}) : 0});
  const std::int64_t router = moe ? prod({h, E}) : 0;
  detail::require_non_negative(spec.shared_ffn, "shared_ffn");
  if (!moe && (spec.shared_ffn > 0 || spec.shared_gate || spec.expert_bias))
    throw std::invalid_argument("a shared expert or expert bias needs experts > 1");
  const std::int64_t fs = spec.shared_ffn;
  const std::int64_t shared = sum({prod({in_mats + 1, h, fs}), spec.bias ? prod({in_mats, fs}) : 0});
  const std::int64_t shared_gate = spec.shared_gate ? h : 0;
  const std::int64_t expert_bias = spec.expert_bias ? E : 0;
  l.params_split = sum({prod({E, expert_split}), shared});
  l.params = sum({l.params_split, prod({E, spec.bias ? h : 0}), fs > 0 && spec.bias ? h : 0,
                  router, shared_gate, expert_bias});
  // The routed experts' linears (LoRA targets and QLoRA's quantized weights; a shared expert's
  // are not listed yet).
  if (glu) l.linears[static_cast<std::size_t>(LinearRole::gate)] = {h, f, E, prod({s, k})};
  l.linears[static_cast<std::size_t>(LinearRole::up)] = {h, f, E, prod({s, k})};
  l.linears[static_cast<std::size_t>(LinearRole::down)] = {f, h, E, prod({s, k}), true};
  if (spec.bias) l.tensors.insert(l.tensors.end(), {{f, 0, 1, prod({in_mats, E})}, {h, 0, 1, E}});
  if (moe) l.tensors.push_back({E, h});  // the router, nn.Linear(h, E)
  if (fs > 0) {  // the shared expert's matrices and biases
    l.tensors.insert(l.tensors.end(), {{fs, h, 1, in_mats}, {h, fs}});
    if (spec.bias) l.tensors.insert(l.tensors.end(), {{fs, 0, 1, in_mats}, {h}});
  }
  if (spec.shared_gate) l.tensors.push_back({1, h});  // nn.Linear(h, 1)
  if (spec.expert_bias) l.tensors.push_back({E});

  l.gemm_params = l.params;

  const std::int64_t g = spec.gemm_input_bytes > 0 ? spec.gemm_input_bytes : e;
  const Bytes replicated = (spec.save_input ? bytes({g, sh}) : Bytes{}) +
                           (spec.dropout ? Bytes{sh} : Bytes{}) +
                           (moe ? bytes({4, s, E}) : Bytes{}) +
                           (spec.shared_gate ? bytes({e, s}) : Bytes{});
  // Kept per token and ffn feature: the activation's inputs at e, the down/fc2 input at g.
  const std::int64_t per_feature = sum({prod({e, (glu ? 2 : 1)}), g});
  const Bytes routed_saved = bytes({k, per_feature, sf});
  l.saved_split = routed_saved + bytes({per_feature, s, fs});
  l.saved = replicated + l.saved_split;
  l.output = bytes({e, sh});
  const double routed_flops =
      double(k) * 2.0 * double(in_mats + 1) * double(s) * double(h) * double(f);
  l.flops = routed_flops + (moe ? 2.0 * double(s) * double(h) * double(E) : 0.0) +
            2.0 * double(in_mats + 1) * double(s) * double(h) * double(fs) +
            (spec.shared_gate ? 2.0 * double(s) * double(h) : 0.0);
  l.matmul = true;
  if (moe) {
    l.experts = E;
    l.top_k = k;
    l.expert_params = sum({prod({E, expert_split}), prod({E, spec.bias ? h : 0})});
    l.expert_flops = routed_flops;
    l.expert_saved = routed_saved;
  }

  // io per expert a token visits: GEMMs in (read e*s*h each, write e*s*f each); activation
  // (read in_mats*e*s*f, write e*s*f); down GEMM (read e*s*f, write e*s*h);
  // [router reads e*s*h, writes 4*s*E]; [dropout reads e*s*h, writes (e+1)*s*h].
  Bytes io = bytes({in_mats * e, sum({sh, sf})});
  io += bytes({e * (in_mats + 1), sf});
  io += bytes({e, sum({sf, sh})});
  io = io * k;
  if (moe) io += bytes({e, sh}) + bytes({4, s, E});
  if (fs > 0) {  // the shared expert: a dense MLP of width fs
    const std::int64_t sfs = prod({s, fs});
    io += bytes({in_mats * e, sum({sh, sfs})}) + bytes({e * (in_mats + 1), sfs}) +
          bytes({e, sum({sfs, sh})});
  }
  if (spec.shared_gate) io += bytes({e, sh}) + bytes({e, s});
  if (spec.dropout) io += bytes({2 * e + 1, sh});
  l.io_bytes = io;

  l.tp_allreduce_forward = 1;
  l.tp_allreduce_backward = 1;
  l.tp_allreduce_bytes = l.output;
  return l;
}

// loss: softmax cross-entropy over V classes per token.
// head tied/untied: folds in the LM-head projection h -> V (params V*h [+ V head bias] when
//   untied, split by vocab rows; 0 when tied: the embedding owns them). saved = e*s*h head input
//   (replicated)
//   + 4*s*V fp32 logits (split; Megatron's 4sbv). flops = 2*s*h*V + 3*s*V (log-softmax: max,
//   exp-sum, subtract). io = e*s*h + 2 * 4*s*V (write and re-read fp32 logits). Tensor
//   parallel: one backward all-reduce of the e*s*h input gradient (the vocab-parallel loss's
//   three all-reduces of s floats in forward are negligible and not modelled).
// head none: the input is the logits. saved = 4*s*V fp32 softmax (replicated);
//   flops = 3*s*V; io = e*s*V + 4*s*V.
// output = 4 bytes (the fp32 loss of the sample).
Layer loss(std::string name, const LossSpec& spec, DType dtype) {
  require_positive(spec.tokens, "tokens");
  require_positive(spec.vocab, "vocab");
  const bool head = spec.head != LossHead::none;
  if (head) require_positive(spec.hidden, "hidden");
  const std::int64_t e = dtype_bytes(dtype), s = spec.tokens, V = spec.vocab;
  const std::int64_t h = head ? spec.hidden : 0;
  const Bytes logits = bytes({4, s, V});
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::loss;
  if (spec.head_bias && spec.head != LossHead::untied)
    throw std::invalid_argument("a head bias needs an untied head");
  l.params = spec.head == LossHead::untied ? sum({prod({V, h}), spec.head_bias ? V : 0}) : 0;
  l.params_split = l.params;
  if (spec.head == LossHead::untied) {
    l.tensors.push_back({V, h});
    if (spec.head_bias) l.tensors.push_back({V});
  }
  l.gemm_params = head ? prod({V, h}) + (spec.head_bias ? V : 0) : 0;
  l.output = Bytes{4};
  l.flops = 3.0 * double(s) * double(V);
  if (head) {
    l.saved_split = logits;
    l.saved = bytes({e, s, h}) + logits;
    l.flops += 2.0 * double(s) * double(h) * double(V);
    l.matmul = true;
    l.io_bytes = bytes({e, s, h}) + logits * 2;
    l.tp_allreduce_backward = 1;
    l.tp_allreduce_bytes = bytes({e, s, h});
  } else {
    l.saved = logits;
    l.backward_factor = 1.0;
    l.io_bytes = bytes({e, s, V}) + logits;
  }
  l.vocab = V;
  return l;
}

}  // namespace trainsim::models::kinds
