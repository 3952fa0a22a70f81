#include "sim/scenario/lora_read.hpp"

#include <array>
#include <string_view>

namespace trainsim::scenario {

namespace {

using models::LinearRole;

// Adapter ranks people use are 1-256 (Hu et al. 2021 test 1-64); beyond 65,536 a rank exceeds
// every hidden size trainsim models.
constexpr ranges::IntRange kRank{1, 65536};

constexpr std::string_view kTargetsExpected =
    "expected a list of q, k, v, o, gate, up, down (or q_proj ... down_proj), or all-linear";

// A target's role: trainsim's short name or the Hugging Face Llama module name.
std::optional<LinearRole> role_of(std::string_view name) {
  constexpr std::array<std::pair<std::string_view, LinearRole>, 7> kRoles{{{"q", LinearRole::q},
                                                                           {"k", LinearRole::k},
                                                                           {"v", LinearRole::v},
                                                                           {"o", LinearRole::o},
                                                                           {"gate", LinearRole::gate},
                                                                           {"up", LinearRole::up},
                                                                           {"down", LinearRole::down}}};
  if (name.ends_with("_proj")) name.remove_suffix(5);
  for (const auto& [n, r] : kRoles)
    if (n == name) return r;
  return std::nullopt;
}

}  // namespace

LoraSpec read_lora(const YamlContext& ctx, const YAML::Node& node, const std::string& path) {
  if (!node.IsMap())
    ctx.fail(node, path, "expected a mapping {rank, alpha, dropout, targets, base, quantize_on_load, quantizer, layout}");
  LoraSpec l;
  MapReader m(ctx, node, path);
  l.rank = m.int_in("rank", kRank);
  // PEFT LoraConfig.lora_alpha's default, 8.
  l.alpha = m.number_or("alpha", {.min = 0, .max = 1e9, .min_open = true}, "expected a positive number",
                        8.0);
  l.dropout = m.number_or("dropout", {.min = 0, .max = 1, .max_open = true},
                          "expected a probability in [0, 1)", l.dropout);
  m.require("targets");
  const YAML::Node t = m.node("targets");
  const std::string tpath = m.path_of("targets");
  if (t.IsScalar()) {
    if (t.Scalar() != "all-linear") ctx.fail(t, tpath, std::string(kTargetsExpected) + ", got '" + t.Scalar() + "'");
    // PEFT's all-linear: every linear of the blocks (the output head is left out).
    l.targets.fill(true);
  } else if (t.IsSequence() && t.size() > 0) {
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::string ipath = tpath + "[" + std::to_string(i) + "]";
      const std::string name = read_string(ctx, t[i], ipath);
      const auto role = role_of(name);
      if (!role) ctx.fail(t[i], ipath, std::string(kTargetsExpected) + ", got '" + name + "'");
      l.targets[static_cast<std::size_t>(*role)] = true;
    }
  } else {
    ctx.fail(t, tpath, std::string(kTargetsExpected));
  }
  const auto base = m.choice("base", {"nf4", "nf4-dq", "int8", "bf16"}, "");
  l.base = base == "nf4"      ? BaseWeights::nf4
           : base == "nf4-dq" ? BaseWeights::nf4_dq
           : base == "int8"   ? BaseWeights::int8
           : base == "bf16"   ? BaseWeights::bf16
                              : BaseWeights::precision;
  if (m.has("quantize_on_load")) {
    const auto q = m.choice("quantize_on_load", {"none", "whole"}, "none");
    if (q == "whole" && l.base != BaseWeights::nf4 && l.base != BaseWeights::nf4_dq)
      ctx.fail(m.node("quantize_on_load"), m.path_of("quantize_on_load"),
               "expected none: 'whole' models torchao's NF4 quantization and needs base: nf4 or nf4-dq");
    l.quantize_on_load = q == "whole" ? QuantizeOnLoad::whole : QuantizeOnLoad::none;
  }
  if (m.has("quantizer")) {
    const auto q = m.choice("quantizer", {"torchao", "bitsandbytes"}, "bitsandbytes");
    if (l.base != BaseWeights::nf4 && l.base != BaseWeights::nf4_dq)
      ctx.fail(m.node("quantizer"), m.path_of("quantizer"),
               "a quantizer needs base: nf4 or nf4-dq (int8 is bitsandbytes' LLM.int8 only)");
    if (q == "bitsandbytes" && l.quantize_on_load == QuantizeOnLoad::whole)
      ctx.fail(m.node("quantizer"), m.path_of("quantizer"),
               "expected torchao: quantize_on_load: whole models torchao's to_nf4");
    l.quantizer = q == "bitsandbytes" ? Quantizer::bitsandbytes : Quantizer::torchao;
  } else if (l.quantize_on_load == QuantizeOnLoad::whole) {
    l.quantizer = Quantizer::torchao;  // whole models torchao's to_nf4
  }
  if (l.base == BaseWeights::int8) l.quantizer = Quantizer::bitsandbytes;
  l.layout = m.choice("layout", {"separate", "fused-qkv"}, "separate") == "fused-qkv"
                 ? LoraLayout::fused_qkv
                 : LoraLayout::separate;
  m.finish();
  return l;
}

}  // namespace trainsim::scenario
