#pragma once
// The memory-bound kernels of a mixture-of-experts layer as Megatron-Core runs it
// (megatron/core/transformer/moe/: router.py TopKRouter, token_dispatcher.py
// MoEAlltoAllTokenDispatcher, moe_utils.py permute / unpermute / sort_chunks_by_idxs) with
// Transformer Engine's fused permutation kernels (`moe_permute_fusion`, which the
// Megatron-Bridge model providers set: transformer_engine/pytorch/permutation.py and its
// Triton kernels) and fused router (`moe_router_fusion`). docs/models.md, "Mixture-of-experts
// layer kernels", derives every count.
//
// Forward, for R = the bytes of the routed tokens (tokens x top_k x hidden x activation bytes)
// and X = R / top_k (the layer's input or output):
//   permute (before the dispatch): row-id map (3 kernels over the tokens x experts routing
//     map) and the copy of each routed row: reads R, writes R;
//   sort by local expert (after the dispatch, when a rank holds more than one expert): the
//     chunk-sort map and the copy: reads R, writes R; and its inverse before the combine;
//   unpermute (after the combine): each token's k rows weighted by their probabilities and
//     summed: reads R, writes X.
// Backward: the unpermute's gradient with the probabilities' (reads the output gradient once
// per row, R, and the forward's expert output, R; writes R), the two sorts' inverses (one
// kernel each, the maps kept), the permute's gradient as an unpermute (reads R, writes X).
// Router (fused): the top-k over the scores, the aux-loss scores and the aux loss: each reads
// or writes the tokens x experts fp32 scores; 3 kernels forward, 3 backward.
#include <cstdint>

#include "sim/core/units.hpp"

namespace trainsim::parallel {

struct MoeDispatchWork {
  core::Bytes bytes{};  // read and written at the memory's bandwidth
  std::int32_t launches = 0;
  friend bool operator==(const MoeDispatchWork&, const MoeDispatchWork&) = default;
};

struct MoeDispatchShape {
  core::Bytes routed{};           // R: the routed tokens' bytes this rank permutes
  std::int64_t top_k = 1;         // k: R / k is the layer's input (and output)
  std::int64_t scores = 0;        // tokens x experts router scores of this rank (fp32 each)
  std::int64_t local_experts = 1; // experts this rank runs (sorts when > 1)
};

// The permutation, sort and router kernels of one forward (backward = false) or backward of
// the layer for one micro-batch.
MoeDispatchWork moe_dispatch_work(const MoeDispatchShape& s, bool backward);

}  // namespace trainsim::parallel
