#include "sim/scenario/context.hpp"

#include <string>

namespace trainsim::scenario {

std::string_view to_string(ContextAttention a) {
  return a == ContextAttention::ring ? "ring" : "allgather";
}

void read_context(MapReader& m, ParallelSpec& p) {
  p.context = m.int_in_or("context", ranges::kDegree, 1);
  const std::string a = m.choice("context_attention", {"ring", "allgather"}, "ring");
  p.context_attention = a == "ring" ? ContextAttention::ring : ContextAttention::allgather;
}

void validate_context(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  const std::int64_t c = s.parallel.context;
  if (c == 1) return;
  const YAML::Node par = n.parallel.IsDefined() ? n.parallel : n.root;
  const YAML::Node at = child_or(par, "context");
  const std::string C = std::to_string(c);
  bool attention = false;
  for (auto v : s.model.order) attention |= s.model.graph[v].kind == models::LayerKind::attention;
  if (!s.model.sequence_model || !attention)
    ctx.fail(at, "parallel.context",
             "context parallelism splits the sequence of attention layers, and model '" +
                 s.model.name + "' has none; use parallel.context: 1");
  const std::int64_t seq = s.training.seq_len;
  if (seq % (2 * c) != 0)
    ctx.fail(at, "parallel.context",
             "parallel.context = " + C + " must divide seq_len / 2 (seq_len " +
                 std::to_string(seq) + " is split into 2 x " + C +
                 " equal halves, two per rank, for causal load balance)");
  if (!s.training.flash_attention)
    ctx.fail(child_or(n.training, "attention"), "training.attention",
             "parallel.context = " + C +
                 " needs training.attention: flash (each rank computes attention one chunk of "
                 "keys and values at a time, as fused attention kernels do)");
  // Not modelled together yet: LoRA's adapters with the context pass's split sequence.
  if (s.training.lora)
    ctx.fail(at, "parallel.context", "parallel.context with training.lora is not supported yet");
}

}  // namespace trainsim::scenario
