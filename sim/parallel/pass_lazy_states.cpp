// The first step of an eager PyTorch run (training.lazy_states; docs/finetuning.md, "The first
// step's states"). Frameworks that keep each parameter's gradient and optimizer states as
// tensors of their own (Hugging Face's Trainer, plain training loops) have none of them before
// training: autograd's AccumulateGrad creates each .grad in the first backward, where that
// parameter's gradient is computed, and the optimizer creates each parameter's states in its
// first step() (torch.optim and transformers.AdamW: `if len(state) == 0: ... zeros_like(p)`).
// Both take blocks of the caching allocator while the step's activations come and go, so they
// sit in segments the activations reserved, and the next step's activations find the cache
// split around them.
//
// This pass puts that first step in the program's load (Program::load, played by the allocator
// model before the step, whose segments stay reserved): the step's own memory effects in op
// order, each op's allocations before its frees, with each trained layer's gradients
// created at its layer's first backward (after the op's allocations: the weight gradient is
// computed before the saved tensors go) and kept when training.zero_grad is zeros, and each
// layer's optimizer states created at the optimizer step, in parameter order, before the step's
// own transients. One block per layer for each, as the step books a layer's gradients. The
// allocator model books no flat gradient or state buffer for the program (Program::lazy_states);
// the simulated step that follows is the steady one, as before.
#include "sim/core/error.hpp"
#include "sim/parallel/pass.hpp"
#include "sim/scenario/optimizer_states.hpp"

namespace trainsim::parallel {

namespace {

using core::Bytes;
using hw::MemCategory;

constexpr std::string_view kKeys[] = {"training.lazy_states", "training.zero_grad",
                                      "training.optimizer", "training.precision", "training.lora"};

class LazyStatesPass final : public LoweringPass {
 public:
  void finish(const LowerContext& L, Plan& plan) override {
    if (!L.s.training.lazy_states) return;
    for (Program& P : plan.programs) first_step(L, P);
  }

 private:
  static void first_step(const LowerContext& L, Program& P) {
    const scenario::TrainingSpec& t = L.s.training;
    const bool kept = t.zero_grad == scenario::ZeroGrad::zeros;
    const std::int64_t grad_bytes = L.state_bytes.gradients;
    P.lazy_states = true;
    std::vector<char> grads_made(L.m.order.size(), 0);
    Bytes grads_total{}, states_total{};
    const auto push = [&](const MemEffect& e, bool alloc, std::int32_t mb) {
      P.load.push_back({e, alloc, mb});
    };
    // A gradient or state the first step creates and the run keeps: named by its layer alone.
    const auto keep = [&](MemCategory c, Bytes b, TensorKind kind, std::int32_t layer) {
      MemEffect e = tensor(c, b, kind, layer);
      e.per_microbatch = false;
      push(e, true, -1);
    };
    // Each trained layer's gradients at its first backward (kept gradients only: without
    // them the step's own effects allocate and free the layer's gradients, param_grad).
    const auto make_grads = [&](std::int32_t i) {
      if (!kept || i < 0 || grads_made[static_cast<std::size_t>(i)]) return;
      grads_made[static_cast<std::size_t>(i)] = 1;
      const std::int64_t trainable = L.shards[static_cast<std::size_t>(i)].trainable;
      if (trainable <= 0) return;
      const Bytes b = Bytes{trainable} * grad_bytes;
      keep(MemCategory::gradients, b, TensorKind::param_grad, i);
      grads_total += b;
    };
    // Every trained layer's optimizer states, in parameter order (the optimizer's loop).
    const auto make_states = [&] {
      for (std::int32_t i = P.first_layer; i <= P.last_layer; ++i) {
        const models::Layer& l = L.m.graph[L.m.order[static_cast<std::size_t>(i)]];
        const std::int64_t trainable = L.shards[static_cast<std::size_t>(i)].trainable;
        if (trainable <= 0) continue;
        // As the optimizer pass and model_states book them: by shape for the per-tensor
        // optimizers (8-bit AdamW, Adafactor), else bytes per trained parameter.
        const Bytes per_layer =
            scenario::per_tensor_states(t.optimizer)
                ? scenario::layer_optimizer(t.precision, t.optimizer, l, t.lora, L.tensor, trainable).states
                : Bytes{trainable} * L.state_bytes.optimizer_states;
        keep(MemCategory::optimizer_states, per_layer, TensorKind::optimizer_state, i);
        states_total += per_layer;
      }
    };
    const auto play_op = [&](const Op& op, std::int32_t mb) {
      for (auto e = op.alloc_begin; e < op.alloc_end; ++e) push(P.effects[e], true, mb);
      if (op.kind == OpKind::backward) make_grads(op.layer);
      if (op.kind == OpKind::optimizer) make_states();
      for (auto e = op.free_begin; e < op.free_end; ++e) push(P.effects[e], false, mb);
    };
    for (const Op& op : P.ops) {
      if (op.macro < 0) {
        play_op(op, op.microbatch);
        continue;
      }
      const MacroTemplate& m = P.macros[static_cast<std::size_t>(op.macro)];
      for (auto k = m.begin; k < m.end; ++k) play_op(P.macro_ops[k], op.microbatch);
    }
    // What the layers' blocks leave out of the booked states (a tensor-parallel shard's
    // rounding): one block more, so the step ends holding the program's states.
    const auto rest = [&](MemCategory c, Bytes made, TensorKind kind) {
      const Bytes booked = P.persistent[c];
      TRAINSIM_CHECK(made <= booked, "lazy states: the first step creates more than the states booked");
      if (booked > made) keep(c, booked - made, kind, -1);
    };
    if (kept) rest(MemCategory::gradients, grads_total, TensorKind::param_grad);
    rest(MemCategory::optimizer_states, states_total, TensorKind::optimizer_state);
  }
};

}  // namespace

PassEntry lazy_states_pass() { return {"lazy_states", kKeys, {}, make_pass<LazyStatesPass>, nullptr}; }

}  // namespace trainsim::parallel
