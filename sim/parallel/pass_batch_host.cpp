// The per-micro-batch host work of a causal language model's training loop (docs/devices.md,
// "Host dispatch", "Per-micro-batch host work"): the small kernels the framework launches around
// the model for each micro-batch, counted from Megatron-DeepSpeed's GPT path run by DeepSpeed's
// pipeline engine (GPTModelPipe). They are tiny, so each costs its host dispatch: the pass adds
// them to the launches of the compute ops the source places them beside.
//
// Each stage that loads the micro-batch (the first, for the inputs, and the last, for the labels;
// DeepSpeed's PipelineEngine._exec_load_micro_batch calls the batch function on both) runs
// pretrain_gpt.py's get_batch_pipe:
//   tensor_parallel.broadcast_data (megatron/core/tensor_parallel/data.py): the sizes copied to
//     the GPU, broadcast, and copied back (`.cpu()`); the flattened data copied to the GPU and
//     broadcast                                                                           5
//   labels = tokens_[:, 1:].contiguous(), tokens = tokens_[:, :-1].contiguous()            2
//   megatron/utils.py get_ltor_masks_and_position_ids (default flags): torch.ones and
//     torch.tril of the s x s mask, `attention_mask < 0.5`, the loss mask's torch.ones,
//     torch.arange of the position ids (their expand_as is a view)                         5
// The first stage then clones its three inputs (tokens, position ids, mask) into the pipeline
// buffer (`x.clone().detach().to(device)`): 3. Booked on the embedding's forward.
// The last stage's loss (megatron/model/gpt_model.py CrossEntropy, around the vocabulary-parallel
// cross entropy the loss layer counts): the labels' and the losses' transpose-contiguous (2), the
// mask product, its sum and the mask's sum, the division (4): 6; the engine's
// `total_loss += loss.detach()` (1); before backward DeepSpeed's engine.backward divides by the
// accumulation steps when there are several (_scale_loss_by_gas, 1) and the fp16 optimizer
// multiplies by the loss scale (FP16_Optimizer.backward, 1; bf16 does not scale). Booked on the
// loss's forward. Autograd's backward of that scalar chain: the seed (ones_like), the division's
// and the mask product's gradients (3), and one each for the accumulation division and the loss
// scale: booked on the loss's backward.
#include "sim/parallel/batch_host.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

constexpr std::string_view kKeys[] = {"model",
                                      "training.precision",
                                      "training.micro_batch",
                                      "training.global_batch",
                                      "training.gradient_accumulation",
                                      "parallel.data",
                                      "parallel.pipeline"};

class BatchHostPass final : public LoweringPass {
 public:
  void prepare(LowerContext& L) override {
    embedding_ = loss_ = -1;
    bool causal = false;
    const auto n = static_cast<std::int32_t>(L.m.order.size());
    for (std::int32_t i = 0; i < n; ++i) {
      const models::Layer& l = L.m.graph[L.m.order[i]];
      if (l.kind == models::LayerKind::embedding && l.vocab > 0 && embedding_ < 0) embedding_ = i;
      if (l.kind == models::LayerKind::loss && l.gemm_params > 0) loss_ = i;
      causal = causal || (l.kind == models::LayerKind::attention && l.causal);
    }
    if (!causal) embedding_ = loss_ = -1;  // a GPT-style language model only
    const bool accumulates = L.microbatches > 1;
    const bool scales = L.s.training.precision == scenario::Precision::fp16;
    loss_forward_ = BatchHostWork::loss_forward + (accumulates ? 1 : 0) + (scales ? 1 : 0);
    loss_backward_ = BatchHostWork::loss_backward + (accumulates ? 1 : 0) + (scales ? 1 : 0);
  }

  void on_compute(StageContext& c, const ComputeOp& op) override {
    if (op.kind != OpKind::forward && op.kind != OpKind::backward) return;
    const bool forward = op.kind == OpKind::forward;
    std::int32_t launches = 0;
    if (forward && covers(op, embedding_))
      launches += BatchHostWork::batch + BatchHostWork::input_clones;
    if (covers(op, loss_)) {
      launches += forward ? loss_forward_ : loss_backward_;
      // A last stage that is not also the first loads the micro-batch for its labels.
      if (forward && c.P.stage != 0) launches += BatchHostWork::batch;
    }
    if (launches == 0) return;
    Op& o = c.P.ops[op.index];
    if (o.work.launches == 0) o.work.launches = o.kernels;
    o.work.launches += launches;
  }

 private:
  static bool covers(const ComputeOp& op, std::int32_t layer) {
    return layer >= 0 && op.first <= layer && layer <= op.last;
  }

  std::int32_t embedding_ = -1, loss_ = -1;
  std::int32_t loss_forward_ = 0, loss_backward_ = 0;
};

}  // namespace

PassEntry batch_host_pass() {
  return {"batch_host", kKeys, {}, make_pass<BatchHostPass>};
}

}  // namespace trainsim::parallel
