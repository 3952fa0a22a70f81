// Model states — weights, gradients, optimizer states — and their sharding over the data ranks
// (ZeRO, Rajbhandari et al. 2020: stage 1 shards the optimizer states, 2 also the gradients, 3
// also the weights; Figure 1's per-device bytes). Weights and optimizer states are booked before
// the step; gradients at each layer's first backward (sharded from ZeRO-2 on), freed by the
// optimizer step (PyTorch's zero_grad(set_to_none=True)); under training.zero_grad: zeros
// (set_to_none=False) the previous step's gradients are still allocated when the step begins, so
// they are booked before it, with the weights, and never freed. ZeRO-3's gathers before each
// forward and backward, and its persistent parameters, are the zero3 pass's (pass_zero3.cpp);
// ZeRO-1/2 all-gather the updated weights after the optimizer step (or, with
// parallel.param_gather: overlapped, before the next step's first forward: pass_param_gather.cpp).
//
// A tied LM head (a loss layer whose GEMM reads the embedding's V x h weight) shares one
// parameter with the embedding: autograd's AccumulateGrad creates that parameter's .grad at the
// head's backward, right after the loss, and the embedding's backward adds into it at the end of
// backward. So when the embedding sits on the same stage, its tied elements' gradient is
// allocated at the head's first backward (named by the head's layer, freed with the embedding's
// gradients) and the embedding's own backward allocates only the rest (learned positions, token
// types).
#include "sim/parallel/pass.hpp"
#include "sim/parallel/tied_grad.hpp"
#include "sim/parallel/topology.hpp"

namespace trainsim::parallel {

namespace {

using hw::MemCategory;

constexpr std::string_view kKeys[] = {"parallel.zero", "parallel.data", "parallel.expert", "parallel.param_gather",
                                      "training.precision",
                                      "training.optimizer", "training.optimizer_block",
                                      "training.lora", "training.zero_grad",
                                      "training.accumulate_grads"};

class ModelStatesPass final : public LoweringPass {
 public:
  void book_states(StageContext& c) override {
    const LowerContext& L = c.L;
    Program& P = c.P;
    const std::int64_t params = c.params, trained = c.trainable, d = L.data;
    const int zero = L.zero;
    // Frozen parameters (LoRA) hold their weights only.
    const core::Bytes w = c.weight_bytes;
    const core::Bytes gr = core::Bytes{trained} * L.state_bytes.gradients;
    const core::Bytes o = scenario::per_tensor_states(L.s.training.optimizer)
                              ? c.tensor_states
                              : core::Bytes{trained} * L.state_bytes.optimizer_states;
    P.parameters = zero == 3 ? (params + d - 1) / d : params;
    P.persistent[MemCategory::weights] = zero == 3 ? core::ceil_div(w, d) : w;
    P.persistent[MemCategory::optimizer_states] = zero >= 1 ? core::ceil_div(o, d) : o;
    experts_ = zero == 1 ? stage_experts(c) : 0;
    if (experts_ > 0) {
      // Megatron-Core's distributed optimizer beside expert parallelism: the dense parameters'
      // states sharded over the data x context ranks, the routed experts' over the
      // expert-data-parallel ranks that hold the same experts (data x context / expert).
      const std::int64_t ed = d / L.s.parallel.expert;
      const core::Bytes per{L.state_bytes.optimizer_states};
      P.persistent[MemCategory::optimizer_states] =
          core::ceil_div(core::Bytes{trained - experts_} * per.value, d) +
          core::ceil_div(core::Bytes{experts_} * per.value, ed);
      c.update_params = (trained - experts_ + d - 1) / d + (experts_ + ed - 1) / ed;
    } else if (zero >= 1) {
      c.update_params = (trained + d - 1) / d;
    }
    P.model_states[MemCategory::weights] = P.persistent[MemCategory::weights];
    P.model_states[MemCategory::optimizer_states] = P.persistent[MemCategory::optimizer_states];
    P.model_states[MemCategory::gradients] = zero >= 2 ? core::ceil_div(gr, d) : gr;
    if (kept_grads(L)) P.persistent[MemCategory::gradients] = P.model_states[MemCategory::gradients];
  }

  void begin_stage(StageContext& c) override {
    grads_allocated_.assign(c.L.m.order.size(), 0);
    tied_ = find_tied_head(c);
    tied_held_ = false;
  }

  int ops_per_layer(const LowerContext& L) const override { return L.zero == 3 ? 2 : 0; }
  bool expands_units(const LowerContext& L) const override { return L.zero == 3; }

  // ZeRO-3's gathers gate the compute ops; the first backward of a chunk allocates its gradients.
  bool repeats(const StageContext& c, const UnitStep& u) const override {
    return c.L.zero != 3 && (u.forward() || !u.first_microbatch);
  }

  void layer_op(StageContext& c, const UnitStep& u, LayerOp& lo) override {
    const std::int32_t i = lo.layer;
    if (u.forward() || c.optimizer_on_host || kept_grads(c.L)) return;
    if (i == tied_.head && !tied_held_) {
      tied_held_ = true;
      hold(c, lo, i, grad_bytes(c.L, tied_.elements));
    }
    if (grads_allocated_[i] || c.L.shards[i].trainable <= 0) return;
    grads_allocated_[i] = 1;
    core::Bytes grads = grad_bytes(c.L, c.L.shards[i].trainable);
    // The tied part is held since the head's backward; the rest, sharded, rounds as the whole.
    if (i == tied_.embedding && tied_held_) grads = grads - grad_bytes(c.L, tied_.elements);
    if (grads.value > 0) hold(c, lo, i, grads);
  }

  // ZeRO-1/2: every rank updated its shard; the weights are gathered whole again.
  void end_step(StageContext& c) override {
    const LowerContext& L = c.L;
    if ((L.zero != 1 && L.zero != 2) || weights_gathered_before_forward(L)) return;
    const core::Bytes params_bytes = core::Bytes{c.trainable - experts_} * L.state_bytes.weights;
    c.B.emit(comm_op(OpKind::all_gather, StreamKind::comm, CommPurpose::zero, -1, -1, 0,
                     params_bytes, L.data, L.data_span.inter_node, L.data_span.per_node,
                     L.data_span.pod_members),
             {}, {}, {c.B.ref(c.update_op)});
    if (experts_ == 0) return;
    // The routed experts' updated shards, gathered over their expert-data-parallel group.
    const GroupSpan g = expert_data_span(L.s);
    c.B.emit(comm_op(OpKind::all_gather, StreamKind::comm, CommPurpose::zero, -1, -1, 0,
                     core::Bytes{experts_} * L.state_bytes.weights,
                     L.data / L.s.parallel.expert, g.inter_node, g.per_node, g.pod_members),
             {}, {}, {c.B.ref(c.update_op)});
  }

 private:
  // zero_grad: zeros (validated without ZeRO-2/3, FSDP and optimizer offload).
  static bool kept_grads(const LowerContext& L) {
    return L.s.training.zero_grad == scenario::ZeroGrad::zeros;
  }

  // The routed experts' parameters on this stage's devices (none without expert parallelism).
  static std::int64_t stage_experts(const StageContext& c) {
    const LowerContext& L = c.L;
    if (L.s.parallel.expert <= 1) return 0;
    std::int64_t e = 0;
    for (std::int32_t g = c.stage(); g < L.chunk_count(); g += L.stages)
      for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i)
        if (L.shards[i].trainable > 0) e += L.shards[i].expert_params;
    return e;
  }

  static core::Bytes grad_bytes(const LowerContext& L, std::int64_t elements) {
    const core::Bytes grads = core::Bytes{elements} * L.state_bytes.gradients;
    return L.zero >= 2 ? core::ceil_div(grads, L.data) : grads;
  }

  static void hold(StageContext& c, LayerOp& lo, std::int32_t layer, core::Bytes bytes) {
    MemEffect held = tensor(MemCategory::gradients, bytes, TensorKind::param_grad, layer);
    held.per_microbatch = false;
    lo.allocs.push_back(held);
    c.held_grads.push_back(held);
  }

  std::vector<char> grads_allocated_;
  std::int64_t experts_ = 0;  // routed experts' parameters of the stage under ZeRO-1
  TiedHead tied_;
  bool tied_held_ = false;
};

}  // namespace

PassEntry model_states_pass() {
  return {"model_states", kKeys, {}, make_pass<ModelStatesPass>, nullptr,
          StatesOwner::data_parallel};
}

}  // namespace trainsim::parallel
