#include "sim/parallel/fused_softmax.hpp"

#include <algorithm>
#include <bit>

namespace trainsim::parallel {

bool fused_softmax_available(std::int64_t attn_batches, std::int64_t sq, std::int64_t sk) {
  if (!(sk > 16 && sq % 4 == 0 && sk % 4 == 0 && attn_batches > 0 && attn_batches % 4 == 0))
    return false;
  const std::int64_t pow2 = static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(sk)));
  const std::int64_t warp = std::min<std::int64_t>(32, pow2);
  const std::int64_t per_warp = pow2 <= 128 ? 2 : 1;
  const std::int64_t per_block = 128 / warp * per_warp;
  return attn_batches % per_block == 0;
}

}  // namespace trainsim::parallel
