// Offload (ZeRO-Offload, Ren et al. 2021; ZeRO-Infinity's parameter offload, Rajbhandari et al.
// 2021): what moves to host memory and the ops that carry it (the formulas are offload.hpp's).
// Optimizer offload: each micro-batch's 16-bit gradients are booked at their layer's backward
// and freed when the PCIe copy that carries them to the host ends (DeepSpeed accumulates on the
// host, so nothing stays on the GPU between micro-batches). With data parallelism each reduced
// bucket is copied (each rank its 1/data share from ZeRO-1 on); alone, per bucket_size of
// gradients. The CPU then updates the rank's shard and the 16-bit weights come back over PCIe.
// Parameter offload: each layer's forward and backward first copy the rank's weight shard
// host -> device (before ZeRO-3 gathers it).
#include "sim/parallel/offload.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

using hw::MemCategory;

constexpr std::string_view kKeys[] = {"training.offload", "parallel.bucket_size", "cluster.pcie",
                                      "cluster.host_memory", "cluster.host_memory_bandwidth"};

class OffloadPass final : public LoweringPass {
 public:
  void place_states(StageContext& c) override {
    const auto& off = c.L.s.training.offload;
    c.optimizer_on_host = off.optimizer_on_cpu();
    c.P.host = host_states(c.L.s, c.trainable, c.L.zero, c.L.data);
    remove_offloaded_states(off, c.P.persistent, c.P.model_states);
  }

  void begin_stage(StageContext&) override {
    pending_ = {};
    tensors_.clear();
    last_d2h_ = -1;
  }

  bool expands_units(const LowerContext& L) const override {
    return L.s.training.offload.parameters_on_cpu() || L.s.training.offload.optimizer_on_cpu();
  }

  // Gradients pending a copy run on across units.
  bool copies_units(const LowerContext& L) const override { return !expands_units(L); }

  // Every backward copies its gradients out.
  bool repeats(const StageContext& c, const UnitStep& u) const override {
    return u.forward() || !zero_offload(c);
  }

  void before_layer(StageContext& c, UnitStep& u, std::int32_t i) override {
    fetched_ = {};
    const LowerContext& L = c.L;
    if (!L.s.training.offload.parameters_on_cpu() || L.shards[i].params == 0) return;
    fetched_ = L.shards[i].weight_bytes;
    if (L.zero == 3) fetched_ = core::ceil_div(fetched_, L.data);
    const TensorKind kind = u.forward() ? TensorKind::fetched : TensorKind::fetched_backward;
    c.param_ready =
        c.B.emit(pcie_copy_op(OpKind::pcie_h2d, i, u.microbatch(), u.chunk(), fetched_),
                 {tensor(MemCategory::weights, fetched_, kind, i)}, {}, {c.prefetch_after()});
  }

  void layer_op(StageContext& c, const UnitStep& u, LayerOp& lo) override {
    const std::int32_t i = lo.layer;
    lo.frees.push_back(tensor(MemCategory::weights, fetched_,
                              u.forward() ? TensorKind::fetched : TensorKind::fetched_backward, i));
    if (u.forward() || !zero_offload(c)) return;
    const core::Bytes grads = core::Bytes{c.L.shards[i].trainable} * c.L.state_bytes.gradients;
    const MemEffect t = tensor(MemCategory::gradients, grads, TensorKind::offload_grad, i);
    lo.allocs.push_back(t);
    if (c.L.shards[i].trainable == 0) return;
    pending_ += grads;
    tensors_.push_back(t);
  }

  void after_layer(StageContext& c, UnitStep& u, std::int32_t i, std::int32_t op) override {
    if (alone(c, u) && c.L.shards[i].trainable > 0 && pending_ >= c.L.s.parallel.bucket_size)
      flush(c, u, op, i);
  }
  void after_reduction(StageContext& c, UnitStep& u, std::int32_t op, std::int32_t layer) override {
    flush(c, u, op, layer);
  }
  void end_unit(StageContext& c, UnitStep& u, std::int32_t last) override {
    if (alone(c, u)) flush(c, u, last, u.range.first);
  }

  // ZeRO-Offload: the CPU updates this rank's shard once every gradient is on the host, then the
  // updated 16-bit weights go back over PCIe (parameter offload leaves them on the host).
  void end_step(StageContext& c) override {
    if (!zero_offload(c)) return;
    const std::int32_t cpu =
        c.B.emit(cpu_optimizer_op(cpu_optimizer_traffic(c.L.s, c.update_params)),
                 std::span<const MemEffect>{}, c.held_grads,
                 {c.ref_or_none(last_d2h_), c.ref_or_none(c.last_comm)});
    c.update_op = cpu;
    if (!c.L.s.training.offload.parameters_on_cpu())
      c.update_op = c.B.emit(pcie_copy_op(OpKind::pcie_h2d, -1, -1, 0,
                                          core::Bytes{c.update_params} * c.L.state_bytes.weights),
                             {}, {}, {c.B.ref(cpu)});
  }

  void finish(const LowerContext& L, Plan& plan) override {
    const NodeHostDemand host =
        host_per_node(plan.programs, rank_stride(L.s, scenario::ParallelDim::pipeline),
                      L.s.cluster.gpus_per_node, plan.devices_total);
    plan.host_per_node = host.fullest;
    plan.host_stage = host.stage;
  }

  static void apply_settings(Plan& plan, const scenario::Scenario& s) {
    plan.pcie = s.cluster.pcie;
    plan.host_bandwidth_per_gpu = host_bandwidth_per_gpu(s);
    plan.host_capacity = s.cluster.host_memory;
  }

 private:
  // Gradients copied per bucket_size by this pass: without data parallelism, whose reduced
  // buckets are copied otherwise (after_reduction).
  static bool alone(const StageContext& c, const UnitStep& u) {
    return !u.forward() && zero_offload(c) && c.L.data == 1;
  }
  // The optimizer on the host as ZeRO-Offload puts it there (FSDP's own offload moves its
  // shards itself: fsdp_offload.hpp).
  static bool zero_offload(const StageContext& c) {
    return c.optimizer_on_host && c.L.s.training.offload.optimizer_on_cpu();
  }

  void flush(StageContext& c, const UnitStep& u, std::int32_t after_op, std::int32_t layer) {
    if (!zero_offload(c) || pending_.value == 0) return;
    const core::Bytes wire = c.L.zero >= 1 ? core::ceil_div(pending_, c.L.data) : pending_;
    last_d2h_ = c.B.emit(pcie_copy_op(OpKind::pcie_d2h, layer, u.microbatch(), u.chunk(), wire),
                         std::span<const MemEffect>{}, tensors_, {c.B.ref(after_op)});
    pending_ = {};
    tensors_.clear();
  }

  core::Bytes fetched_{};           // the layer about to run: its shard copied from the host
  core::Bytes pending_{};           // gradient bytes produced and not yet copied
  std::vector<MemEffect> tensors_;  // their tensors, freed by the copy
  std::int32_t last_d2h_ = -1;
};

}  // namespace

PassEntry offload_pass() {
  return {"offload", kKeys, {}, make_pass<OffloadPass>, OffloadPass::apply_settings};
}

}  // namespace trainsim::parallel
