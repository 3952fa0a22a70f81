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
                             std::int64_t tensor) {
  LayerTraining out;
  if (!lora) {
    out.trainable = params;
    out.weight_bytes = Bytes{params} * weight_bytes;
    return out;
  }
  out.frozen = true;
  const std::int64_t r = lora->rank, e = act_bytes;
  std::int64_t linear_params = 0;
  Bytes base{};
  for (std::size_t k = 0; k < kLinearRoles; ++k) {
    const models::LinearWeight& w = l.linears[k];
    if (w.count == 0) continue;
    // This device's slice: a row-parallel weight splits its input, a column-parallel its output.
    const auto [in, o] = models::stored_dims(w, tensor);
    linear_params += in * o * w.count;
    base += base_weight_bytes(lora->base, in, o, weight_bytes) * w.count;
    if (lora->quantized()) out.dequantized = std::max(out.dequantized, Bytes{in * o * e});
    if (!lora->targets_role(static_cast<LinearRole>(k))) continue;
    // A (r x in) and B (o x r) per copy; per row: x A^T (2*r*in FLOPs) and then B (2*r*o).
    out.trainable += r * (in + o) * w.count;
    out.adapter_flops += 2.0 * double(w.tokens) * double(r) * double(in + o);
    // lora_B keeps its input, lora_A's rank-r output; lora_A keeps x itself, the tensor the base
    // linear keeps, unless dropout makes a new one (its output and its 1-byte mask).
    out.adapter_saved += Bytes{e * w.tokens * r};
    // The dropout runs on the input this device's A reads (a row-parallel one's slice).
    if (lora->dropout > 0) out.adapter_saved += Bytes{(e + 1) * w.tokens * in};
  }
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
