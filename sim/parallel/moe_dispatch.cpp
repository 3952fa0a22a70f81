#include "sim/parallel/moe_dispatch.hpp"

#include <algorithm>

namespace trainsim::parallel {

namespace {

// Transformer Engine's Triton permutation kernels (transformer_engine/pytorch/triton/
// permutation.py): make_row_id_map runs passes 1-3, then _permute_kernel; _unpermute_kernel;
// _make_chunk_sort_map_kernel and _sort_chunks_by_map_kernel; the backward's
// _unpermute_bwd_with_merging_probs_kernel, and the sorts' inverses with their kept maps.
constexpr std::int32_t kPermuteForward = 4, kUnpermuteForward = 1, kSortForward = 2;
constexpr std::int32_t kPermuteBackward = 1, kUnpermuteBackward = 1, kSortBackward = 1;
// The fused router: top-k with the score function, the aux-loss scores, the aux loss.
constexpr std::int32_t kRouterKernels = 3;

}  // namespace

MoeDispatchWork moe_dispatch_work(const MoeDispatchShape& s, bool backward) {
  const core::Bytes R = s.routed;
  const core::Bytes X = core::Bytes{R.value / std::max<std::int64_t>(1, s.top_k)};
  const bool sorts = s.local_experts > 1;
  MoeDispatchWork w;
  if (!backward) {
    // permute (R in, R out), unpermute (R in, X out), two sorts (R in, R out each).
    w.bytes = R * 2 + (R + X) + (sorts ? R * 4 : core::Bytes{});
    w.launches = kPermuteForward + kUnpermuteForward + (sorts ? 2 * kSortForward : 0);
  } else {
    // unpermute's gradient (R of output gradient, R of expert output in; R out), the permute's
    // gradient (R in, X out), two sorts.
    w.bytes = R * 3 + (R + X) + (sorts ? R * 4 : core::Bytes{});
    w.launches = kUnpermuteBackward + kPermuteBackward + (sorts ? 2 * kSortBackward : 0);
  }
  // Router: each kernel reads and writes the fp32 scores (8 bytes per score).
  w.bytes += core::Bytes{kRouterKernels * 8 * s.scores};
  w.launches += kRouterKernels;
  return w;
}

}  // namespace trainsim::parallel
