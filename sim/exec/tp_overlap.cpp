// parallel.tp_comm_overlap, priced as Transformer Engine's userbuffers run a Megatron-Core
// transformer layer with sequence parallelism (TE transformer_engine/pytorch/module/base.py
// `initialize_ub`; the settings are NeMo's H100 recipes' for Llama 3 70B at tensor 4,
// nemo/collections/llm/recipes/tp_overlap_configs/userbuffers.py,
// `userbuffers_{bf16,fp8}_h100_h8192_tp4_mbs1_seqlen8192`; docs/devices.md):
//   forward:  the all-gather before QKV / FC1 by ring exchange (`qkv_fprop`, `fc1_fprop`:
//             copy engines, no SMs), tensor-degree chunks; the reduce-scatter after proj / FC2
//             by ring exchange under FP8 (`proj_fprop`, `fc2_fprop`), split pipelined in 4
//             chunks with 24 (proj) / 16 (FC2) SMs taken from the GEMM in 16-bit;
//   backward: the all-gather of the output gradient before proj / FC2's input-gradient GEMM by
//             ring exchange (`proj_dgrad`, `fc2_dgrad`); the reduce-scatter of the input
//             gradient in bulk beside QKV / FC1's weight-gradient GEMM (`qkv_wgrad` 24 SMs,
//             `fc1_wgrad` 4 SMs).
// A layer's GEMMs come in layer_gemms' order: forward [input projection, ..., output
// projection]; backward each forward GEMM's input gradient then weight gradient.
#include "sim/exec/tp_overlap.hpp"

#include <span>

#include "sim/cost/cost.hpp"
#include "sim/cost/gemm_shape.hpp"
#include "sim/cost/tp_overlap.hpp"

namespace trainsim::exec {
namespace {

using cost::ChunkedOverlap;
using cost::OverlapMethod;
using parallel::TpOverlap;

// One GEMM alone on the device with `sms_taken` of its SMs busy with communication kernels:
// tiled on the SMs left and at their share of the peak.
core::Duration gemm_time(const parallel::Plan& plan, const parallel::Program& P,
                         const cost::GemmShape& g, int sms_taken = 0) {
  const int sms = P.device.sm_count;
  const int left = sms > sms_taken ? sms - sms_taken : sms;
  cost::KernelWork w;
  w.flops = g.flops();
  w.matmul = true;
  if (sms > 0) w.shape_efficiency = cost::gemm_tiling(g, left).efficiency;
  const core::Duration t = cost::device_time(w, P.device, plan.math, 1);
  if (sms <= 0 || left == sms) return t;
  return core::duration_from_seconds(core::to_seconds(t) * double(sms) / double(left));
}

cost::GemmShape token_chunk(cost::GemmShape g, int chunks) {
  g.m = (g.m + chunks - 1) / chunks;
  return g;
}

// Ring exchange feeding `g`: `t` chunks of the gathered input, one neighbour transfer each.
core::Duration ring_all_gather(const parallel::Plan& plan, const parallel::Program& P,
                               const parallel::Op& op, const cost::GemmShape& g) {
  const int t = op.comm.ranks;
  ChunkedOverlap o{OverlapMethod::all_gather_ring, t, gemm_time(plan, P, token_chunk(g, t)),
                   cost::p2p_time(core::Bytes{op.comm.bytes.value / t}, plan.intra_node)};
  return cost::play_overlap(o) - gemm_time(plan, P, g);
}

// The forward reduce-scatter after the output projection `g`.
core::Duration forward_reduce_scatter(const parallel::Plan& plan, const parallel::Program& P,
                                      const parallel::Op& op, const cost::GemmShape& g) {
  const int t = op.comm.ranks;
  const core::Bytes S = op.comm.bytes;
  if (plan.math == cost::MathMode::fp8) {
    // Ring exchange; the received partial sums (t chunks of S / t) are summed by one kernel.
    cost::KernelWork reduce;
    reduce.bytes = S + core::Bytes{S.value / t};
    ChunkedOverlap o{OverlapMethod::reduce_scatter_ring, t, gemm_time(plan, P, token_chunk(g, t)),
                     cost::p2p_time(core::Bytes{S.value / t}, plan.intra_node),
                     cost::device_time(reduce, P.device, plan.math, 1)};
    return cost::play_overlap(o) - gemm_time(plan, P, g);
  }
  constexpr int kSplits = 4;
  const int sms = op.tp_overlap == TpOverlap::attention ? 24 : 16;
  parallel::CommWork chunk = op.comm;
  chunk.bytes = core::Bytes{S.value / kSplits};
  ChunkedOverlap o{OverlapMethod::reduce_scatter_pipeline, kSplits,
                   gemm_time(plan, P, token_chunk(g, kSplits), sms),
                   tp_collective_time(plan, cost::NcclColl::reduce_scatter, chunk)};
  return cost::play_overlap(o) - gemm_time(plan, P, g);
}

// The backward reduce-scatter in bulk beside the input projection's weight gradient `g`.
core::Duration bulk_reduce_scatter(const parallel::Plan& plan, const parallel::Program& P,
                                   const parallel::Op& op, const cost::GemmShape& g) {
  const int taken = op.tp_overlap == TpOverlap::attention ? 24 : 4;
  const int sms = P.device.sm_count;
  ChunkedOverlap o{OverlapMethod::bulk, 1, gemm_time(plan, P, g),
                   tp_collective_time(plan, cost::NcclColl::reduce_scatter, op.comm)};
  if (sms > taken) o.shared_rate = double(sms - taken) / double(sms);
  return cost::play_overlap(o) - o.gemm_chunk;
}

}  // namespace

core::Duration overlapped_tp_time(const parallel::Plan& plan, const parallel::Program& P,
                                  const parallel::Op& op) {
  const std::span<const cost::GemmShape> g =
      std::span(P.gemm_shapes).subspan(op.gemm_begin, op.gemm_end - op.gemm_begin);
  const std::size_t n = g.size();
  if (op.kind == parallel::OpKind::backward && n >= 4)
    return ring_all_gather(plan, P, op, g[n - 2]) + bulk_reduce_scatter(plan, P, op, g[1]);
  if (op.kind != parallel::OpKind::backward && n >= 2)
    return ring_all_gather(plan, P, op, g[0]) + forward_reduce_scatter(plan, P, op, g[n - 1]);
  // No GEMM to hide under: the collectives as without overlap.
  return tp_collective_time(plan, cost::NcclColl::reduce_scatter, op.comm) +
         tp_collective_time(plan, cost::NcclColl::all_gather, op.comm);
}

}  // namespace trainsim::exec
