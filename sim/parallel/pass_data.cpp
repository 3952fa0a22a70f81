// Data parallelism: the gradient reduction over the data ranks, in buckets on the comm stream
// (PyTorch DDP, Li et al. 2020: a bucket is reduced once bucket_size of gradients is ready, in
// backward order, overlapping the rest of the backward). ZeRO 0 all-reduces, ZeRO 1-3
// reduce-scatter (Rajbhandari et al. 2020). Gradients accumulate locally and are reduced after
// the last micro-batch, except under ZeRO-2/3 and optimizer offload, which reduce every
// micro-batch (ZeRO-3 every layer). A bucket books a transient buffer unless it is reduced in
// memory that outlives it (parallel.bucket_buffers; Scenario::buckets_kept); PyTorch DDP's kept
// copy of the gradients is a model state.
//
// parallel.grad_reduce: after_backward is Megatron-LM's local DDP instead (--DDP-impl local
// without --use-contiguous-buffers-in-ddp; megatron/training.py train_step calls each model
// chunk's allreduce_gradients() once forward_backward_func returned, and
// megatron/model/distributed.py's allreduce_gradients flattens the chunk's gradients into one
// new buffer, divides it by the data degree, all-reduces it and copies it back tensor by
// tensor): no reduction overlaps the backward, and the chunks reduce one after another.
// after_backward_in_place is Megatron-Core's DDP without --overlap-grad-reduce
// (megatron/core/distributed/distributed_data_parallel.py sets bucket_size to None then: one
// bucket per gradient buffer; finalize_model_grads calls each chunk's finish_grad_sync, which
// starts and waits for that bucket's collective): after the schedule, each chunk's contiguous
// gradient buffer is all-reduced, or reduce-scattered under the distributed optimizer (ZeRO-1),
// in place, chunk after chunk; no copies.
#include "models/param_tensors.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

using hw::MemCategory;

constexpr std::string_view kKeys[] = {"parallel.data",        "parallel.zero",
                                      "parallel.bucket_size", "parallel.bucket_buffers",
                                      "cluster.placement",    "cluster.gpus_per_node",
                                      "training.accumulate_grads", "parallel.grad_reduce"};
constexpr std::string_view kSettings[] = {"parallel.allreduce"};

class DataPass final : public LoweringPass {
 public:
  void book_states(StageContext& c) override {
    if (!c.L.s.ddp_gradient_copy()) return;
    // PyTorch DDP's buckets: a second copy of the gradients, allocated when the model is wrapped.
    const core::Bytes gr = core::Bytes{c.trainable} * c.L.state_bytes.gradients;
    c.P.persistent[MemCategory::gradients] = gr;
    c.P.model_states[MemCategory::gradients] += gr;
  }

  void begin_stage(StageContext& c) override {
    const scenario::GradReduce g = c.L.s.parallel.grad_reduce;
    after_backward_ = g == scenario::GradReduce::after_backward && c.L.zero == 0 && !c.optimizer_on_host;
    in_place_after_ =
        g == scenario::GradReduce::after_backward_in_place && c.L.zero <= 1 && !c.optimizer_on_host;
  }

  void begin_unit(StageContext& c, UnitStep& u) override {
    if (u.forward()) return;
    const int zero = c.L.zero;
    bucket_ = {};
    deferred_.clear();
    if (after_backward_ || in_place_after_) {  // nothing reduces during the backward (end_backward does)
      defer_ = reduce_now_ = false;
      return;
    }
    // ZeRO-2 reduces every micro-batch's gradients: its reduce-scatters are emitted after the
    // unit's compute ops (each still waits for the backward that filled its bucket; only events
    // of one instant follow the program order), so the unit repeats as a macro op whose template
    // carries them as taps (ProgramBuilder::make_template).
    defer_ = zero == 2 && !c.optimizer_on_host;
    reduce_now_ = zero >= 2 || c.optimizer_on_host ? true : u.last_microbatch;
  }

  // Under ZeRO 0/1 the last backward reduces on the comm stream, interleaved with its compute
  // ops; ZeRO-2's units all reduce alike, their reduce-scatters as taps.
  bool repeats(const StageContext& c, const UnitStep& u) const override {
    return u.forward() || defer_ || !(reduce_now_ && c.L.data > 1);
  }

  void after_layer(StageContext& c, UnitStep& u, std::int32_t i, std::int32_t op) override {
    const LowerContext& L = c.L;
    if (u.forward() || fp32_reduced(L) || !reduce_now_ || L.shards[i].trainable == 0 ||
        L.data == 1)
      return;
    // Under expert parallelism the routed experts' gradients reduce over their own group
    // (pass_expert.cpp); without it, here with the rest (their group is every data rank).
    const std::int64_t routed = L.s.parallel.expert > 1 ? L.shards[i].expert_params : 0;
    bucket_ += core::Bytes{L.shards[i].trainable - routed} * L.state_bytes.gradients;
    if (bucket_ >= L.s.parallel.bucket_size || L.zero == 3) flush(c, u, op, i);
  }

  void end_unit(StageContext& c, UnitStep& u, std::int32_t) override {
    if (u.forward() || fp32_reduced(c.L)) return;
    if (reduce_now_) flush(c, u, c.layer_end, u.range.first);
    for (const Flush& f : deferred_) reduce(c, u, f);
  }

  // after_backward: each chunk of the stage in model order (Megatron's `for model_module in
  // model`), once the schedule's last exchange was posted.
  void end_backward(StageContext& c) override {
    const LowerContext& L = c.L;
    if (!(after_backward_ || in_place_after_) || L.data == 1 || fp32_reduced(L)) return;
    // The last op the schedule put on the compute stream (in_place's collectives wait for it).
    const OpRef schedule_end = c.last_compute();
    for (std::int32_t k = 0; k < L.virtual_stages; ++k) {
      if (in_place_after_)
        reduce_buffer(c, k, schedule_end);
      else
        reduce_chunk(c, k);
    }
  }

  static void apply_settings(Plan& plan, const scenario::Scenario& s) {
    plan.data_allreduce = s.parallel.allreduce;
  }

 private:
  // A bucket to reduce once the backward `after` has filled it.
  struct Flush {
    core::Bytes bytes;
    std::int32_t after, layer;
  };

  void flush(StageContext& c, UnitStep& u, std::int32_t after_op, std::int32_t layer) {
    if (bucket_.value == 0 || c.L.data == 1) return;
    const Flush f{bucket_, after_op, layer};
    bucket_ = {};
    if (defer_)
      deferred_.push_back(f);
    else
      reduce(c, u, f);
  }

  // The gradient reduction over the data ranks: an all-reduce under ZeRO 0 (priced by
  // parallel.allreduce), a reduce-scatter under ZeRO 1-3.
  static Op reduction(const LowerContext& L, std::int32_t layer, std::int32_t mb, std::int32_t chunk,
                      core::Bytes bytes) {
    const OpKind kind = L.zero == 0 ? OpKind::all_reduce : OpKind::reduce_scatter;
    Op op = comm_op(kind, StreamKind::comm, L.zero == 0 ? CommPurpose::data : CommPurpose::zero, layer,
                    mb, chunk, bytes, L.data, L.data_span.inter_node, L.data_span.per_node,
                    L.data_span.pod_members);
    op.data_reduction = kind == OpKind::all_reduce;
    return op;
  }

  // The chunk's gradient bytes (its trained parameters at the gradients' width).
  static core::Bytes chunk_gradients(const LowerContext& L, const LayerRange& r) {
    core::Bytes bytes{};
    for (std::int32_t i = r.first; i < r.end; ++i)
      bytes += core::Bytes{L.shards[i].trainable} * L.state_bytes.gradients;
    return bytes;
  }

  static void reduce(StageContext& c, UnitStep& u, const Flush& f) {
    const LowerContext& L = c.L;
    const MemEffect buffer = tensor(MemCategory::buffers, f.bytes, TensorKind::bucket, f.layer);
    const std::span<const MemEffect> booked(&buffer, L.s.buckets_kept() ? 0 : 1);
    c.last_comm = c.B.emit(reduction(L, f.layer, u.microbatch(), u.chunk(), f.bytes), booked, booked,
                           {c.B.ref(f.after)});
    c.reduced(u, c.last_comm, f.layer);
  }

  // LocalDDP.allreduce_gradients for local chunk `k`: _flatten_dense_tensors copies the chunk's
  // gradients into one new buffer and `coalesced /= data` scales it (two kernels, each reading
  // and writing it), one all-reduce over the data ranks, then each gradient tensor's copy_ from
  // its slice (a kernel per tensor, reading and writing it all once more); the buffer lives from
  // the flatten to the last copy. train_step calls it once forward_backward_func has returned,
  // under the timer 'backward-params-all-reduce', apart from 'backward-compute', and just before
  // optimizer.step: the flatten and the copy back are typed as optimizer work, so that the time
  // breakdown counts them with the step's optimizer phase (compute.optimizer) rather than as
  // backward compute, and the bubble (forward/backward phase) ends with the last backward. They
  // belong to the last micro-batch, unlike the step itself (AllocatorModel::lazy_states_op).
  static void reduce_chunk(StageContext& c, std::int32_t k) {
    const LowerContext& L = c.L;
    const std::int32_t g = k * L.stages + c.stage();
    const LayerRange& r = L.chunks[g];
    const core::Bytes bytes = chunk_gradients(L, r);
    if (bytes.value == 0) return;
    std::int32_t tensors = 0;
    for (std::int32_t i = r.first; i < r.end; ++i)
      if (L.shards[i].trainable > 0)
        tensors += static_cast<std::int32_t>(models::param_tensors(L.m.graph[L.m.order[i]]).size());
    const std::int32_t mb = L.microbatches - 1;  // after the step's last micro-batch
    const MemEffect buffer = tensor(MemCategory::buffers, bytes, TensorKind::bucket, r.first);
    Op flatten = compute_op(OpKind::optimizer, r.first, mb, k, 0.0, bytes * 4, false);
    flatten.kernels = 2;
    flatten.work.launches = 2;
    const std::int32_t packed = c.B.emit(flatten, {buffer}, {}, {});
    c.last_comm = c.B.emit(reduction(L, r.first, mb, k, bytes), {}, {}, {c.B.ref(packed)});  // ZeRO 0
    Op copy = compute_op(OpKind::optimizer, r.first, mb, k, 0.0, bytes * 2, false);
    copy.kernels = std::max(tensors, 1);
    copy.work.launches = copy.kernels;
    c.B.emit(copy, {}, {buffer}, {c.B.ref(c.last_comm)});
  }

  // Megatron-Core's finish_grad_sync for local chunk `k` without --overlap-grad-reduce: one
  // collective over the chunk's whole gradient buffer, in place, once `schedule_end`, the last
  // op the schedule put on the compute stream, ended (NCCL waits for the stream it is called
  // from; synchronous exchanges are on it); the comm stream keeps the chunks in order, the
  // optimizer waits for the last.
  static void reduce_buffer(StageContext& c, std::int32_t k, OpRef schedule_end) {
    const LowerContext& L = c.L;
    const LayerRange& r = L.chunks[k * L.stages + c.stage()];
    const core::Bytes bytes = chunk_gradients(L, r);
    if (bytes.value == 0) return;
    c.last_comm = c.B.emit(reduction(L, r.first, L.microbatches - 1, k, bytes), {}, {},
                           {schedule_end});
  }

  // training.accumulate_grads: fp32 reduces the fp32 copy itself (pass_accumulate.cpp).
  static bool fp32_reduced(const LowerContext& L) {
    return L.s.training.accumulate_grads == scenario::AccumulateGrads::fp32;
  }

  core::Bytes bucket_{};
  std::vector<Flush> deferred_;  // a ZeRO-2 backward unit's, emitted after its compute ops
  bool defer_ = false, reduce_now_ = false;
  bool after_backward_ = false;  // parallel.grad_reduce: after_backward
  bool in_place_after_ = false;  // parallel.grad_reduce: after_backward_in_place
};

}  // namespace

PassEntry data_pass() {
  return {"data", kKeys, kSettings, make_pass<DataPass>, DataPass::apply_settings,
          StatesOwner::data_parallel};
}

}  // namespace trainsim::parallel
