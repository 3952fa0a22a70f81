// Context parallelism (parallel.context = C): each sequence is split over C ranks, each holding
// seq_len / C tokens (the model is built with that many tokens per sample, so every layer's
// activations and linear FLOPs fall by C). For causal attention the sequence is cut into 2C
// halves and rank r holds halves r and 2C-1-r (Megatron-LM context parallelism; Brandon et al.
// 2023, striped attention), so every rank does the same attention work: its queries against
// the whole sequence's keys, 1/C of the total — C times the core FLOPs its own chunk would cost.
// Keys and values are exchanged per attention layer on the comm stream (CommPurpose::context_kv):
// - ring (Liu et al. 2023, Ring Attention; Megatron-LM's default): C-1 point-to-point steps,
//   each passing a K/V chunk of 2 x (seq_len/C) x kv_width/t x e bytes per sample to the next
//   rank while the attention of the chunk at hand runs. The layer's op computes its projections
//   and its own chunk's attention while step 1 sends that chunk on; then chunk k (k = 1..C-1)
//   runs as a compute op of its own once step k brought it, and step k+1 starts once step k has
//   ended and the chunk whose buffer it refills (k-1) was computed (two chunk buffers, send and
//   receive, live from step 1 to the last chunk). So a step of t seconds against a chunk of a
//   exposes max(0, t - a) each, (C-1) x (t - a) per layer when communication dominates. The
//   backward runs the same with K/V and their gradients dK/dV (twice the bytes per step) and the
//   chunks' backward; the gradient reductions and the next layer wait for the last chunk.
// - allgather (Llama 3 paper, section 3.3.2): one all-gather of the full sequence's K/V before
//   attention, held until the attention op ends; the backward gathers them again into a buffer
//   with room for dK/dV, reduce-scatters dK/dV and frees it; the next layer waits for that.
// Gradients reduce over data x context ranks (lower.cpp: LowerContext::data).
#include "sim/parallel/flash_core.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

constexpr std::string_view kKeys[] = {"parallel.context", "parallel.context_attention",
                                      "training.attention", "training.fp8_attention"};

class ContextPass final : public LoweringPass {
 public:
  void prepare(LowerContext& L) override {
    C_ = L.s.parallel.context;
    if (C_ == 1) return;
    ring_ = L.s.parallel.context_attention == scenario::ContextAttention::ring;
    span_ = context_span(L.s);
    kv_.assign(L.shards.size(), core::Bytes{});
    chunk_flops_.assign(L.shards.size(), 0.0);
    const std::int64_t e = L.s.training.precision == scenario::Precision::fp32 ? 4 : 2;
    const std::int64_t tokens = L.s.parallel.tokens_per_rank(L.s.training.seq_len);
    for (std::size_t i = 0; i < L.shards.size(); ++i) {
      const models::Layer& l = L.m.graph[L.m.order[i]];
      if (l.kind != models::LayerKind::attention || l.kv_width == 0) continue;
      // K/V heads split over the tensor ranks, or one per rank when fewer than t.
      const std::int64_t heads = l.kv_heads % L.tensor == 0 ? l.kv_heads / L.tensor : 1;
      kv_[i] = core::Bytes{2 * tokens * heads * (l.kv_width / l.kv_heads) * e};
      LayerShard& sh = L.shards[i];
      chunk_flops_[i] = sh.core_flops;
      const double extra = sh.core_flops * static_cast<double>(C_ - 1);
      sh.flops += extra;  // queries of this rank against the other C-1 chunks' keys
      sh.core_flops += extra;
      sh.io += kv_[i] * (C_ - 1);  // the other chunks' K/V read by the kernel
    }
  }

  void begin_stage(StageContext&) override { pending_ = -1; }
  int ops_per_layer(const LowerContext&) const override {
    return C_ == 1 ? 0 : static_cast<int>(ring_ ? 2 * (C_ - 1) : 2);
  }
  bool expands_units(const LowerContext&) const override { return C_ > 1; }
  bool repeats(const StageContext&, const UnitStep&) const override { return C_ == 1; }
  // The pending exchange runs on from one unit into the next.
  bool copies_units(const LowerContext&) const override { return C_ == 1; }

  void before_layer(StageContext& c, UnitStep& u, std::int32_t i) override {
    if (C_ == 1) return;
    if (pending_ >= 0) c.param_ready = pending_;  // the previous attention's exchange
    pending_ = -1;
    if (kv_[i].value == 0) return;
    const core::Bytes kv = kv_[i] * c.L.mb_samples;
    const OpRef after = c.ref_or_none(c.recent[1]);
    if (ring_) {
      // Step 1 sends this rank's chunk as soon as the op before has produced the layer's input.
      const MemEffect buffers = activation(step_bytes(c, u, i) * 2, TensorKind::context_kv, i);
      first_step_ = c.last_comm = c.B.emit(exchange(OpKind::p2p, u, i, step_bytes(c, u, i), 2),
                                           {buffers}, {}, {after});
      return;
    }
    // Backward: one buffer for the gathered K/V and the dK/dV accumulated against them, freed
    // once the reduce-scatter has summed dK/dV onto their owners.
    const MemEffect gathered =
        activation(kv * C_ * (u.forward() ? 1 : 2), TensorKind::context_kv, i);
    c.last_comm = c.B.emit(exchange(OpKind::all_gather, u, i, kv * C_, C_), {gathered}, {}, {after});
    c.param_ready = c.last_comm;  // attention needs every chunk's K/V
  }

  void layer_op(StageContext& c, const UnitStep& u, LayerOp& lo) override {
    if (C_ == 1 || kv_[lo.layer].value == 0) return;
    if (ring_) {  // the other chunks' attention runs in ops of their own (after_layer)
      const Op chunk = chunk_op(c, u, lo.layer);
      lo.op.work.flops -= chunk.work.flops * static_cast<double>(C_ - 1);
      lo.op.work.bytes -= chunk.work.bytes * (C_ - 1);
      scale_flash_core(lo.op, 1.0 / static_cast<double>(C_));  // its own chunk's core only
      return;
    }
    if (!u.forward()) return;
    lo.frees.push_back(activation(kv_[lo.layer] * c.L.mb_samples * C_, TensorKind::context_kv, lo.layer));
  }

  void after_layer(StageContext& c, UnitStep& u, std::int32_t i, std::int32_t op) override {
    if (C_ == 1 || kv_[i].value == 0) return;
    if (ring_) {
      ring_steps(c, u, i, op);
      return;
    }
    if (u.forward()) return;
    // dK/dV of the whole sequence, summed onto the ranks that own each chunk.
    const core::Bytes full = kv_[i] * c.L.mb_samples * C_;
    const MemEffect grads = activation(full * 2, TensorKind::context_kv, i);
    pending_ = c.last_comm =
        c.B.emit(exchange(OpKind::reduce_scatter, u, i, full, C_), {}, {grads}, {c.B.ref(op)});
  }

 private:
  // Bytes of one ring step: a K/V chunk, with its gradients dK/dV in backward.
  core::Bytes step_bytes(const StageContext& c, const UnitStep& u, std::int32_t i) const {
    return kv_[i] * c.L.mb_samples * (u.forward() ? 1 : 2);
  }

  // The attention of one other rank's chunk: this rank's queries against its K/V (the core's
  // FLOPs of one chunk, the backward's by the layer's factor), reading the chunk (and, in
  // backward, writing its dK/dV). One kernel.
  Op chunk_op(const StageContext& c, const UnitStep& u, std::int32_t i) const {
    const LayerShard& sh = c.L.shards[i];
    const double flops = chunk_flops_[i] * static_cast<double>(c.L.mb_samples) *
                         (u.forward() ? 1.0 : sh.backward_factor);
    Op op = compute_op(u.forward() ? OpKind::forward : OpKind::backward, i, u.microbatch(),
                       u.chunk(), flops, step_bytes(c, u, i), sh.matmul);
    op.kernels = 1;
    const double core = chunk_flops_[i] * static_cast<double>(c.L.mb_samples);
    add_flash_core(op, c.L.s, c.L.m.graph[c.L.m.order[i]], u.forward() ? core : 2 * core,
                   !u.forward());
    return op;
  }

  // Chunks 1..C-1 after the layer's op (chunk 0, its own): chunk k waits for step k, which
  // waits for step k-1 (the comm stream) and for chunk k-2, whose buffer it refills. The last
  // chunk frees the two buffers; what follows the layer waits for it.
  void ring_steps(StageContext& c, UnitStep& u, std::int32_t i, std::int32_t op) {
    const MemEffect buffers = activation(step_bytes(c, u, i) * 2, TensorKind::context_kv, i);
    std::int32_t before = -1, last = op, step = first_step_;  // chunks k-2, k-1; step k
    for (std::int64_t k = 1; k < C_; ++k) {
      if (k > 1)
        step = c.last_comm = c.B.emit(exchange(OpKind::p2p, u, i, step_bytes(c, u, i), 2), {},
                                      {}, {c.ref_or_none(before)});
      const std::span<const MemEffect> free(&buffers, k + 1 == C_ ? 1 : 0);
      before = last;
      last = c.B.emit(chunk_op(c, u, i), {}, free, {c.B.ref(step)});
    }
    c.layer_end = last;
  }

  Op exchange(OpKind kind, const UnitStep& u, std::int32_t i, core::Bytes bytes,
              std::int64_t ranks) const {
    return comm_op(kind, StreamKind::comm, CommPurpose::context_kv, i, u.microbatch(), u.chunk(),
                   bytes, ranks, span_.inter_node, span_.per_node, span_.pod_members);
  }

  std::int64_t C_ = 1;
  bool ring_ = true;
  GroupSpan span_;
  std::vector<core::Bytes> kv_;  // per layer: this rank's K/V chunk per sample (attention only)
  std::vector<double> chunk_flops_;  // per layer: the core's FLOPs of one chunk per sample
  std::int32_t pending_ = -1;    // the exchange the next layer waits for (all-gather)
  std::int32_t first_step_ = -1;  // the ring's first step of the layer being built
};

}  // namespace

PassEntry context_pass() {
  return {"context", kKeys, {}, make_pass<ContextPass>};
}

}  // namespace trainsim::parallel
