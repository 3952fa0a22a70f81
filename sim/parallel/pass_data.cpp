// Data parallelism: the gradient reduction over the data ranks, in buckets on the comm stream
// (PyTorch DDP, Li et al. 2020: a bucket is reduced once bucket_size of gradients is ready, in
// backward order, overlapping the rest of the backward). ZeRO 0 all-reduces, ZeRO 1-3
// reduce-scatter (Rajbhandari et al. 2020). Gradients accumulate locally and are reduced after
// the last micro-batch, except under ZeRO-2/3 and optimizer offload, which reduce every
// micro-batch (ZeRO-3 every layer). A bucket books a transient buffer unless it is reduced in
// memory that outlives it (parallel.bucket_buffers; Scenario::buckets_kept); PyTorch DDP's kept
// copy of the gradients is a model state.
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

using hw::MemCategory;

constexpr std::string_view kKeys[] = {"parallel.data",        "parallel.zero",
                                      "parallel.bucket_size", "parallel.bucket_buffers",
                                      "cluster.placement",    "cluster.gpus_per_node",
                                      "training.accumulate_grads"};
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

  void begin_unit(StageContext& c, UnitStep& u) override {
    if (u.forward()) return;
    const int zero = c.L.zero;
    bucket_ = {};
    deferred_.clear();
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

  static void reduce(StageContext& c, UnitStep& u, const Flush& f) {
    const LowerContext& L = c.L;
    const OpKind kind = L.zero == 0 ? OpKind::all_reduce : OpKind::reduce_scatter;
    const MemEffect buffer = tensor(MemCategory::buffers, f.bytes, TensorKind::bucket, f.layer);
    const std::span<const MemEffect> booked(&buffer, L.s.buckets_kept() ? 0 : 1);
    Op op = comm_op(kind, StreamKind::comm, L.zero == 0 ? CommPurpose::data : CommPurpose::zero,
                    f.layer, u.microbatch(), u.chunk(), f.bytes, L.data, L.data_span.inter_node,
                    L.data_span.per_node);
    op.data_reduction = kind == OpKind::all_reduce;
    c.last_comm = c.B.emit(op, booked, booked, {c.B.ref(f.after)});
    c.reduced(u, c.last_comm, f.layer);
  }

  // training.accumulate_grads: fp32 reduces the fp32 copy itself (pass_accumulate.cpp).
  static bool fp32_reduced(const LowerContext& L) {
    return L.s.training.accumulate_grads == scenario::AccumulateGrads::fp32;
  }

  core::Bytes bucket_{};
  std::vector<Flush> deferred_;  // a ZeRO-2 backward unit's, emitted after its compute ops
  bool defer_ = false, reduce_now_ = false;
};

}  // namespace

PassEntry data_pass() {
  return {"data", kKeys, kSettings, make_pass<DataPass>, DataPass::apply_settings,
          StatesOwner::data_parallel};
}

}  // namespace trainsim::parallel
