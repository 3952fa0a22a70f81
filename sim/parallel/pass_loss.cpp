// The loss layer's transient logits (docs/finetuning.md, "The loss and its logits"). The loss
// layer (models/kinds_transformer.cpp) folds in the LM head and keeps for backward the fp32
// log-probabilities of every token, F = 4 x tokens x vocab bytes per micro-batch on this device
// (the vocabulary split over tensor ranks). What PyTorch holds beside them, per chunk of
// `training.loss_chunks` = N (1: one piece; torchtune's CEWithChunkedOutputLoss otherwise, with
// Fc = F x ceil(s/N)/s the bytes of one chunk):
//   forward:  the head's logits in the compute dtype, every chunk of them (C = F x e/4; the
//             model returns them whole or as the list of chunks), and one chunk's `.float()` copy
//             that cross_entropy reads (Fc; none when the compute dtype is fp32: `.float()` of an
//             fp32 tensor is the tensor itself): C + Fc, allocated and freed by the forward op;
//   backward: one chunk's gradient of the log-probabilities and of the fp32 logits (2 x Fc), live
//             together with the saved log-probabilities: allocated and freed by the backward op.
// Both are the chunk in flight: the chunks run one after another, so one chunk's transients are
// booked on the loss layer's op. With loss_chunks absent under fp16 / bf16 / fp8 the loss is
// Megatron-LM's fused vocabulary-parallel cross-entropy, which exponentiates in place in the fp32
// copy it saves and writes the gradient into it: nothing beside the saved F is booked.
//
// With training.compile (torchtune's compile_loss: torch.compile of the whole loss, or of each
// chunk's upcast and cross-entropy when chunked) the cross-entropy is one compiled graph. Its
// backward needs only the logits it was given and one log-sum-exp per token (AOTAutograd's
// min-cut partitioner recomputes the upcast, exp and subtraction from them), so the layer keeps
// those instead of F: the input logits, fp32 (F) when unchunked (torchtune's model returns
// `self.output(h).float()`) and in the compute dtype (C) when chunked (the list of chunks
// returned by `chunked_output`), plus 4 bytes per token. The forward then holds beside them only
// the unchunked head output before its `.float()` (C, when e < 4); the backward one chunk's
// gradient of the input logits in their dtype.
//
// With training.keep_logits (torchtune's recipes before pytorch/torchtune#1235, 2024-07-28) the
// loop runs `logits = model(x)` (fp32: `self.output(h).float()`), `logits = logits[..., :-1,
// :].contiguous()`, `logits = logits.transpose(1, 2)` and `loss_fn(logits, labels)`, and keeps
// `logits` until the next micro-batch's `logits = model(x)` rebinds it. So, for the unchunked
// eager loss:
//   kept:     the shifted fp32 copy (F), from one micro-batch's loss to the next one's: booked
//             before the step (the previous micro-batch's), alive through backward and the
//             optimizer step;
//   forward:  log_softmax over dim 1 of the transposed copy reads it through `contiguous()`
//             (ATen's host_softmax): one more F while it writes the saved log-probabilities. That
//             is the forward's largest moment (kept F + copy F + saved F); the head's 16-bit
//             output, the upcast and the shift copy come and go before it, with at most 2 F live;
//   backward: as without it (2 x F beside the saved F), with the kept F beside them.
//
// Each transient is booked as the tensor PyTorch allocates, not as one block of their sum, since
// the caching allocator places tensors, not sums (sim/hw/caching_allocator.hpp): the forward's
// 16-bit logits and their fp32 copy are two blocks, and the backward's two gradients (ATen's
// nll_loss_backward `grad_input = at::zeros_like(self)`, then _log_softmax_backward_data's
// output) are two blocks of Fc each, the first of which fits the segment the forward's fp32
// copy left cached. Both of an op's tensors are alive only within that op, so the second is
// named apart from the first by leaving the micro-batch out of its name (MemEffect's
// per_microbatch: tensors of one op on one stage never meet another micro-batch's). Not played:
// the backward's 16-bit copy of the logits' gradient (ToCopyBackward) and the head's gradient
// GEMMs, which PyTorch runs after both fp32 gradients and the saved log-probabilities are freed,
// so they set no peak.
#include <algorithm>
#include <array>

#include "sim/parallel/pass.hpp"
#include "sim/scenario/levers_read.hpp"

namespace trainsim::parallel {

namespace {

constexpr std::string_view kKeys[] = {"training.loss_chunks", "training.compile",
                                      "training.precision",   "training.micro_batch",
                                      "training.seq_len",     "training.keep_logits",
                                      "model"};

class LossPass final : public LoweringPass {
 public:
  void prepare(LowerContext& L) override {
    loss_ = -1;
    forward_ = backward_ = {};
    kept_ = {};
    const auto n = static_cast<std::int32_t>(L.m.order.size());
    for (std::int32_t i = 0; i < n; ++i) {
      const models::Layer& l = L.m.graph[L.m.order[i]];
      // A loss with an LM head (gemm_params > 0): its saved_split is the 4 x s x V fp32 logits.
      if (l.kind != models::LayerKind::loss || l.gemm_params == 0 || L.m.seq_len <= 0) continue;
      loss_ = i;
      const std::int64_t chunks_given = scenario::effective_loss_chunks(L.s.training);
      if (chunks_given == 0) continue;  // Megatron-LM's fused loss: the saved copy only
      const std::int64_t s = L.m.seq_len, chunks = std::min(chunks_given, s);
      const core::Bytes fp32 = l.saved_split / L.tensor * L.mb_samples;  // F
      const core::Bytes per_token = l.saved_split / L.tensor / s;
      const core::Bytes chunk =
          chunks == 1 ? fp32 : per_token * (L.mb_samples * ((s + chunks - 1) / chunks));  // Fc
      const std::int64_t e = models::dtype_bytes(scenario::activation_dtype(L.s.training.precision));
      if (L.s.training.compile) {
        compiled(L, i, chunks, e, chunk);
        continue;
      }
      forward_ = {fp32 / 4 * e, e < 4 ? chunk : core::Bytes{}};  // the head's logits, the upcast
      backward_ = {chunk, chunk};  // the log-probabilities' gradient, the fp32 logits'
      if (L.s.training.keep_logits) {  // validated: one chunk, not compiled
        kept_ = fp32;
        forward_ = {fp32, core::Bytes{}};  // log_softmax's contiguous copy of the transposed logits
      }
    }
  }

  // The previous micro-batch's kept logits, on the stage that computes the loss.
  void book_states(StageContext& c) override {
    if (kept_.value == 0 || c.L.chunk_of[loss_] % c.L.stages != c.stage()) return;
    c.P.persistent[hw::MemCategory::activations] += kept_;
  }

  void layer_op(StageContext&, const UnitStep& u, LayerOp& lo) override {
    if (lo.layer != loss_) return;
    const TensorKind kind = u.forward() ? TensorKind::logits : TensorKind::logits_grad;
    const Pair& tensors = u.forward() ? forward_ : backward_;
    // First in the op's allocations: PyTorch allocates them before the saved log-probabilities
    // (forward) and before the head's gradients (backward).
    auto at = lo.allocs.begin();
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      if (tensors[t].value == 0) continue;
      MemEffect e = activation(tensors[t], kind, lo.layer);
      e.per_microbatch = t == 0;  // the second named apart from the first (see the top)
      at = lo.allocs.insert(at, e) + 1;
      lo.frees.push_back(e);
    }
  }

 private:
  // The compiled loss of layer i (see the top): its kept tensors per sample and its transients.
  void compiled(LowerContext& L, std::int32_t i, std::int64_t chunks, std::int64_t e,
                core::Bytes chunk) {
    const models::Layer& l = L.m.graph[L.m.order[i]];
    const std::int64_t input = chunks == 1 ? 4 : e;  // bytes per logit the loss is given
    const core::Bytes per_sample = l.saved_split / L.tensor;  // F per sample
    const core::Bytes change = per_sample / 4 * input - per_sample + core::Bytes{4 * L.m.seq_len};
    L.shards[i].saved += change;  // what the backward frees and a replay books
    L.kept[i].saved += change;
    forward_ = {chunks == 1 && e < 4 ? per_sample * L.mb_samples / 4 * e : core::Bytes{}, {}};
    backward_ = {chunk / 4 * input, core::Bytes{}};
  }

  // The transients of the loss's forward and of its backward, tensor by tensor (0: none).
  using Pair = std::array<core::Bytes, 2>;
  std::int32_t loss_ = -1;
  Pair forward_{}, backward_{};
  core::Bytes kept_{};
};

}  // namespace

PassEntry loss_pass() {
  return {"loss", kKeys, {}, make_pass<LossPass>};
}

}  // namespace trainsim::parallel
