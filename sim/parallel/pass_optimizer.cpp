// The optimizer step on the GPU, over the parameters this rank updates (its ZeRO shard from
// stage 1 on), after every gradient reduction; it frees the gradients (PyTorch's
// zero_grad(set_to_none=True)). Memory-bound: it reads the gradient, reads and writes every
// optimizer state, and reads and writes the fp32 weights (fp32 training) or writes the 16-bit
// copy of the fp32 master weights (mixed precision, Micikevicius et al. 2018). Optimizer
// offload moves the step to the host (pass_offload.cpp).
//
// The step's transient buffers (docs/finetuning.md, "The optimizer step's temporaries") follow
// training.optimizer_impl: torch.optim's foreach AdamW (_multi_tensor_adamw) makes sqrt(v) for
// every tensor of a device/dtype group at once, a full copy of the second moments; its
// single-tensor loop (for-loop) makes sqrt(v) and its quotient by the bias correction of one
// tensor at a time; fused kernels (torch's fused=True, Megatron's and DeepSpeed's FusedAdam,
// bitsandbytes) make none; Hugging Face's Adafactor loops over tensors and makes fp32
// temporaries of one tensor's size.
//
// training.zero_grad: zeros leaves the gradients allocated after the step (model_states books
// them before the step), so the step frees none.
#include <algorithm>

#include "sim/parallel/pass.hpp"
#include "sim/parallel/tied_grad.hpp"
#include "sim/scenario/optimizer_states.hpp"

namespace trainsim::parallel {

namespace {

using hw::MemCategory;
using scenario::Optimizer;

constexpr std::string_view kKeys[] = {"training.precision", "training.optimizer",
                                      "training.optimizer_impl", "training.optimizer_block",
                                      "training.optimizer_in_backward", "training.lora",
                                      "training.accumulate_grads"};

// Bytes of the step's transient buffers when it updates `params` parameters at once whose largest
// tensor has `largest` elements.
core::Bytes step_temporaries(const scenario::TrainingSpec& t, std::int64_t params,
                             std::int64_t largest) {
  const scenario::StateBytes sb = scenario::state_bytes_per_param(t.precision, t.optimizer);
  switch (t.optimizer) {
    case Optimizer::adam:
    case Optimizer::adamw: {
      // v's bytes per element: half of m + v (the master copy left out).
      const std::int64_t v = (sb.optimizer_states - sb.master) / 2;
      switch (t.effective_optimizer_impl()) {
        case scenario::OptimizerImpl::foreach:
          // exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs): every tensor at once.
          return core::Bytes{params} * v;
        case scenario::OptimizerImpl::for_loop:
          // denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps): the square root and
          // the quotient live together, one tensor's size each.
          return core::Bytes{largest} * (2 * v);
        case scenario::OptimizerImpl::fused:
          return {};
      }
      return {};
    }
    case Optimizer::adafactor: {
      // update = grad**2 + eps, then the row x column outer product beside it, both fp32;
      // 16-bit gradients and weights are first copied to fp32 (grad.float(), p.float()).
      const std::int64_t copies = 2 + (sb.gradients < 4 ? 1 : 0) + (sb.weights < 4 ? 1 : 0);
      return core::Bytes{largest} * (4 * copies);
    }
    default:
      return {};
  }
}

class OptimizerPass final : public LoweringPass {
 public:
  void book_states(StageContext& c) override {
    const LowerContext& L = c.L;
    const scenario::TrainingSpec& t = L.s.training;
    for (std::int32_t g = c.P.stage; g < L.chunk_count(); g += L.stages)
      for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) {
        const auto lo = scenario::layer_optimizer(t.precision, t.optimizer,
                                                  t.effective_optimizer_block(),
                                                  L.m.graph[L.m.order[i]], t.lora, L.tensor,
                                                  L.shards[i].trainable);
        c.tensor_states += lo.states;
        c.tensor_paged += lo.paged;
        c.largest_trained = std::max(c.largest_trained, lo.largest_tensor);
      }
  }

  // bitsandbytes' paged optimizers keep the state buffers of their large tensors in unified
  // memory (exec/paging.cpp); the absmax and the small tensors' states stay PyTorch's.
  void place_states(StageContext& c) override {
    if (scenario::paged(c.L.s.training.optimizer) && !c.optimizer_on_host)
      c.P.paged = c.tensor_paged;
  }

  void begin_stage(StageContext& c) override { tied_ = find_tied_head(c); }

  int ops_per_layer(const LowerContext& L) const override {
    return L.s.training.optimizer_in_backward ? 1 : 0;
  }

  // A step per layer in backward takes the held gradients the model states pass books.
  bool copies_units(const LowerContext& L) const override {
    return !L.s.training.optimizer_in_backward;
  }

  void after_layer(StageContext& c, UnitStep& u, std::int32_t i, std::int32_t op) override {
    if (!c.L.s.training.optimizer_in_backward || u.forward()) return;
    // The gradients of layer i's parameters (model_states' held gradients of layer i: its own
    // backward's, and a tied weight's, held since the tied head's backward). A parameter's hook
    // (torch's register_post_accumulate_grad_hook) fires once its gradient is fully accumulated,
    // so a tied weight steps here, after its last use in backward, the embedding.
    const auto owner = [&](std::int32_t layer) {
      return layer == tied_.head ? tied_.embedding : layer;
    };
    const auto others = [&](const MemEffect& e) { return owner(e.layer) != i; };
    const auto held = std::stable_partition(c.held_grads.begin(), c.held_grads.end(), others);
    if (held == c.held_grads.end()) return;
    std::vector<MemEffect> frees(held, c.held_grads.end());
    c.held_grads.erase(held, c.held_grads.end());
    const LowerContext& L = c.L;
    const scenario::TrainingSpec& t = L.s.training;
    const auto lo = scenario::layer_optimizer(t.precision, t.optimizer,
                                              t.effective_optimizer_block(),
                                              L.m.graph[L.m.order[i]], t.lora, L.tensor,
                                              L.shards[i].trainable);
    // One optimizer per parameter (torchtune builds {p: optimizer([p])}): a foreach group is
    // one tensor, so the temporaries are those of the layer's largest tensor.
    const MemEffect temp =
        tensor(MemCategory::buffers,
               step_temporaries(L.s.training, lo.largest_tensor, lo.largest_tensor),
               TensorKind::optimizer_temp, i);
    frees.insert(frees.begin(), temp);
    c.update_op = c.B.emit(step_op(c, L.shards[i].trainable, i),
                           std::span<const MemEffect>(&temp, 1), frees, {c.B.ref(op)});
  }

  void end_step(StageContext& c) override {
    if (c.optimizer_on_host || c.L.s.training.optimizer_in_backward) return;
    const MemEffect temp = tensor(
        MemCategory::buffers,
        step_temporaries(c.L.s.training, c.update_params, c.largest_trained),
        TensorKind::optimizer_temp, -1);
    std::vector<MemEffect> frees = c.held_grads;
    frees.push_back(temp);
    c.update_op = c.B.emit(step_op(c, c.update_params, -1), std::span<const MemEffect>(&temp, 1),
                           frees, {c.ref_or_none(c.last_comm)});
  }

 private:
  TiedHead tied_;  // its gradient steps with the embedding's

  static Op step_op(const StageContext& c, std::int64_t params, std::int32_t layer) {
    const scenario::StateBytes& sb = c.L.state_bytes;
    // Updated in place where there is no master (read and write); mixed precision writes the
    // 16-bit copy of the master (read and written with the optimizer states).
    const std::int64_t weight_rw = sb.master > 0 ? sb.weights : 2 * sb.weights;
    const core::Bytes traffic =
        core::Bytes{params} * (sb.gradients + 2 * sb.optimizer_states + weight_rw);
    // About no micro-batch: what tells torch.optim's step() apart from the other work typed
    // OpKind::optimizer (AllocatorModel::lazy_states_op creates lazy states before it).
    Op opt = compute_op(OpKind::optimizer, layer, -1, 0, 0, traffic, false);
    opt.model_flops = false;
    return opt;
  }
};

}  // namespace

PassEntry optimizer_pass() {
  return {"optimizer", kKeys, {}, make_pass<OptimizerPass>};
}

}  // namespace trainsim::parallel
