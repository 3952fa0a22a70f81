#include "models/layer.hpp"

#include <array>
#include <utility>

namespace trainsim::models {

int dtype_bytes(DType t) {
  switch (t) {
    case DType::fp32:
      return 4;
    case DType::fp16:
      return 2;
    case DType::bf16:
      return 2;
  }
  return 4;  // unreachable for valid enumerators; keeps -Wreturn-type quiet
}

namespace {
// One table for both directions so the spellings cannot drift apart.
constexpr std::array<std::pair<LayerKind, std::string_view>, 14> kKindNames{{
    {LayerKind::linear, "linear"},
    {LayerKind::embedding, "embedding"},
    {LayerKind::layernorm, "layernorm"},
    {LayerKind::rmsnorm, "rmsnorm"},
    {LayerKind::attention, "attention"},
    {LayerKind::mlp, "mlp"},
    {LayerKind::conv2d, "conv2d"},
    {LayerKind::batchnorm, "batchnorm"},
    {LayerKind::pooling, "pooling"},
    {LayerKind::activation, "activation"},
    {LayerKind::dropout, "dropout"},
    {LayerKind::add, "add"},
    {LayerKind::loss, "loss"},
    {LayerKind::generic, "generic"},
}};
}  // namespace

std::string_view to_string(LayerKind k) {
  for (const auto& [kind, name] : kKindNames)
    if (kind == k) return name;
  return "generic";
}

std::optional<LayerKind> layer_kind_from_string(std::string_view s) {
  for (const auto& [kind, name] : kKindNames)
    if (name == s) return kind;
  return std::nullopt;
}

std::string layer_kind_names() {
  std::string out;
  for (const auto& [kind, name] : kKindNames) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}


std::string_view to_string(LinearRole r) {
  static constexpr std::string_view kNames[kLinearRoles] = {"q",  "k",    "v",   "o",
                                                            "gate", "up", "down", "other"};
  return kNames[static_cast<std::size_t>(r)];
}

}  // namespace trainsim::models
