#include "sim/scenario/finetune.hpp"

#include <algorithm>

#include "models/param_tensors.hpp"

namespace trainsim::scenario {

using core::Bytes;
using models::kLinearRoles;
using models::LinearRole;

std::string_view to_string(BaseWeights b) {
  switch (b) {
    case BaseWeights::precision: return "precision";
    case BaseWeights::bf16: return "bf16";
    case BaseWeights::nf4: return "nf4";
    case BaseWeights::nf4_dq: return "nf4-dq";
    case BaseWeights::int8: return "int8";
  }
  return "precision";
}

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

const models::LinearWeight& linear(const models::Layer& l, LinearRole r) {
  return l.linears[static_cast<std::size_t>(r)];
}

// Per sample, what the layer's formula books for frozen parameters that autograd does not keep
// (docs/finetuning.md, "Backward and activations"). A frozen linear's GEMM keeps its input only
// for the weight's gradient, so PyTorch's generated autograd code saves it only when the weight
// needs one; it stays when something else keeps the same tensor: a targeted adapter's lora_A
// without dropout (it reads x itself) or bitsandbytes' autograd function (which keeps A).
void unkept_inputs(const models::Layer& l, const LoraSpec& lora, std::int64_t tensor,
                   int act_bytes, const ModuleStyle& st, bool input_grad, LayerTraining& out) {
  const auto kept = [&](std::initializer_list<LinearRole> roles, bool needs_grad) {
    for (const LinearRole r : roles)
      if (linear(l, r).count > 0 && lora.targets_role(r) && lora.dropout == 0) return true;
    // MatMul4Bit / MatMul8bitLt keep A when A or the weight needs a gradient (the weight never).
    return lora.base_keeps_input() && needs_grad;
  };
  const std::int64_t g = st.gemm_input_bytes, e = act_bytes;
  const Bytes replicated = l.saved - l.saved_split;
  switch (l.kind) {
    case models::LayerKind::attention: {
      const auto& q = linear(l, LinearRole::q);
      const auto& o = linear(l, LinearRole::o);
      if (q.count != 1 || o.count != 1) break;  // MLA lists no linears
      if (!kept({LinearRole::q, LinearRole::k, LinearRole::v}, input_grad))
        out.unkept_replicated += Bytes{g * q.tokens * q.in};
      if (kept({LinearRole::o}, true)) break;
      const std::int64_t hq = o.split ? o.in / tensor : o.in;  // this device's projection input
      // Eager modules: the contiguous copy of the attention output is the projection's alone.
      if (st.eager && !st.compiled) out.unkept_split += Bytes{e * o.tokens * hq};
      // The formula's projection input is the attention output: a flash kernel keeps it for
      // its own backward, the standard core's attn x V product keeps nothing of it.
      if (l.saved_attention_core.value > 0) out.unkept_split += Bytes{g * o.tokens * hq};
      break;
    }
    case models::LayerKind::mlp: {
      const auto& up = linear(l, LinearRole::up);
      const auto& down = linear(l, LinearRole::down);
      if (up.count == 0 || down.count == 0) break;
      // The formula books the e*s*h input among the replicated bytes unless another layer keeps
      // it (save_input false: then they hold only masks and router probabilities, less).
      const Bytes input{g * (up.tokens / std::max<std::int64_t>(l.top_k, 1)) * up.in};
      if (replicated >= input && !kept({LinearRole::gate, LinearRole::up}, input_grad))
        out.unkept_replicated += input;
      if (!kept({LinearRole::down}, true))
        out.unkept_split += Bytes{g * down.tokens * (down.split ? down.in / tensor : down.in)};
      break;
    }
    case models::LayerKind::linear:
      if (!kept({LinearRole::other}, input_grad)) out.unkept_replicated += replicated;
      break;
    case models::LayerKind::loss:
      // The LM head is never adapted nor quantized: its input is its weight gradient's alone.
      if (l.gemm_params > 0) out.unkept_replicated += replicated;
      break;
    case models::LayerKind::rmsnorm:
      // Eager RMSNorm with the fp32 upcast: `weight * x_normed.to(dtype)` keeps x_normed (the
      // formula's tensor) only for the weight's gradient; the upcast stays (eager_modules.hpp).
      if (st.eager && !st.compiled && st.norm_upcast) out.unkept_replicated += replicated;
      break;
    default:
      break;
  }
}

// LitGPT's CausalSelfAttention (lit_gpt/model.py at 8641822) views its fused qkv output as
// (B, groups, q_per_kv + 2, T, hs), splits it and reshapes q, k and v to (B, heads, T, hs); RoPE
// and `torch.cat` then make new q and k tensors, which SDPA keeps with v and its output. With as
// many groups as heads (multi-head attention) v's reshape is a view of the fused output, and
// SDPA's saved v keeps that whole output alive: beyond the V the layer formula books, the q and
// k parts, e x tokens x (q + k) per sample. With fewer groups (GQA, MQA) k and v are expanded to
// every head first, so their reshapes copy: the saved k and v are q wide instead of k and v wide,
// e x tokens x 2 x (q - k). Per sample and device (the widths are this device's slices).
Bytes fused_qkv_kept(const models::Layer& l, std::int64_t tensor, std::int64_t e) {
  const auto& q = linear(l, LinearRole::q);
  const auto& k = linear(l, LinearRole::k);
  if (q.count == 0 || k.count == 0 || linear(l, LinearRole::v).count == 0) return Bytes{0};
  const std::int64_t wq = models::stored_dims(q, tensor).out, wk = models::stored_dims(k, tensor).out;
  if (wk >= wq) return Bytes{e * q.tokens * (wq + wk) * q.count};
  return Bytes{e * q.tokens * 2 * (wq - wk) * q.count};
}

}  // namespace

// n = in x out weights.
//   nf4:    n/2 (two 4-bit codes a byte) + 4 * ceil(n/64) fp32 absmax
//   nf4-dq: n/2 + ceil(n/64) 8-bit absmax + 4 * ceil(ceil(n/64)/256) fp32 second-level absmax
//           + 4 the fp32 mean subtracted from the absmaxes before they are quantized
//   int8:   n + 4 * out fp32 row scales
Bytes base_weight_bytes(BaseWeights base, std::int64_t in, std::int64_t out, int precision_bytes) {
  const std::int64_t n = in * out;
  const std::int64_t blocks = ceil_div(n, 64);
  switch (base) {
    case BaseWeights::precision: return Bytes{n * precision_bytes};
    case BaseWeights::bf16: return Bytes{2 * n};
    case BaseWeights::nf4: return Bytes{ceil_div(n, 2) + 4 * blocks};
    case BaseWeights::nf4_dq: return Bytes{ceil_div(n, 2) + blocks + 4 * ceil_div(blocks, 256) + 4};
    case BaseWeights::int8: return Bytes{n + 4 * out};
  }
  return Bytes{n * precision_bytes};
}


LayerTraining layer_training(const models::Layer& l, std::int64_t params,
                             const std::optional<LoraSpec>& lora, int weight_bytes, int act_bytes,
                             std::int64_t tensor, const ModuleStyle& style, bool input_grad) {
  LayerTraining out;
  if (!lora) {
    out.trainable = params;
    out.weight_bytes = Bytes{params} * weight_bytes;
    return out;
  }
  out.frozen = true;
  const std::int64_t r = lora->rank, e = act_bytes;
  std::int64_t linear_params = 0;
  int shared_dropout = 0;  // fused-qkv: dropouts booked for q/k/v
  Bytes base{};
  for (std::size_t k = 0; k < kLinearRoles; ++k) {
    const models::LinearWeight& w = l.linears[k];
    if (w.count == 0) continue;
    // This device's slice: a row-parallel weight splits its input, a column-parallel its output.
    const auto [in, o] = models::stored_dims(w, tensor);
    linear_params += in * o * w.count;
    base += base_weight_bytes(lora->base, in, o, weight_bytes) * w.count;
    if (lora->quantized()) out.dequantized = std::max(out.dequantized, Bytes{in * o * e});
    if (lora->base == BaseWeights::nf4 || lora->base == BaseWeights::nf4_dq) {
      out.dequant_traffic += Bytes{2 * in * o * e * w.count};
      out.dequant_launches += static_cast<std::int32_t>(w.count) * (lora->base == BaseWeights::nf4_dq ? 2 : 1);
    }
    // MatMul8bitLt keeps CAt, A's int8 transpose, per linear whenever A needs a gradient.
    const auto role = static_cast<LinearRole>(k);
    const bool first_input = role != LinearRole::o && role != LinearRole::down;
    if (lora->base == BaseWeights::int8 && (input_grad || !first_input))
      out.quantized_saved += Bytes{w.tokens * in};
    if (!lora->targets_role(role)) continue;
    // A (r x in) and B (o x r) per copy; per row: x A^T (2*r*in FLOPs) and then B (2*r*o).
    out.trainable += r * (in + o) * w.count;
    out.adapter_flops += 2.0 * double(w.tokens) * double(r) * double(in + o);
    // lora_B keeps its input, lora_A's rank-r output; lora_A keeps x itself, the tensor the base
    // linear keeps, unless dropout makes a new one (its output and its 1-byte mask).
    out.adapter_saved += Bytes{e * w.tokens * r};
    // The dropout runs on the input this device's A reads (a row-parallel one's slice); LitGPT's
    // fused q/k/v adapters share one dropout of their one input.
    const bool qkv = k <= static_cast<std::size_t>(LinearRole::v);
    const bool fused = qkv && lora->layout == LoraLayout::fused_qkv;
    if (lora->dropout > 0 && !(fused && shared_dropout++))
      out.adapter_saved += Bytes{(e + 1) * w.tokens * in};
    // LitGPT's zero_pad scatters the enabled parts' delta into a zeros tensor of the qkv width
    // with index_copy, whose derivative (`grad.index_select(dim, index).expand_as(source)`)
    // keeps its source: a copy of the delta, e x tokens x out per enabled part, unless q, k and
    // v are all enabled (then zero_pad returns the delta as it is).
    if (fused && !(lora->targets_role(LinearRole::q) && lora->targets_role(LinearRole::k) &&
                   lora->targets_role(LinearRole::v)))
      out.adapter_saved += Bytes{e * w.tokens * o};
  }
  if (lora->layout == LoraLayout::fused_qkv) out.adapter_saved += fused_qkv_kept(l, tensor, e);
  unkept_inputs(l, *lora, tensor, act_bytes, style, input_grad, out);
  // The adapters' weights at the precision's bytes, the frozen ones as stored.
  out.weight_bytes = Bytes{out.trainable + std::max<std::int64_t>(params - linear_params, 0)} *
                         weight_bytes + base;
  return out;
}

std::int64_t trainable_parameters(const models::Model& m, const std::optional<LoraSpec>& lora) {
  if (!lora) return m.parameters();
  std::int64_t total = 0;
  for (const auto v : m.order) {
    const models::Layer& l = m.graph[v];
    for (std::size_t k = 0; k < kLinearRoles; ++k) {
      const models::LinearWeight& w = l.linears[k];
      if (w.count > 0 && lora->targets_role(static_cast<LinearRole>(k)))
        total += lora->rank * (w.in + w.out) * w.count;
    }
  }
  return total;
}

}  // namespace trainsim::scenario
