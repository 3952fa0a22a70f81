#pragma once
// torchtitan's op-level selective activation checkpointing (`training.recompute: selective-op`;
// pytorch/torchtitan torchtitan/parallelisms/parallelize_llama.py at 9dec370, `_save_list` and
// `_custom_policy`). Every transformer block runs under a non-reentrant checkpoint whose policy
// decides op by op: the outputs of `aten.mm` are saved except every second one of the block's
// forward (the 2nd, 4th, ...), and so are the outputs of the SDPA flash / memory-efficient
// kernels; every other op (norms, RoPE, SiLU, products, residual adds, a decomposed attention
// core) is recomputed before the block's backward. The checkpoint also keeps the block's input.
//
// In trainsim's layers, a block's mm run in torchtitan's module order: attention q, k, v, o
// (wq, wk, wv, wo), then the MLP's gate, up, down (w1, w3, w2; a GeLU MLP's up, down). A linear
// counts as one mm (bias-free, as torchtitan's Llama; with a bias PyTorch runs addmm, which the
// policy neither counts nor saves, and trainsim does not tell the two apart). A mixture of
// experts' routed experts (grouped GEMMs, count > 1) are recomputed and not counted.
#include <vector>

#include "sim/parallel/shard.hpp"

namespace trainsim::parallel {

// What the policy keeps of one layer's forward and what the block's recomputation runs for it,
// per sample on one of `tensor` ranks.
struct OpPolicyLayer {
  core::Bytes kept{};      // saved outputs of mm and SDPA (never above the layer's saved bytes)
  double flops = 0;        // recomputed FLOPs
  core::Bytes bytes{};     // recomputed kernels' memory traffic
  std::int32_t gemms = 0;  // recomputed mm
  std::int32_t saved_mm = 0;  // mm whose output is kept (their kernels do not run again)
};

// One entry per layer of m.order. Layers outside blocks (block < 0) and generic layers keep
// their saved bytes and recompute nothing. `flash`: training.attention is flash (SDPA's flash
// kernel, whose output and log-sum-exp are kept); else the core is recomputed. `eager`: the
// blocks run eager modules (training.modules: eager), whose element-wise kernels in attention
// and the MLP (eager_io) run again too.
struct OpPolicyOptions {
  models::DType activation = models::DType::bf16;
  bool flash = true;
  bool eager = false;
  int norm_bytes = 2;     // the norms' dtype bytes (eager_io)
  bool compiled = false;  // training.compile (eager_io)
};
std::vector<OpPolicyLayer> op_policy(const models::Model& m, const std::vector<LayerShard>& shards,
                                     std::int64_t tensor, const OpPolicyOptions& o);

}  // namespace trainsim::parallel
