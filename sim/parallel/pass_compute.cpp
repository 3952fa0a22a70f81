// The layer graph's compute ops: each layer's forward and backward for one micro-batch, with its
// FLOPs and bytes (the layer formulas of docs/models.md, sharded by shard_layers) and the
// activations it books and frees. A layer's output lives until its last consumer's forward in
// the chunk (or the chunk's end); what its forward saves (KeptActivations: what recomputation
// leaves) lives until its backward; gradients with respect to outputs live from the backward
// that produces them to the backward that consumes them (only for outputs that have one: under
// LoRA none below the lowest adapter). A layer whose base weights are quantized (QLoRA)
// dequantizes them to the compute dtype for its forward and its backward: a transient buffer,
// one linear weight at a time (bitsandbytes' Linear4bit), booked as its largest one.
#include "sim/parallel/flash_core.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

constexpr std::string_view kKeys[] = {"model",
                                      "training.micro_batch",
                                      "training.seq_len",
                                      "training.attention",
                                      "training.accumulate_grads",
                                      "training.softmax_saves_input",
                                      "training.precision",
                                      "training.optimizer",
                                      "training.lora",
                                      "training.modules",
                                      "training.compile",
                                      "training.fp8_weight_cache",
                                      "training.fp8_attention",
                                      "training.recompute",
                                      "training.recompute_layers",
                                      "parallel.context"};

// fp8_weight_cache: step (Transformer Engine's `is_first_microbatch`, which Megatron-Core's
// forward_step sets on a step's first micro-batch): each GEMM weight of the stage quantized once
// and kept, with its fp8 transpose for the backward's GEMMs, for the rest of the step: 2 bytes
// per GEMM parameter, booked with the weights.
core::Bytes cached_fp8_weights(const StageContext& c) {
  const LowerContext& L = c.L;
  if (!L.s.training.fp8_weight_cache_step) return {};
  std::int64_t gemm = 0;
  for (std::int32_t g = c.stage(); g < L.chunk_count(); g += L.stages)
    for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) gemm += L.shards[i].gemm_params;
  return core::Bytes{gemm} * 2;
}

}  // namespace

// The low-precision copies of layer i's GEMM weights one forward makes (autocast's cast cache,
// fp8's quantized weights); the GEMMs keep them for their backward. Once per micro-batch: the
// cast cache is emptied when the autocast region (the forward) is left. None under
// fp8_weight_cache: step, whose copies live through the step (cached_fp8_weights).
core::Bytes weight_casts(const LowerContext& L, std::int32_t i) {
  if (L.s.training.fp8_weight_cache_step) return {};
  return core::Bytes{L.shards[i].gemm_params} * scenario::weight_cast_bytes(L.s.training.precision);
}

// A checkpointed layer's casts are tensors autograd would save for the backward, which the
// checkpoint does not keep: the block's replay makes them again for the backward. fp8 casts per
// GEMM call (torchao's Float8Linear, Transformer Engine without the step cache) die with the
// forward's op; autocast's stay in its cast cache until the forward's autocast region ends (the
// unit's forward).
bool casts_replayed(const LowerContext& L, std::int32_t i) {
  return L.kept[i].checkpointed && scenario::weight_cast_bytes(L.s.training.precision) > 0;
}

namespace {

class ComputePass final : public LoweringPass {
 public:
  // After the states' owner booked the weights (book_states).
  void place_states(StageContext& c) override {
    const core::Bytes cached = cached_fp8_weights(c);
    c.P.persistent[hw::MemCategory::weights] += cached;
    c.P.model_states[hw::MemCategory::weights] += cached;
  }

  void layer_op(StageContext& c, const UnitStep& u, LayerOp& lo) override {
    if (u.forward())
      forward(c, u, lo);
    else
      backward(c, u, lo);
  }

 private:
  static void forward(StageContext& c, const UnitStep& u, LayerOp& lo) {
    const LowerContext& L = c.L;
    const std::int32_t i = lo.layer, g = u.g;
    const LayerRange r = u.range;
    const auto mb_samples = L.mb_samples;
    const auto& sh = L.shards[i];
    lo.op = shaped(
        compute_op(OpKind::forward, i, u.microbatch(), u.chunk(), sh.flops * mb_samples,
                   sh.io * mb_samples + sh.weight_bytes + sh.dequant_traffic, sh.matmul),
        sh, 1);
    lo.op.work.launches += sh.dequant_launches;
    add_flash_core(lo.op, L.s, L.m.graph[L.m.order[i]], sh.core_flops * double(mb_samples), false);
    dequantize(lo, sh, i, TensorKind::dequantized);
    lo.allocs.push_back(activation(sh.output * mb_samples, TensorKind::output, i));
    lo.allocs.push_back(activation(L.kept[i].saved * mb_samples, TensorKind::saved, i));
    if (const core::Bytes casts = weight_casts(L, i); casts.value > 0) {
      lo.allocs.push_back(activation(casts, TensorKind::weight_cast, i));
      if (casts_replayed(L, i) && !scenario::autocast(L.s.training.precision))
        lo.frees.push_back(activation(casts, TensorKind::weight_cast, i));
    }
    // Free at the end: outputs whose last consumer is this layer.
    for (auto pr : L.producers[i])
      if (L.last_consumer[pr] == i && L.chunk_of[pr] == g)
        lo.frees.push_back(activation(L.shards[pr].output * mb_samples, TensorKind::output, pr));
    if (i + 1 == r.end) {
      // Outputs still live (consumed in later chunks or nowhere) die with the unit.
      for (std::int32_t k = r.first; k <= i; ++k)
        if (L.last_consumer[k] < 0 || L.last_consumer[k] >= r.end)
          lo.frees.push_back(activation(L.shards[k].output * mb_samples, TensorKind::output, k));
      // Autocast's cache empties as the forward leaves its region: the checkpointed layers' casts.
      if (scenario::autocast(L.s.training.precision))
        for (std::int32_t k = r.first; k <= i; ++k)
          if (casts_replayed(L, k)) lo.frees.push_back(activation(weight_casts(L, k), TensorKind::weight_cast, k));
    }
  }

  static void dequantize(LayerOp& lo, const LayerShard& sh, std::int32_t i, TensorKind kind) {
    if (sh.dequantized.value == 0) return;
    const MemEffect w = tensor(hw::MemCategory::buffers, sh.dequantized, kind, i);
    lo.allocs.push_back(w);
    lo.frees.push_back(w);
  }

  static void backward(StageContext& c, const UnitStep& u, LayerOp& lo) {
    const LowerContext& L = c.L;
    const std::int32_t i = lo.layer, g = u.g;
    const LayerRange r = u.range;
    const auto mb_samples = L.mb_samples;
    const auto& sh = L.shards[i];
    const auto nlayers = static_cast<std::int32_t>(L.m.order.size());
    const std::int64_t gb = L.state_bytes.gradients;
    // Below the lowest trained parameter nothing runs backward (LoRA).
    const core::Bytes traffic = sh.grad_out ? sh.io * mb_samples * 2 + sh.weight_bytes +
                                                  core::Bytes{sh.trainable} * gb + sh.dequant_traffic
                                            : core::Bytes{};
    lo.op = shaped(compute_op(OpKind::backward, i, u.microbatch(), u.chunk(),
                              sh.flops * sh.backward_factor * mb_samples, traffic, sh.matmul),
                   sh, 2);
    if (sh.grad_out) lo.op.work.launches += sh.dequant_launches;
    if (sh.backward_factor > 0)  // the core's backward: dQ, dK and dV, twice its forward FLOPs
      add_flash_core(lo.op, L.s, L.m.graph[L.m.order[i]], 2 * sh.core_flops * double(mb_samples),
                     true);
    if (sh.grad_out) dequantize(lo, sh, i, TensorKind::dequantized_backward);
    if (i + 1 == nlayers)
      lo.allocs.push_back(
          activation(sh.output * mb_samples, TensorKind::grad, i));  // loss gradient seeds backward
    for (auto pr : L.producers[i])
      if (L.last_consumer[pr] == i && L.chunk_of[pr] == g && L.shards[pr].grad_out)
        lo.allocs.push_back(activation(L.shards[pr].output * mb_samples, TensorKind::grad, pr));
    core::Bytes input_grad{};
    if (i == r.first && !u.first_chunk && L.shards[L.chunks[g - 1].end - 1].grad_out)
      input_grad = L.shards[L.chunks[g - 1].end - 1].output * mb_samples;
    lo.allocs.push_back(activation(input_grad, TensorKind::input_grad, i));
    // Saved tensors: selective recomputation re-created the core apart from the rest.
    const core::Bytes core_bytes = L.kept[i].core * mb_samples;
    lo.frees.push_back(activation(sh.saved * mb_samples - core_bytes, TensorKind::saved, i));
    lo.frees.push_back(activation(core_bytes, TensorKind::core, i));
    if (const core::Bytes casts = weight_casts(L, i); casts.value > 0)
      lo.frees.push_back(activation(casts, TensorKind::weight_cast, i));
    lo.frees.push_back(activation(input_grad, TensorKind::input_grad, i));
    const bool has_grad_out = sh.grad_out && (i + 1 == nlayers || i + 1 == r.end ||
                              (L.last_consumer[i] >= 0 && L.last_consumer[i] < r.end));
    if (has_grad_out) lo.frees.push_back(activation(sh.output * mb_samples, TensorKind::grad, i));
  }
};

}  // namespace

PassEntry compute_pass() {
  return {"compute", kKeys, {}, make_pass<ComputePass>};
}

}  // namespace trainsim::parallel
