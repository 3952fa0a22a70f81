// Unfused attention softmax (docs/devices.md, "Unfused attention softmax"): Megatron's fused
// scale-mask-softmax kernel serves only score batches its warp layout fits
// (fused_softmax_available); otherwise the eager fallback runs five kernels in each direction
// for the fused kernel's one, in fp32. The pass adds those launches and bytes to every compute
// op of whole layers (forward, backward, a recomputation's replayed forwards) whose attention
// layers take the fallback. Flash attention, fp32 training and context parallelism (whose
// attention runs in other kernels) are left as they are.
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

class SoftmaxPass final : public LoweringPass {
 public:
  void on_compute(StageContext& c, const ComputeOp& op) override {
    if (op.kind != OpKind::forward && op.kind != OpKind::backward &&
        op.kind != OpKind::recompute)
      return;
    const LowerContext& L = c.L;
    const auto& t = L.s.training;
    if (t.flash_attention || L.s.parallel.context > 1) return;
    if (t.precision != scenario::Precision::fp16 && t.precision != scenario::Precision::bf16)
      return;
    const bool backward = op.kind == OpKind::backward;
    Op& o = c.P.ops[op.index];
    for (std::int32_t i = op.first; i <= op.last; ++i) {
      if (!L.shards[i].matmul) continue;
      const std::int64_t e = fallback_elements(L.m.graph[L.m.order[i]], L.tensor, L.mb_samples);
      if (e == 0) continue;
      if (o.work.launches == 0) o.work.launches = o.kernels;
      o.work.launches += backward ? SoftmaxFallback::backward_launches
                                  : SoftmaxFallback::forward_launches;
      o.work.bytes += core::Bytes{e * (backward ? SoftmaxFallback::backward_bytes
                                                : SoftmaxFallback::forward_bytes)};
    }
  }
};

}  // namespace

PassEntry softmax_pass() {
  return {"softmax", kKeys, {}, make_pass<SoftmaxPass>};
}

}  // namespace trainsim::parallel
