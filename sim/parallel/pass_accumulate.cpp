// training.accumulate_grads: the pass over a stage's weight gradients that adds each
// micro-batch's into the step's (docs/devices.md, "Gradient accumulation passes"). The backward
// op already writes each gradient once (pass_compute.cpp); what a framework does beyond that:
//
// autograd: PyTorch's AccumulateGrad keeps the first micro-batch's gradient as param.grad (after
//   zero_grad(set_to_none)) and adds every later one in place, `variable_grad += new_grad`
//   (torch/csrc/autograd/functions/accumulate_grad.h): one kernel per parameter tensor reading
//   both and writing param.grad, 3 x the gradient's bytes per parameter. DeepSpeed's ZeRO-1 under
//   fp16 leaves the accumulation to autograd (stage2.py registers its gradient hooks only with
//   partition_gradients or overlap_comm, both off at stage 1 by default).
// fp32: DeepSpeed's BF16_Optimizer (deepspeed/runtime/bf16_optimizer.py, with the pipeline
//   engine since DeepSpeed PR #1801): before each backward clear_lp_grads sets every 16-bit
//   .grad to None, after it update_hp_grads runs, per parameter tensor,
//   `hp_grad.add_(lp.grad.to(float32))`: the cast reads 2 and writes 4 bytes, the add reads
//   4 + 4 and writes 4, 18 bytes per parameter (16-bit gradients: g + 16) and two kernels per
//   tensor, every micro-batch. The fp32 gradients are one unsharded buffer (4 bytes per
//   parameter, beside the 16-bit ones); after the pipeline's last backward the engine's
//   _bf16_reduce_grads all-reduces it over the data ranks in fp32
//   (buffered_allreduce_fallback, MEMORY_OPT_ALLREDUCE_SIZE = 5e8 elements per buffer), in
//   place of the 16-bit reduction (the data pass stands aside).
// autograd's adds run after each layer's backward (AccumulateGrad fires as the backward reaches
// each parameter; a data-parallel bucket is ready after them), the BF16 optimizer's after the
// unit's backward (update_hp_grads once autograd.backward returns), before the engine sends
// the input gradient on.
#include "models/param_tensors.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

using hw::MemCategory;
using scenario::AccumulateGrads;

constexpr std::string_view kKeys[] = {"training.accumulate_grads", "training.precision",
                                      "parallel.data", "cluster.placement",
                                      "cluster.gpus_per_node"};

// DeepSpeed's MEMORY_OPT_ALLREDUCE_SIZE (deepspeed/runtime/constants.py): elements per buffer
// of buffered_allreduce_fallback.
constexpr std::int64_t kAllreduceBufferElements = 500'000'000;
constexpr std::int64_t kFp32Bytes = 4;

class AccumulatePass final : public LoweringPass {
 public:
  void prepare(LowerContext& L) override {
    mode_ = L.states_owner == StatesOwner::data_parallel ? L.s.training.accumulate_grads
                                                         : AccumulateGrads::fused;
    // fused-fp32 has no pass of its own either: its gradients are 4 bytes (Scenario::state_bytes).
    if (mode_ == AccumulateGrads::fused_fp32) mode_ = AccumulateGrads::fused;
    tensors_.assign(L.m.order.size(), 0);
    if (mode_ == AccumulateGrads::fused) return;
    for (std::size_t i = 0; i < L.m.order.size(); ++i)
      if (L.shards[i].trainable > 0)
        tensors_[i] =
            static_cast<std::int32_t>(models::param_tensors(L.m.graph[L.m.order[i]]).size());
  }

  void book_states(StageContext& c) override {
    if (mode_ != AccumulateGrads::fp32) return;
    // The BF16 optimizer's fp32 gradients, unsharded, allocated with the optimizer.
    const core::Bytes fp32 = core::Bytes{c.trainable} * kFp32Bytes;
    c.P.persistent[MemCategory::gradients] += fp32;
    c.P.model_states[MemCategory::gradients] += fp32;
  }

  // Under autograd one add per layer's backward, so ops_per_layer reserves it.
  int ops_per_layer(const LowerContext& L) const override {
    return L.s.training.accumulate_grads == AccumulateGrads::autograd ? 1 : 0;
  }

  // The first backward of a chunk adds nothing under autograd: it differs from the next ones.
  bool repeats(const StageContext&, const UnitStep& u) const override {
    return u.forward() || mode_ != AccumulateGrads::autograd || !u.first_microbatch;
  }

  // autograd: each layer's adds right after its backward (AccumulateGrad runs as the backward
  // reaches each parameter), so a data-parallel bucket reduced after the layer waits for them.
  void after_layer(StageContext& c, UnitStep& u, std::int32_t i, std::int32_t) override {
    if (u.forward() || mode_ != AccumulateGrads::autograd || u.first_microbatch) return;
    const std::int64_t params = c.L.shards[i].trainable;
    if (params == 0) return;
    add_op(c, u, i, core::Bytes{params} * (3 * c.L.state_bytes.gradients),
           tensors_[static_cast<std::size_t>(i)], core::Bytes{});
  }

  // fp32: the BF16 optimizer's adds over the unit's parameters once its backward returned.
  void end_unit(StageContext& c, UnitStep& u, std::int32_t) override {
    if (u.forward() || mode_ != AccumulateGrads::fp32) return;
    const LowerContext& L = c.L;
    std::int64_t params = 0;
    std::int32_t tensors = 0;
    for (std::int32_t i = u.range.first; i < u.range.end; ++i) {
      params += L.shards[i].trainable;
      tensors += tensors_[static_cast<std::size_t>(i)];
    }
    if (params == 0) return;
    add_op(c, u, u.range.first, core::Bytes{params} * (L.state_bytes.gradients + 4 * kFp32Bytes),
           2 * tensors, core::Bytes{c.largest_trained} * kFp32Bytes);
    if (u.last_microbatch) reduce(c, u, params);
  }

 private:
  // Accumulation kernels on the compute stream after the last compute op; the op after which
  // later passes (the data pass's reductions) and the unit's end follow.
  static void add_op(StageContext& c, const UnitStep& u, std::int32_t layer, core::Bytes bytes,
                     std::int32_t launches, core::Bytes cast) {
    Op op = compute_op(OpKind::backward, layer, u.microbatch(), u.chunk(), 0.0, bytes, false);
    op.kernels = std::max(launches, 1);
    op.work.launches = op.kernels;
    const MemEffect temp = tensor(MemCategory::buffers, cast, TensorKind::grad_cast, layer);
    c.layer_end = c.B.emit(op, {temp}, {temp}, {});
  }

  // The fp32 all-reduce of the chunk's `params` gradients over the data ranks, after its last
  // backward and that backward's adds.
  static void reduce(StageContext& c, const UnitStep& u, std::int64_t params) {
    const LowerContext& L = c.L;
    if (L.data == 1) return;
    std::int64_t left = params;
    while (left > 0) {
      const std::int64_t n = std::min(left, kAllreduceBufferElements);
      left -= n;
      Op op = comm_op(OpKind::all_reduce, StreamKind::comm, CommPurpose::data, u.range.first,
                      u.microbatch(), u.chunk(), core::Bytes{n} * kFp32Bytes, L.data,
                      L.data_span.inter_node, L.data_span.per_node,
                      L.data_span.pod_members);
      op.data_reduction = true;
      c.last_comm = c.B.emit(op, {}, {}, {c.B.ref(c.layer_end)});
    }
  }

  AccumulateGrads mode_ = AccumulateGrads::fused;
  std::vector<std::int32_t> tensors_;  // parameter tensors per trained layer
};

}  // namespace

PassEntry accumulate_pass() {
  return {"accumulate", kKeys, {}, make_pass<AccumulatePass>};
}

}  // namespace trainsim::parallel
