#pragma once
// A tensor-parallel collective overlapped with the GEMM that consumes or produces it, as
// Transformer Engine's userbuffers run it under Megatron-Core's / NeMo's `tp_comm_overlap`
// (docs/devices.md, "Tensor-parallel communication overlapped with GEMMs"): the GEMM is split
// into chunks and each chunk's communication runs on its own stream beside the next chunk's
// GEMM. play_overlap plays the chunks' start and end events on the two streams and returns the
// time from the first chunk's start to the last event's end.
#include "sim/core/units.hpp"

namespace trainsim::cost {

enum class OverlapMethod {
  // Ring exchange feeding the GEMM (TE `ring_exchange`, all-gather side): the rank's own chunk
  // needs no transfer; transfer i (i = 1..n-1, one chunk to the ring neighbour) starts when
  // transfer i-1 ends (the first at 0); GEMM chunk i starts when GEMM chunk i-1 and transfer i
  // have ended.
  all_gather_ring,
  // Ring exchange after the GEMM (TE `ring_exchange`, reduce-scatter side): GEMM chunk i
  // (i = 0..n-1) after chunk i-1; chunks 0..n-2 are partial sums bound for the other ranks,
  // each sent when it is computed and the send before it has ended; the last chunk is the
  // rank's own. Then `tail` (the kernel summing the received partials) after everything.
  reduce_scatter_ring,
  // Split pipelined (TE `pipeline`): GEMM chunk i, then chunk i's reduce-scatter once it and
  // the reduce-scatter before it have ended; the last chunk's reduce-scatter is exposed.
  reduce_scatter_pipeline,
  // Bulk (TE `bulk`): the whole collective beside the whole GEMM (chunks = 1), which runs at
  // `shared_rate` of its speed while the collective's SMs are busy and at full speed after.
  bulk,
};

struct ChunkedOverlap {
  OverlapMethod method = OverlapMethod::bulk;
  int chunks = 1;
  core::Duration gemm_chunk{};  // one GEMM chunk (bulk: the whole GEMM)
  core::Duration comm_chunk{};  // one chunk's transfer or collective (bulk: the whole one)
  core::Duration tail{};        // reduce_scatter_ring's final reduction
  double shared_rate = 1.0;     // bulk only, in (0, 1]
};

core::Duration play_overlap(const ChunkedOverlap& o);

}  // namespace trainsim::cost
