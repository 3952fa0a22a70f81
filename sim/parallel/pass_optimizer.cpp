// The optimizer step on the GPU, over the parameters this rank updates (its ZeRO shard from
// stage 1 on), after every gradient reduction; it frees the gradients (PyTorch's
// zero_grad(set_to_none=True)). Memory-bound: it reads the gradient, reads and writes every
// optimizer state, and reads and writes the fp32 weights (fp32 training) or writes the 16-bit
// copy of the fp32 master weights (mixed precision, Micikevicius et al. 2018). Optimizer
// offload moves the step to the host (pass_offload.cpp).
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

constexpr std::string_view kKeys[] = {"training.precision", "training.optimizer"};

class OptimizerPass final : public LoweringPass {
 public:
  void end_step(StageContext& c) override {
    if (c.optimizer_on_host) return;
    const scenario::StateBytes& sb = c.L.state_bytes;
    // Updated in place where there is no master (read and write); mixed precision writes the
    // 16-bit copy of the master (read and written with the optimizer states).
    const std::int64_t weight_rw = sb.master > 0 ? sb.weights : 2 * sb.weights;
    const core::Bytes traffic =
        core::Bytes{c.update_params} * (sb.gradients + 2 * sb.optimizer_states + weight_rw);
    Op opt = compute_op(OpKind::optimizer, -1, -1, 0, 0, traffic, false);
    opt.model_flops = false;
    c.update_op =
        c.B.emit(opt, std::span<const MemEffect>{}, c.held_grads, {c.ref_or_none(c.last_comm)});
  }
};

}  // namespace

PassEntry optimizer_pass() {
  return {"optimizer", kKeys, {}, make_pass<OptimizerPass>};
}

}  // namespace trainsim::parallel
