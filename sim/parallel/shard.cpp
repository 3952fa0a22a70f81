#include "sim/parallel/shard.hpp"

namespace trainsim::parallel {

std::vector<LayerShard> shard_layers(const models::Model& m, std::int64_t t, bool sp,
                                     std::int64_t expert) {
  std::vector<LayerShard> out;
  out.reserve(m.order.size());
  for (auto v : m.order) {
    const models::Layer& l = m.graph[v];
    LayerShard s;
    const std::int64_t replicated_params = l.params - l.params_split;
    s.params = l.params_split / t + replicated_params;
    if (l.experts > 1) {  // every routed expert on one of `expert` ranks
      const std::int64_t local = l.expert_params / t;
      s.expert_params = local / expert;
      s.params -= local - s.expert_params;
    }
    // A GEMM's weights split like the layer's (a tied head's vocab rows like the embedding's).
    s.gemm_params = (l.params_split > 0 || l.vocab > 0) ? l.gemm_params / t : l.gemm_params;
    // The routed experts are GEMM weights: a rank casts only the experts it holds.
    if (l.experts > 1) s.gemm_params -= l.expert_params / t - s.expert_params;
    const core::Bytes replicated_saved = l.saved - l.saved_split;
    s.saved = l.saved_split / t + (sp ? replicated_saved / t : replicated_saved);
    s.saved_core = l.saved_attention_core / t;
    // What one tensor-parallel all-reduce moves (the loss head reduces its input gradient).
    s.full_output = l.tp_allreduce_bytes.value > 0 ? l.tp_allreduce_bytes : l.output;
    s.output = (l.output_split || sp) ? l.output / t : l.output;
    const bool split_work = l.params_split > 0 || l.saved_split.value > 0 || l.output_split;
    const std::int64_t work_div = (split_work || sp) ? t : 1;
    s.flops = l.flops / static_cast<double>(work_div);
    s.core_flops = l.attention_core_flops / static_cast<double>(t);
    s.io = l.io_bytes / work_div;
    s.backward_factor = l.backward_factor;
    s.matmul = l.matmul;
    s.kind = l.kind;
    s.allreduce_forward = t > 1 ? l.tp_allreduce_forward : 0;
    s.allreduce_backward = t > 1 ? l.tp_allreduce_backward : 0;
    out.push_back(s);
  }
  return out;
}

}  // namespace trainsim::parallel

namespace trainsim::parallel {

void apply_training(const scenario::Scenario& s, std::int64_t t, std::vector<LayerShard>& shards,
                    bool sp) {
  const auto& m = s.model;
  const auto& lora = s.training.lora;
  const int wb = scenario::state_bytes_per_param(s.training.precision, s.training.optimizer).weights;
  const int e = models::dtype_bytes(scenario::activation_dtype(s.training.precision));
  scenario::ModuleStyle style;
  style.gemm_input_bytes = s.training.precision == scenario::Precision::fp8 ? 1 : e;  // fp8 linears keep fp8 inputs
  style.eager = s.training.eager_modules;
  style.compiled = s.training.compile;
  style.norm_upcast = s.training.norm_upcast;
  std::size_t lowest = shards.size();
  for (std::size_t i = 0; i < shards.size(); ++i) {
    LayerShard& sh = shards[i];
    const models::Layer& l = m.graph[m.order[i]];
    // The lowest adapted layer's input needs no gradient: it is the first layer with trainables.
    const bool first = lowest == shards.size();
    const auto lt = scenario::layer_training(l, sh.params, lora, wb, e, t, style, !first);
    sh.trainable = lt.trainable;
    sh.weight_bytes = lt.weight_bytes;
    sh.dequantized = lt.dequantized;
    sh.dequant_traffic = lt.dequant_traffic;
    sh.dequant_launches = lt.dequant_launches;
    if (!lora) continue;
    sh.params += lt.trainable;  // the device holds its adapters beside the base
    if (lt.trainable > 0 && lowest == shards.size()) lowest = i;
    if (lowest == shards.size()) {
      sh.grad_out = false;
      sh.saved = sh.saved_core = {};
      sh.backward_factor = 0;
      continue;
    }
    const double base_backward =
        sh.matmul ? sh.flops + sh.core_flops : sh.flops * sh.backward_factor;
    // Unkept inputs leave the saved bytes (never below the attention core the shard keeps).
    const core::Bytes unkept = lt.unkept_split + (sp ? lt.unkept_replicated / t : lt.unkept_replicated);
    sh.saved = std::max(sh.saved - unkept, sh.saved_core);
    sh.saved += lt.adapter_saved + lt.quantized_saved;
    sh.flops += lt.adapter_flops;
    sh.backward_factor = sh.flops > 0 ? (base_backward + 2 * lt.adapter_flops) / sh.flops : 0;
  }
}

}  // namespace trainsim::parallel
