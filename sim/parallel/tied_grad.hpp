#pragma once
// A tied LM head on a stage: a loss layer whose GEMM reads weights it does not own (the
// embedding's V x h table). Its gradient is the embedding's parameter's, allocated at the head's
// backward (autograd's AccumulateGrad creates .grad at the first contribution) and freed with
// the embedding's gradients (docs/finetuning.md, "A tied embedding's gradient").
#include <algorithm>
#include <cstdint>

#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

struct TiedHead {
  std::int32_t head = -1, embedding = -1;  // layer indices; -1: none on this stage
  std::int64_t elements = 0;               // shared elements trained on this device
};

inline TiedHead find_tied_head(const StageContext& c) {
  const LowerContext& L = c.L;
  TiedHead t;
  for (std::int32_t g = c.P.stage; g < L.chunk_count(); g += L.stages)
    for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) {
      const models::Layer& l = L.m.graph[L.m.order[i]];
      if (l.kind == models::LayerKind::embedding && t.embedding < 0) t.embedding = i;
      // An untied head's GEMM reads its own parameters; a tied one's reads the embedding's.
      if (l.kind == models::LayerKind::loss && L.shards[i].gemm_params > L.shards[i].params)
        t.head = i;
    }
  if (t.head < 0 || t.embedding < 0) return {};
  t.elements = std::min(L.shards[t.head].gemm_params - L.shards[t.head].params,
                        L.shards[t.embedding].trainable);
  if (t.elements <= 0) return {};
  return t;
}

}  // namespace trainsim::parallel
