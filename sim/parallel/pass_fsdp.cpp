// FSDP and HSDP as PyTorch's fully_shard (FSDP2) does them (Zhao et al. 2023, "PyTorch FSDP";
// the torch.distributed.fsdp.fully_shard docs; torch/distributed/fsdp/_fully_shard/
// _fsdp_collectives.py). Every data rank of a shard group of S ranks (parallel.fsdp.shard_size,
// default parallel.data) keeps 1/S of the fp32 parameters, of their fp32 gradients and of the
// optimizer states: 4/S + 4/S + 8/S = 16/S bytes per parameter under AdamW. The units are the
// transformer blocks (Layer::block) and the root (every layer outside a block: embeddings, final
// norm, head), as torchtitan wraps a model.
//
// On the timeline, per unit and micro-batch: before its first forward layer the unit's
// parameters are all-gathered in param_dtype (a new unsharded buffer of unit_params x
// param_bytes, category weights), waiting for the end of the unit two back (one unit of
// prefetch); its last forward layer frees them (reshard_after_forward), except the root's, which
// FSDP2 keeps for the backward. A resharded unit is gathered again before its backward. Each
// backward layer books its unsharded gradients in param_dtype; the unit's last backward op (its
// post-backward hook) also books the reduce-scatter input in reduce_dtype (the copy-in), frees
// the unsharded gradients and parameters; the reduce-scatter over the shard group ends the
// input. HSDP then all-reduces the reduced shard over the data/S replicas. Each layer's sharded
// fp32 gradients are held from its first backward to the optimizer step.
//
// With LoRA only the adapters are trained: fully_shard shards the frozen weights too, in the
// dtype (or quantized form) they are stored in, but autograd gives them no gradient and the
// optimizer, built over the trainable parameters, no state. So the frozen weights add their
// stored bytes / S and nothing else; gradients, reduce-scatters and optimizer states cover the
// adapters alone. A quantized frozen base (QLoRA) is gathered as stored.
//
// The sharded states are in the dtype the model is built in (fsdp_offload.hpp's
// fsdp_shard_bytes): fp32 under mixed precision, 16-bit under bf16-true / fp16-true.
// parallel.fsdp.offload: cpu keeps them in host memory (fsdp_offload.hpp).
#include <algorithm>
#include <vector>

#include "sim/parallel/fsdp_offload.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

using hw::MemCategory;

constexpr std::string_view kKeys[] = {"parallel.fsdp",      "parallel.data",
                                      "training.precision", "training.optimizer",
                                      "training.lora",      "cluster.placement",
                                      "cluster.gpus_per_node"};

std::int64_t dtype_bytes(scenario::Precision p) { return p == scenario::Precision::fp32 ? 4 : 2; }

// A group of n ranks `stride` apart on nodes of gpn GPUs (as topology.cpp's group_span).
GroupSpan span_of(std::int64_t stride, std::int64_t n, std::int64_t gpn) {
  GroupSpan g;
  g.per_node = stride >= gpn ? 1 : std::min(n, gpn / stride);
  g.inter_node = n > 1 && stride * n > gpn;
  return g;
}

class FsdpPass final : public LoweringPass {
 public:
  void prepare(LowerContext& L) override {
    const scenario::Scenario& s = L.s;
    const scenario::FsdpSpec& f = s.parallel.fsdp;
    shard_ = s.parallel.fsdp_shard();
    replicas_ = L.data / shard_;
    param_bytes_ = dtype_bytes(f.param_dtype.value_or(s.training.precision));
    reduce_bytes_ = dtype_bytes(f.reduce_dtype);
    shard_bytes_ = fsdp_shard_bytes(s);
    reshard_ = f.reshard_after_forward;
    offload_ = f.cpu_offload;
    quantized_base_ = s.training.lora && s.training.lora->quantized();
    // Shard groups: shard_ consecutive data ranks; replica groups: every shard_-th data rank
    // (PyTorch's 2-D device mesh (replicate, shard)).
    const std::int64_t stride = rank_stride(s, scenario::ParallelDim::data);
    shard_span_ = span_of(stride, shard_, s.cluster.gpus_per_node);
    replica_span_ = span_of(stride * shard_, replicas_, s.cluster.gpus_per_node);
    unit_of_.assign(L.m.order.size(), 0);
    std::int32_t units = 1;
    for (std::size_t i = 0; i < L.m.order.size(); ++i) {
      const int block = L.m.graph[L.m.order[i]].block;
      unit_of_[i] = block + 1;  // 0: the root
      units = std::max(units, block + 2);
    }
    // separate_outer_layers: each layer with parameters outside the blocks a unit of its own,
    // numbered after the blocks; the root keeps none.
    if (f.separate_outer_layers)
      for (std::size_t i = 0; i < L.m.order.size(); ++i)
        if (unit_of_[i] == 0 && L.m.graph[L.m.order[i]].params > 0) unit_of_[i] = units++;
    units_ = units;
  }

  void book_states(StageContext& c) override {
    const LowerContext& L = c.L;
    Program& P = c.P;
    // Trained parameters: shards of weights and gradients and the optimizer states; frozen ones
    // (LoRA): their stored bytes only.
    const core::Bytes trained{c.trainable};
    const core::Bytes frozen = c.trainable == c.params
                                   ? core::Bytes{}
                                   : c.weight_bytes - trained * L.state_bytes.weights;
    P.parameters = (c.params + shard_ - 1) / shard_;
    P.persistent[MemCategory::weights] =
        core::ceil_div(trained * shard_bytes_.weights + frozen, shard_);
    P.persistent[MemCategory::optimizer_states] =
        core::ceil_div(trained * shard_bytes_.optimizer_states, shard_);
    P.model_states[MemCategory::weights] = P.persistent[MemCategory::weights];
    P.model_states[MemCategory::optimizer_states] = P.persistent[MemCategory::optimizer_states];
    P.model_states[MemCategory::gradients] = core::ceil_div(trained * shard_bytes_.gradients, shard_);
    c.update_params = (c.trainable + shard_ - 1) / shard_;
  }

  void place_states(StageContext& c) override {
    if (offload_) place_fsdp_offload(c);
  }

  void begin_stage(StageContext& c) override {
    const LowerContext& L = c.L;
    units_state_.assign(units_, Unit{});
    for (std::int32_t g = c.stage(); g < L.chunk_count(); g += L.stages)
      for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) {
        Unit& u = units_state_[unit_of_[i]];
        u.params += L.shards[i].params;
        u.trainable += L.shards[i].trainable;
        const core::Bytes trained{L.shards[i].trainable};
        const core::Bytes frozen = L.shards[i].weight_bytes - trained * L.state_bytes.weights;
        u.stored += frozen + trained * shard_bytes_.weights;
        // A quantized frozen base is gathered as stored (torchao's NF4Tensor implements FSDP2's
        // all-gather extension: its packed data and scales are gathered, not a bf16 copy);
        // every other parameter in param_dtype.
        u.unsharded += quantized_base_
                          ? frozen + trained * param_bytes_
                          : core::Bytes{L.shards[i].params} * param_bytes_;
        if (u.first < 0) u.first = i;
        u.last = i;
      }
    grads_held_.assign(L.m.order.size(), 0);
    walk_unit_ = -1;
    walk_last_ = walk_prev_ = -1;
    pending_ = pending_op_ = -1;
    last_d2h_ = -1;
  }

  int ops_per_layer(const LowerContext&) const override { return 1; }
  bool expands_units(const LowerContext&) const override { return true; }
  // A unit's gathers gate its compute ops on the comm stream.
  bool repeats(const StageContext&, const UnitStep&) const override { return false; }

  void before_layer(StageContext& c, UnitStep& u, std::int32_t i) override {
    const std::int32_t k = unit_of_[i];
    // A new unit of the walk may start its gather once the unit before the previous one ended;
    // a unit gathered again as the walk stays in it (the root's next forward) once the op
    // before it ended.
    std::int32_t after = walk_last_;
    if (k != walk_unit_) {
      after = walk_prev_;
      walk_prev_ = walk_last_;
      walk_unit_ = k;
    }
    Unit& unit = units_state_[k];
    if (!unit.gathered && unit.params > 0) {
      unit.kind = u.forward() ? TensorKind::gathered : TensorKind::gathered_backward;
      unit.gathered = true;
      const core::Bytes full = unit.unsharded;
      // With CPU offload the rank's shard comes over PCIe first: the gather's input.
      MemEffect staged{};
      if (offload_)
        after = fetch_fsdp_shard(c, u, unit.first, core::ceil_div(unit.stored, shard_), after,
                                 staged);
      c.last_comm = c.B.emit(
          comm_op(OpKind::all_gather, StreamKind::comm, CommPurpose::fsdp_all_gather, i,
                  u.microbatch(), u.chunk(), full, shard_, shard_span_.inter_node,
                  shard_span_.per_node),
          {tensor(MemCategory::weights, full, unit.kind, unit.first)}, {staged},
          {c.ref_or_none(after)});
      c.param_ready = c.last_comm;
    }
    // The unit that just finished its backward reduces after this gather (the prefetch goes first
    // on the comm stream).
    if (pending_ >= 0 && pending_ != k) reduce(c, u);
  }

  void layer_op(StageContext& c, const UnitStep& u, LayerOp& lo) override {
    const LowerContext& L = c.L;
    const std::int32_t i = lo.layer;
    const std::int32_t k = unit_of_[i];
    Unit& unit = units_state_[k];
    if (u.forward()) {
      if (i == unit.last && reshard_ && k != 0) free_params(unit, lo);
      return;
    }
    const std::int64_t params = L.shards[i].trainable;  // frozen weights get no gradient
    if (params > 0) {
      const MemEffect grad = tensor(MemCategory::gradients, core::Bytes{params} * param_bytes_,
                                    TensorKind::unsharded_grad, i);
      lo.allocs.push_back(grad);
      unit.grads.push_back(grad);
      if (!grads_held_[i] && !offload_) {
        grads_held_[i] = 1;
        MemEffect held = tensor(MemCategory::gradients,
                                core::ceil_div(core::Bytes{params} * shard_bytes_.gradients, shard_),
                                TensorKind::param_grad, i);
        held.per_microbatch = false;
        lo.allocs.push_back(held);
        c.held_grads.push_back(held);
      }
    }
    if (i != unit.first) return;
    // The post-backward hook: copy-in to the reduce-scatter input, then free the unsharded
    // gradients and parameters.
    if (unit.trainable > 0) {
      lo.allocs.push_back(tensor(MemCategory::buffers, core::Bytes{unit.trainable} * reduce_bytes_,
                                 TensorKind::reduce_input, unit.first));
      for (const MemEffect& g : unit.grads) lo.frees.push_back(g);
      pending_ = k;
    }
    unit.grads.clear();
    free_params(unit, lo);
  }

  void after_layer(StageContext& c, UnitStep&, std::int32_t i, std::int32_t op) override {
    walk_last_ = op;
    if (pending_ == unit_of_[i] && pending_op_ < 0) pending_op_ = op;
  }

  void end_unit(StageContext& c, UnitStep& u, std::int32_t) override {
    if (pending_ >= 0) reduce(c, u);
  }

  // With CPU offload the optimizer steps on the host once every reduced shard is there.
  void end_step(StageContext& c) override {
    if (offload_) c.update_op = fsdp_cpu_step(c, c.update_params, last_d2h_);
  }

 private:
  struct Unit {
    std::int64_t params = 0;
    std::int64_t trainable = 0;  // of which trained: what it reduces
    core::Bytes stored{};        // its parameters' sharded bytes over all ranks (fetch size)
    core::Bytes unsharded{};     // its unsharded (gathered) parameters' bytes
    std::int32_t first = -1, last = -1;  // its first and last layer on the stage
    bool gathered = false;
    TensorKind kind = TensorKind::gathered;
    std::vector<MemEffect> grads;  // unsharded, booked by the backward so far
  };

  void free_params(Unit& unit, LayerOp& lo) {
    if (!unit.gathered) return;
    lo.frees.push_back(tensor(MemCategory::weights, unit.unsharded, unit.kind, unit.first));
    unit.gathered = false;
  }

  // The pending unit's reduce-scatter over its shard group (then HSDP's all-reduce of the shard
  // over the replicas), after the backward op that copied its gradients in.
  void reduce(StageContext& c, UnitStep& u) {
    const Unit& unit = units_state_[pending_];
    const core::Bytes full = core::Bytes{unit.trainable} * reduce_bytes_;
    const MemEffect input = tensor(MemCategory::buffers, full, TensorKind::reduce_input, unit.first);
    const std::span<const MemEffect> none;
    // With CPU offload the reduce-scatter's output (1/S of the input) waits on the GPU for its
    // copy to the host.
    const MemEffect reduced = tensor(MemCategory::gradients, core::ceil_div(full, shard_),
                                     TensorKind::offload_grad, unit.first);
    c.last_comm = c.B.emit(comm_op(OpKind::reduce_scatter, StreamKind::comm,
                                   CommPurpose::fsdp_reduce_scatter, unit.first, u.microbatch(),
                                   u.chunk(), full, shard_, shard_span_.inter_node,
                                   shard_span_.per_node),
                           offload_ ? std::span<const MemEffect>(&reduced, 1) : none,
                           std::span<const MemEffect>(&input, 1), {c.ref_or_none(pending_op_)});
    if (replicas_ > 1)
      c.last_comm = c.B.emit(
          comm_op(OpKind::all_reduce, StreamKind::comm, CommPurpose::hsdp_all_reduce, unit.first,
                  u.microbatch(), u.chunk(), core::ceil_div(full, shard_), replicas_,
                  replica_span_.inter_node, replica_span_.per_node),
          none, none, {});
    if (offload_)
      last_d2h_ = copy_fsdp_grad_out(
          c, u, unit.first, reduced,
          core::ceil_div(core::Bytes{unit.trainable} * shard_bytes_.gradients, shard_),
          c.last_comm);
    pending_ = -1;
    pending_op_ = -1;
  }

  // Per plan.
  std::int64_t shard_ = 1, replicas_ = 1;
  std::int64_t param_bytes_ = 2, reduce_bytes_ = 4;
  scenario::StateBytes shard_bytes_;  // per trained parameter: shard, gradient, states
  bool reshard_ = true;
  bool offload_ = false;  // parallel.fsdp.offload: cpu
  bool quantized_base_ = false;  // LoRA over an NF4 / int8 base
  GroupSpan shard_span_, replica_span_;
  std::vector<std::int32_t> unit_of_;  // per layer: 0 the root, b + 1 block b, then outer layers
  std::int32_t units_ = 1;
  // Per stage.
  std::vector<Unit> units_state_;
  std::vector<char> grads_held_;
  std::int32_t walk_unit_ = -1;               // the unit whose layers the walk is in
  std::int32_t walk_last_ = -1, walk_prev_ = -1;  // last compute op of that unit, of the one before
  std::int32_t pending_ = -1, pending_op_ = -1;   // unit to reduce-scatter, its copy-in op
  std::int32_t last_d2h_ = -1;                    // the last reduced shard's copy to the host
};

}  // namespace

PassEntry fsdp_pass() {
  return {"fsdp", kKeys, {}, make_pass<FsdpPass>, nullptr, StatesOwner::fsdp};
}

}  // namespace trainsim::parallel
