// The chunk schedules of tp_overlap.hpp, played as events on a GEMM stream and a
// communication stream (each entry the end time of one chunk's kernel on its stream).
#include "sim/cost/tp_overlap.hpp"

#include <algorithm>

namespace trainsim::cost {

core::Duration play_overlap(const ChunkedOverlap& o) {
  using core::Duration;
  const int n = std::max(1, o.chunks);
  Duration gemm{}, comm{};  // end of the last chunk on each stream
  switch (o.method) {
    case OverlapMethod::all_gather_ring:
      for (int i = 0; i < n; ++i) {
        if (i > 0) comm = comm + o.comm_chunk;  // transfer i, right after transfer i-1
        gemm = std::max(gemm, comm) + o.gemm_chunk;
      }
      return gemm;
    case OverlapMethod::reduce_scatter_ring:
      for (int i = 0; i < n; ++i) {
        gemm = gemm + o.gemm_chunk;
        if (i < n - 1) comm = std::max(comm, gemm) + o.comm_chunk;
      }
      return std::max(gemm, comm) + o.tail;
    case OverlapMethod::reduce_scatter_pipeline:
      for (int i = 0; i < n; ++i) {
        gemm = gemm + o.gemm_chunk;
        comm = std::max(comm, gemm) + o.comm_chunk;
      }
      return comm;
    case OverlapMethod::bulk: {
      // While the collective runs the GEMM does shared_rate of its work per unit of time.
      const double rate = std::clamp(o.shared_rate, 1e-9, 1.0);
      const double g = core::to_seconds(o.gemm_chunk), c = core::to_seconds(o.comm_chunk);
      if (g <= c * rate) return o.comm_chunk;
      return core::duration_from_seconds(c + (g - c * rate));
    }
  }
  return {};
}

}  // namespace trainsim::cost
