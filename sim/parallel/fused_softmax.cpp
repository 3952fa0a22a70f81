#include "sim/parallel/fused_softmax.hpp"

#include <algorithm>
#include <bit>

namespace trainsim::parallel {

bool fused_softmax_available(std::int64_t attn_batches, std::int64_t sq, std::int64_t sk) {
  if (!(sk > 16 && sk <= kFusedSoftmaxMaxSk && sq % 4 == 0 && sk % 4 == 0 && attn_batches > 0 && attn_batches % 4 == 0))
    return false;
  const std::int64_t pow2 = static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(sk)));
  const std::int64_t warp = std::min<std::int64_t>(32, pow2);
  const std::int64_t per_warp = pow2 <= 128 ? 2 : 1;
  const std::int64_t per_block = 128 / warp * per_warp;
  return attn_batches % per_block == 0;
}

std::int64_t causal_unread_bytes(std::int64_t matrices, std::int64_t s, std::int64_t e) {
  return matrices * e * (s * (s - 1) / 2);
}

std::int64_t fallback_saved_per_element(std::int64_t core_per_element) {
  constexpr std::int64_t e = 2;  // the fused kernel's 16-bit output
  if (core_per_element == e) return SoftmaxFallback::probs_fp32;
  if (core_per_element == 1 + 2 * e) return SoftmaxFallback::probs_fp32 - e;
  return 0;
}

}  // namespace trainsim::parallel
