// Unfused attention softmax (docs/devices.md, "Unfused attention softmax"): Megatron's fused
// scale-mask-softmax kernel serves only score batches its warp layout fits
// (fused_softmax_available); otherwise the eager fallback runs five kernels in each direction
// for the fused kernel's one, in fp32. The pass adds those launches and bytes to every compute
// op of whole layers (forward, backward, a recomputation's replayed forwards) whose attention
// layers take the fallback; the fallback's fp32 probabilities to the layer's saved tensors; its
// fp32 scores and gradients as transients of the layer's forward and backward. A causal layer
// the fused kernel serves runs Megatron's upper-triangular kernel, which reads only the lower
// triangle of the scores (causal_unread_bytes): the pass takes the unread bytes off its compute
// ops. The eager fallback reads every element (masked_fill_ and softmax see the whole matrix),
// so a causal layer on the fallback pays the full bytes. Flash attention, fp32 training and
// context parallelism (whose attention runs in other kernels) are left as they are.
#include "sim/parallel/fused_softmax.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

constexpr std::string_view kKeys[] = {"model",
                                      "training.micro_batch",
                                      "training.seq_len",
                                      "training.attention",
                                      "training.precision",
                                      "parallel.tensor",
                                      "parallel.context"};

// Score elements one micro-batch's softmax of layer `l` runs on one of `tensor` ranks when the
// fused kernel does not serve it, else 0.
std::int64_t fallback_elements(const models::Layer& l, std::int64_t tensor, std::int64_t samples) {
  if (l.kind != models::LayerKind::attention || l.heads <= 0 || l.attention_core_flops <= 0)
    return 0;
  const std::int64_t s = l.linears[static_cast<std::size_t>(models::LinearRole::q)].tokens;
  if (s <= 0) return 0;
  const std::int64_t heads = (l.heads + tensor - 1) / tensor;
  if (fused_softmax_available(samples * heads, s, s)) return 0;
  return samples * heads * s * s;
}

// Whether the scenario runs the attention softmax as Megatron's: 16-bit, not flash attention,
// not split over context-parallel ranks.
bool megatron_softmax(const LowerContext& L) {
  const auto& t = L.s.training;
  return !t.flash_attention && L.s.parallel.context <= 1 &&
         (t.precision == scenario::Precision::fp16 || t.precision == scenario::Precision::bf16);
}

// The bytes a causal layer's fused kernel does not read in one micro-batch's forward on one of
// `tensor` ranks, or 0 (not causal, or not attention).
std::int64_t causal_unread(const models::Layer& l, std::int64_t tensor, std::int64_t samples,
                           std::int64_t e) {
  if (!l.causal || l.kind != models::LayerKind::attention || l.heads <= 0 ||
      l.attention_core_flops <= 0)
    return 0;
  const std::int64_t s = l.linears[static_cast<std::size_t>(models::LinearRole::q)].tokens;
  if (s <= 0) return 0;
  return causal_unread_bytes(samples * ((l.heads + tensor - 1) / tensor), s, e);
}

class SoftmaxPass final : public LoweringPass {
 public:
  // The fallback's score elements per layer, and its fp32 probabilities in each layer's saved
  // tensors (the attention core: selective recomputation re-creates them, full drops them); or,
  // where the fused kernel serves a causal layer, the bytes it does not read.
  void prepare(LowerContext& L) override {
    elements_.assign(L.m.order.size(), 0);
    unread_.assign(L.m.order.size(), 0);
    if (!megatron_softmax(L)) return;
    const std::int64_t e = models::dtype_bytes(scenario::activation_dtype(L.s.training.precision));
    for (std::size_t i = 0; i < elements_.size(); ++i) {
      if (!L.shards[i].matmul) continue;
      const models::Layer& l = L.m.graph[L.m.order[i]];
      elements_[i] = fallback_elements(l, L.tensor, L.mb_samples);
      if (elements_[i] == 0) {
        unread_[i] = causal_unread(l, L.tensor, L.mb_samples, e);
        continue;
      }
      const std::int64_t s = l.linears[static_cast<std::size_t>(models::LinearRole::q)].tokens;
      const std::int64_t core = l.saved_attention_core.value / (l.heads * s * s);
      const core::Bytes extra{elements_[i] / L.mb_samples * fallback_saved_per_element(core)};
      L.shards[i].saved += extra;
      L.shards[i].saved_core += extra;
      L.kept[i].saved += extra;
    }
  }

  // The fp32 buffers that live only within the layer's forward or backward.
  void layer_op(StageContext&, const UnitStep& u, LayerOp& lo) override {
    const std::int64_t e = elements_[static_cast<std::size_t>(lo.layer)];
    if (e == 0) return;
    const core::Bytes bytes{
        e * (u.forward() ? SoftmaxFallback::forward_temp : SoftmaxFallback::backward_temp)};
    lo.allocs.push_back(activation(bytes, TensorKind::softmax_temp, lo.layer));
    lo.frees.push_back(activation(bytes, TensorKind::softmax_temp, lo.layer));
  }

  void on_compute(StageContext& c, const ComputeOp& op) override {
    if (op.kind != OpKind::forward && op.kind != OpKind::backward &&
        op.kind != OpKind::recompute)
      return;
    const bool backward = op.kind == OpKind::backward;
    Op& o = c.P.ops[op.index];
    for (std::int32_t i = op.first; i <= op.last; ++i) {
      const std::int64_t unread = unread_[static_cast<std::size_t>(i)];
      if (unread > 0 && (!backward || c.L.shards[i].grad_out))
        o.work.bytes -= core::Bytes{backward ? 2 * unread : unread};
      const std::int64_t e = elements_[static_cast<std::size_t>(i)];
      if (e == 0) continue;
      if (o.work.launches == 0) o.work.launches = o.kernels;
      o.work.launches += backward ? SoftmaxFallback::backward_launches
                                  : SoftmaxFallback::forward_launches;
      o.work.bytes += core::Bytes{e * (backward ? SoftmaxFallback::backward_bytes
                                                : SoftmaxFallback::forward_bytes)};
    }
  }

 private:
  std::vector<std::int64_t> elements_;
  std::vector<std::int64_t> unread_;  // per layer: causal_unread, forward
};

}  // namespace

PassEntry softmax_pass() {
  return {"softmax", kKeys, {}, make_pass<SoftmaxPass>};
}

}  // namespace trainsim::parallel
