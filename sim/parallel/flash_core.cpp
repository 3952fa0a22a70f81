#include "sim/parallel/flash_core.hpp"

#include <algorithm>

namespace trainsim::parallel {

double flash_square_fraction(std::int64_t tokens, bool causal, std::int64_t context,
                             std::int64_t tile) {
  if (!causal || tokens <= 0) return 1.0;
  if (context > 1) {
    const double f = flash_square_fraction(std::max<std::int64_t>(1, tokens / 2), true, 1, tile);
    const auto c = static_cast<double>(context);
    return (2 * c - 1 + 2 * f) / (4 * c);
  }
  tile = std::max<std::int64_t>(1, tile);
  const auto n = static_cast<double>((tokens + tile - 1) / tile);
  return (n + 1) / (2 * n);
}

double packed_square_fraction(std::int64_t tokens, const scenario::TrainingSpec::PackedDocuments& pd,
                              bool causal, std::int64_t tile) {
  if (!pd.enabled() || tokens <= 0) return flash_square_fraction(tokens, causal, 1, tile);
  const auto square = [&](std::int64_t d) {
    const auto x = static_cast<double>(d);
    return x * x * flash_square_fraction(d, causal, 1, tile);
  };
  double sum = 0;
  if (pd.length > 0) {
    const std::int64_t length = std::min(pd.length, tokens);
    const std::int64_t remainder = tokens % length;
    sum = static_cast<double>(tokens / length) * square(length) + (remainder > 0 ? square(remainder) : 0.0);
  } else {
    for (const std::int64_t d : pd.lengths) sum += square(d);
  }
  const auto t = static_cast<double>(tokens);
  return sum / (t * t);
}

void add_flash_core(Op& op, const scenario::Scenario& s, const models::Layer& l,
                    double model_flops, bool backward) {
  if (!s.training.flash_attention || l.kind != models::LayerKind::attention ||
      l.attention_core_flops <= 0 || !(model_flops > 0))
    return;
  const std::int64_t tokens = l.linears[static_cast<std::size_t>(models::LinearRole::q)].tokens;
  const auto& packed = s.training.packed_documents;
  const double f = packed.enabled() && s.parallel.context == 1
                       ? packed_square_fraction(tokens, packed, l.causal)
                       : flash_square_fraction(tokens, l.causal, s.parallel.context);
  op.work.flash_model_flops += model_flops;
  if (backward)
    op.work.flash_backward += model_flops / 2 * 2.5 * f;
  else
    op.work.flash_forward += model_flops * f;
  op.work.fp8_attention = s.training.fp8_attention;
}

void scale_flash_core(Op& op, double f) {
  op.work.flash_model_flops *= f;
  op.work.flash_forward *= f;
  op.work.flash_backward *= f;
}

}  // namespace trainsim::parallel
