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
// Under pipeline parallelism (PyTorch's torch.distributed.pipelining stage, which torchtitan
// drives) every pipeline stage's chunk is fully_shard'ed over the data ranks of that stage. The
// stage runs every backward with gradient sync and resharding after backward off
// (set_requires_gradient_sync(False), set_reshard_after_backward(False)): a unit's post-backward
// hook adds its unsharded gradients into the accumulated gradient, upcast to reduce_dtype when it
// differs from param_dtype (FSDPParam.to_accumulated_grad_if_needed), and its parameters stay
// gathered. After the chunk's last micro-batch's backward the stage calls every unit's
// post-backward with sync on: each accumulated gradient is copied into its reduce-scatter input,
// the parameters are resharded, and the reduce-scatters run one after another. (torchtitan's
// default reshard_after_forward_policy sets reshard_after_forward: false under pipelining; the
// key says which is played.)
//
// With context parallelism (parallel.context = C) the shard group is S x C ranks: context ranks
// hold the same weights, so torchtitan shards over its flattened dp_shard x cp mesh.
//
// With expert parallelism (parallel.expert = E) a block's routed experts are a unit of their own
// over the expert-data-parallel group, as torchtitan's apply_fsdp shards transformer_block.moe
// .experts over its dp_shard_mod_ep mesh: the shard group's S x C ranks hold E expert groups, so
// each expert shard lives on S x C / E ranks (every E-th rank) and the rest of the model on all
// S x C. Per device that is 16 B x (dense / (S C) + experts_on_device / (S C / E)) under AdamW,
// with experts_on_device = routed experts / E: the same 16 B / (S C) of every parameter of the
// model. The experts' all-gather and reduce-scatter follow their block's, over S C / E ranks.
//
// With LoRA only the adapters are trained: fully_shard shards the frozen weights too, in the
// dtype (or quantized form) they are stored in, but autograd gives them no gradient and the
// optimizer, built over the trainable parameters, no state. So the frozen weights add their
// stored bytes / S and nothing else; gradients, reduce-scatters and optimizer states cover the
// adapters alone. A quantized frozen base (QLoRA) is gathered as stored.
//
// The sharded states are in the dtype the model is built in (fsdp_offload.hpp's
// scenario::fsdp_state_bytes): fp32 under mixed precision, 16-bit under bf16-true / fp16-true.
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
                                      "cluster.gpus_per_node", "cluster.pod_nodes"};

std::int64_t dtype_bytes(scenario::Precision p) { return p == scenario::Precision::fp32 ? 4 : 2; }

class FsdpPass final : public LoweringPass {
 public:
  void prepare(LowerContext& L) override {
    const scenario::Scenario& s = L.s;
    const scenario::FsdpSpec& f = s.parallel.fsdp;
    shard_ = s.parallel.fsdp_shard() * s.parallel.context;  // dp_shard x cp
    replicas_ = L.data / shard_;
    const scenario::Precision param_dtype = f.param_dtype.value_or(s.training.precision);
    param_bytes_ = dtype_bytes(param_dtype);
    reduce_bytes_ = dtype_bytes(f.reduce_dtype);
    accumulate_ = L.stages > 1;  // PyTorch pipelining's schedules
    no_sync_ = f.sync_last_microbatch && !accumulate_;
    flat_ = f.flat_parameter;
    copy_out_ = f.unshard_copy;
    accumulated_bytes_ = f.reduce_dtype == param_dtype ? param_bytes_ : reduce_bytes_;
    shard_bytes_ = scenario::fsdp_state_bytes(s.training.precision, s.training.optimizer);
    reshard_ = f.reshard_after_forward;
    offload_ = f.cpu_offload;
    quantized_base_ = s.training.lora && s.training.lora->quantized();
    // Shard groups: shard_ consecutive data ranks; replica groups: every shard_-th data rank
    // (PyTorch's 2-D device mesh (replicate, shard)).
    const std::int64_t stride = rank_stride(s, scenario::ParallelDim::data);
    shard_span_ = strided_span(s, stride, shard_);
    replica_span_ = strided_span(s, stride * shard_, replicas_);
    experts_ = s.parallel.expert;
    expert_shard_ = shard_ / experts_;
    expert_span_ = strided_span(s, stride * experts_, expert_shard_);
    expert_of_.assign(L.m.order.size(), 0);
    if (experts_ > 1)  // LoRA with experts is refused: a layer's experts are trained
      for (std::size_t i = 0; i < L.m.order.size(); ++i) expert_of_[i] = L.shards[i].expert_params;
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
    count_units(c);
    // Trained parameters: shards of weights and gradients and the optimizer states; frozen ones
    // (LoRA): their stored bytes only.
    const core::Bytes trained{c.trainable};
    const core::Bytes frozen = c.trainable == c.params
                                   ? core::Bytes{}
                                   : c.weight_bytes - trained * L.state_bytes.weights;
    std::int64_t e = 0;  // routed experts on this device (expert parallelism)
    for (std::int32_t g = c.stage(); g < L.chunk_count(); g += L.stages)
      for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) e += expert_of_[i];
    const core::Bytes experts{e}, dense = trained - experts;
    const scenario::StateBytes& sb = shard_bytes_;
    P.parameters = per_rank(c.params, e);
    P.persistent[MemCategory::weights] = core::ceil_div(dense * sb.weights + frozen, shard_) +
                                         core::ceil_div(experts * sb.weights, expert_shard_);
    P.persistent[MemCategory::optimizer_states] =
        sharded(dense * sb.optimizer_states, experts * sb.optimizer_states);
    P.model_states[MemCategory::weights] = P.persistent[MemCategory::weights];
    P.model_states[MemCategory::optimizer_states] = P.persistent[MemCategory::optimizer_states];
    // flat_parameter: every parameter of a unit holding a trained one has a gradient.
    const core::Bytes graded = flat_ ? core::Bytes{flat_graded()} : dense;
    P.model_states[MemCategory::gradients] = sharded(graded * sb.gradients, experts * sb.gradients);
    c.update_params = per_rank(c.trainable, e);
  }

  void place_states(StageContext& c) override {
    if (offload_) place_fsdp_offload(c);
  }

  void begin_stage(StageContext& c) override {
    const LowerContext& L = c.L;
    grads_held_.assign(L.m.order.size(), 0);
    walk_unit_ = -1;
    walk_last_ = walk_prev_ = -1;
    pending_ = pending_op_ = -1;
    final_.clear();
    final_op_ = -1;
    last_d2h_ = -1;
  }

  int ops_per_layer(const LowerContext&) const override { return 1; }
  bool expands_units(const LowerContext&) const override { return true; }
  // A unit's gathers gate its compute ops on the comm stream.
  bool repeats(const StageContext&, const UnitStep&) const override { return false; }
  // Its units' walk state (walk_unit_, pending reduce-scatters) runs on across work units.
  bool copies_units(const LowerContext&) const override { return false; }

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
      // One buffer for the unit (and its experts, gathered next over their own group).
      const core::Bytes expert_bytes = core::Bytes{unit.experts} * param_bytes_;
      const core::Bytes dense = unit.unsharded - expert_bytes;
      // With CPU offload the rank's shard comes over PCIe first: the gather's input.
      MemEffect staged{};
      if (offload_)
        after = fetch_fsdp_shard(c, u, unit.first, core::ceil_div(unit.stored, shard_), after,
                                 staged);
      c.last_comm = c.B.emit(
          comm_op(OpKind::all_gather, StreamKind::comm, CommPurpose::fsdp_all_gather, i,
                  u.microbatch(), u.chunk(), dense, shard_, shard_span_.inter_node,
                  shard_span_.per_node, shard_span_.pod_members),
          {gathered(unit)}, {staged}, {c.ref_or_none(after)});
      if (unit.experts > 0)
        c.last_comm = c.B.emit(
            comm_op(OpKind::all_gather, StreamKind::comm, CommPurpose::fsdp_all_gather,
                    unit.expert_layer, u.microbatch(), u.chunk(), expert_bytes, expert_shard_,
                    expert_span_.inter_node, expert_span_.per_node,
                    expert_span_.pod_members),
            {}, {}, {c.ref_or_none(after)});
      c.param_ready = copy_out_ ? copy_out(c, u, i, unit.unsharded) : c.last_comm;
    }
    // The unit that just finished its backward reduces after this gather (the prefetch goes first
    // on the comm stream).
    if (pending_ >= 0 && pending_ != k) {
      reduce(c, u, pending_, pending_op_, pending_accumulated_);
      pending_ = pending_op_ = -1;
    }
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
    // Frozen weights get no gradient, unless they share a FlatParameter with a trained one.
    const std::int64_t params = flat_ && unit.trainable > 0 ? L.shards[i].params
                                                            : L.shards[i].trainable;
    if (params > 0) {
      const MemEffect grad = tensor(MemCategory::gradients, core::Bytes{params} * param_bytes_,
                                    TensorKind::unsharded_grad, i);
      lo.allocs.push_back(grad);
      unit.grads.push_back(grad);
      // Under no_sync the sharded gradients come with the last micro-batch's reduce-scatters.
      if (!grads_held_[i] && !offload_ && (!no_sync_ || u.last_microbatch)) {
        grads_held_[i] = 1;
        const core::Bytes experts{expert_of_[i]};
        MemEffect held = tensor(MemCategory::gradients,
                                sharded((core::Bytes{params} - experts) * shard_bytes_.gradients,
                                        experts * shard_bytes_.gradients),
                                TensorKind::param_grad, i);
        held.per_microbatch = false;
        lo.allocs.push_back(held);
        c.held_grads.push_back(held);
      }
    }
    if (i == unit.first) post_backward(unit, k, lo, no_sync_ && !u.last_microbatch);
    // Pipelining: after the chunk's last backward, every unit's post-backward with gradient sync.
    if (accumulate_ && u.last_microbatch && i == u.range.first) final_post_backward(u, lo);
  }

  void after_layer(StageContext&, UnitStep&, std::int32_t i, std::int32_t op) override {
    walk_last_ = op;
    if (pending_ == unit_of_[i] && pending_op_ < 0) pending_op_ = op;
    if (!final_.empty() && final_op_ < 0) final_op_ = op;
  }

  void end_unit(StageContext& c, UnitStep& u, std::int32_t) override {
    if (pending_ >= 0) reduce(c, u, pending_, pending_op_, pending_accumulated_);
    for (const std::int32_t k : final_) reduce(c, u, k, final_op_, true);
    final_.clear();
    final_op_ = -1;
    pending_ = pending_op_ = -1;
  }

  // With CPU offload the optimizer steps on the host once every reduced shard is there.
  void end_step(StageContext& c) override {
    if (offload_) c.update_op = fsdp_cpu_step(c, c.update_params, last_d2h_);
  }

 private:
  struct Unit {
    std::int64_t params = 0;
    std::int64_t trainable = 0;  // of which trained: what it reduces
    std::int64_t experts = 0;    // of which routed experts, sharded over the expert group
    std::int32_t expert_layer = -1;  // its first layer with experts
    core::Bytes stored{};        // its parameters' sharded bytes over all ranks (fetch size)
    core::Bytes unsharded{};     // its unsharded (gathered) parameters' bytes
    std::int32_t first = -1, last = -1;  // its first and last layer on the stage
    bool gathered = false;
    bool accumulated = false;  // holds an accumulated gradient (no gradient sync)
    TensorKind kind = TensorKind::gathered;
    std::vector<MemEffect> grads;  // unsharded, booked by the backward so far
  };

  // FSDP2's wait_for_unshard copies the all-gather output into each parameter's unsharded
  // tensor on the compute stream once the gather ended (foreach_all_gather_copy_out:
  // split_with_sizes_copy, one kernel), reading and writing the unit's gathered bytes; the
  // unit's compute waits for it (parallel.fsdp.unshard: copy). FSDP1's FlatParameter and
  // Megatron-FSDP's buckets are views of their gather's output: no copy (unshard: view).
  // Emitted as the gathered forward's or backward's op with no layer range, so the passes that
  // act on a layer's compute leave it alone.
  static std::int32_t copy_out(StageContext& c, UnitStep& u, std::int32_t i, core::Bytes gathered) {
    Op op = compute_op(u.forward() ? OpKind::forward : OpKind::backward, i, u.microbatch(),
                       u.chunk(), 0, gathered * 2, false);
    op.model_flops = false;
    op.kernels = 1;
    op.work.launches = 1;
    return c.B.emit(op, {}, {}, {c.ref_or_none(c.last_comm)});
  }

  // The unit's unsharded parameters: one copy at a time, whichever micro-batch gathered it (under
  // pipelining a forward may find them gathered by another micro-batch's unit).
  MemEffect gathered(const Unit& unit) const {
    MemEffect e = tensor(MemCategory::weights, unit.unsharded, unit.kind, unit.first);
    e.per_microbatch = false;
    return e;
  }

  // The parameters a unit's gradients cover: its trained ones, or with flat_parameter all of a
  // unit that holds a trained one (one FlatParameter, its gradient as large as itself).
  std::int64_t grad_params(const Unit& unit) const {
    return flat_ && unit.trainable > 0 ? unit.params : unit.trainable;
  }

  // The unit's accumulated unsharded gradients, across micro-batches.
  MemEffect accumulated_grad(const Unit& unit) const {
    MemEffect e = tensor(MemCategory::gradients, core::Bytes{grad_params(unit)} * accumulated_bytes_,
                         TensorKind::unsharded_grad, unit.first);
    e.per_microbatch = false;
    return e;
  }

  // The unit's post-backward hook. With gradient sync: copy-in to the reduce-scatter input, free
  // the unsharded gradients and parameters. Without (pipelining): add the unsharded gradients
  // into the accumulated gradient and keep the parameters (reshard_after_backward: false).
  // Under no_sync (`held`, gradient_sync: last-micro-batch) the gradients are accumulated the
  // same way but the parameters freed (FSDP1's FULL_SHARD reshards after backward under no_sync
  // too); the last micro-batch's post-backward then reduce-scatters the accumulated gradient,
  // which its reduce-scatter copies in and frees (`pending_accumulated_`).
  void post_backward(Unit& unit, std::int32_t k, LayerOp& lo, bool held) {
    if (grad_params(unit) > 0) {
      if (accumulate_ || held) {
        if (!unit.accumulated) lo.allocs.push_back(accumulated_grad(unit));
        unit.accumulated = true;
      } else {
        if (!unit.accumulated) lo.allocs.push_back(reduce_input(unit));
        pending_ = k;
        pending_accumulated_ = unit.accumulated;
        unit.accumulated = false;
      }
      for (const MemEffect& g : unit.grads) lo.frees.push_back(g);
    }
    unit.grads.clear();
    if (!accumulate_) free_params(unit, lo);
  }

  // PyTorch pipelining's post-backward of the chunk's every unit once its last micro-batch's
  // backward ran, in module order (root first): the parameters resharded, then each unit's
  // reduce-scatter (end_unit), which copies the accumulated gradients into its input on the
  // reduce-scatter stream.
  void final_post_backward(const UnitStep& u, LayerOp& lo) {
    std::vector<char> in_chunk(units_state_.size(), 0);
    for (std::int32_t j = u.range.first; j < u.range.end; ++j) in_chunk[unit_of_[j]] = 1;
    for (std::size_t k = 0; k < units_state_.size(); ++k) {
      if (!in_chunk[k]) continue;
      Unit& unit = units_state_[k];
      if (unit.accumulated) final_.push_back(static_cast<std::int32_t>(k));
      unit.accumulated = false;
      free_params(unit, lo);
    }
  }

  MemEffect reduce_input(const Unit& unit) const {
    return tensor(MemCategory::buffers, core::Bytes{grad_params(unit)} * reduce_bytes_,
                  TensorKind::reduce_input, unit.first);
  }

  void free_params(Unit& unit, LayerOp& lo) {
    if (!unit.gathered) return;
    lo.frees.push_back(gathered(unit));
    unit.gathered = false;
  }

  // Unit k's reduce-scatter over its shard group (then HSDP's all-reduce of the shard over the
  // replicas), after the backward op `after`, which copied its gradients in; or, `copy_in`, the
  // reduce-scatter books its input and copies the accumulated gradients in itself, whose memory
  // returns when it ends (the caching allocator's record_stream on the reduce-scatter stream).
  void reduce(StageContext& c, UnitStep& u, std::int32_t k, std::int32_t after, bool copy_in) {
    const Unit& unit = units_state_[k];
    // FSDP1's FlatParameter (flat_parameter) reduce-scatters its accumulated gradient itself when
    // it is already in reduce_dtype (torch/distributed/fsdp/_runtime_utils.py, _reduce_grad and
    // _get_reduce_scatter_tensors: a copy only to pad or to cast); FSDP2 copies it into a new
    // reduce-scatter input (foreach_reduce).
    const bool in_place = copy_in && flat_ && param_bytes_ == reduce_bytes_;
    const MemEffect input = reduce_input(unit);
    const MemEffect both[] = {input, accumulated_grad(unit)};
    const std::span<const MemEffect> freed =
        in_place ? std::span<const MemEffect>(both + 1, 1)
                 : std::span<const MemEffect>(both, !copy_in ? 1 : 2);
    const std::span<const MemEffect> none;
    // The dense part over the shard group, then the experts over theirs; the last frees. With CPU
    // offload the dense reduce-scatter's output (1/S of the input) waits on the GPU for its copy
    // to the host.
    const bool experts = unit.experts > 0;
    const MemEffect reduced =
        tensor(MemCategory::gradients,
               core::ceil_div(core::Bytes{grad_params(unit) - unit.experts} * reduce_bytes_, shard_),
               TensorKind::offload_grad, unit.first);
    const auto scatter = [&](std::int32_t layer, std::int64_t params, std::int64_t ranks,
                             const GroupSpan& span, bool first, bool last) {
      const core::Bytes full = core::Bytes{params} * reduce_bytes_;
      MemEffect allocs[2];
      std::size_t n = 0;
      if (first && copy_in && !in_place) allocs[n++] = input;
      if (first && offload_) allocs[n++] = reduced;
      c.last_comm = c.B.emit(
          comm_op(OpKind::reduce_scatter, StreamKind::comm, CommPurpose::fsdp_reduce_scatter,
                  layer, u.microbatch(), u.chunk(), full, ranks, span.inter_node, span.per_node,
                  span.pod_members),
          std::span<const MemEffect>(allocs, n),
          last ? freed : none,
          {c.ref_or_none(after)});
      if (replicas_ > 1)
        c.last_comm = c.B.emit(
            comm_op(OpKind::all_reduce, StreamKind::comm, CommPurpose::hsdp_all_reduce, layer,
                    u.microbatch(), u.chunk(), core::ceil_div(full, ranks), replicas_,
                    replica_span_.inter_node, replica_span_.per_node,
                    replica_span_.pod_members),
            none, none, {});
    };
    scatter(unit.first, grad_params(unit) - unit.experts, shard_, shard_span_, true, !experts);
    if (experts)
      scatter(unit.expert_layer, unit.experts, expert_shard_, expert_span_, false, true);
    if (offload_)
      last_d2h_ = copy_fsdp_grad_out(
          c, u, unit.first, reduced,
          core::ceil_div(core::Bytes{grad_params(unit)} * shard_bytes_.gradients, shard_),
          c.last_comm);
  }

  // The stage's units: what each holds of the stage's layers (before the step's state).
  void count_units(const StageContext& c) {
    const LowerContext& L = c.L;
    units_state_.assign(units_, Unit{});
    for (std::int32_t g = c.stage(); g < L.chunk_count(); g += L.stages)
      for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) {
        Unit& u = units_state_[unit_of_[i]];
        u.params += L.shards[i].params;
        u.trainable += L.shards[i].trainable;
        u.experts += expert_of_[i];
        if (expert_of_[i] > 0 && u.expert_layer < 0) u.expert_layer = i;
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
  }

  // The stage's parameters that have gradients: the trained ones, or with flat_parameter all of
  // each unit holding a trained one.
  std::int64_t flat_graded() const {
    std::int64_t n = 0;
    for (const Unit& unit : units_state_) n += grad_params(unit);
    return n;
  }

  // Parameters per device of `n`, `experts` of them routed experts, each part over its group.
  std::int64_t per_rank(std::int64_t n, std::int64_t experts) const {
    return (n - experts + shard_ - 1) / shard_ + (experts + expert_shard_ - 1) / expert_shard_;
  }

  // Bytes per device of dense and expert tensors sharded over their groups.
  core::Bytes sharded(core::Bytes dense, core::Bytes experts) const {
    return core::ceil_div(dense, shard_) +
           (experts.value > 0 ? core::ceil_div(experts, expert_shard_) : core::Bytes{});
  }

  // Per plan.
  std::int64_t shard_ = 1, replicas_ = 1;
  std::int64_t experts_ = 1, expert_shard_ = 1;  // expert degree; ranks sharing an expert shard
  std::vector<std::int64_t> expert_of_;  // per layer: its routed experts' params (E > 1)
  std::int64_t param_bytes_ = 2, reduce_bytes_ = 4;
  scenario::StateBytes shard_bytes_;  // per trained parameter: shard, gradient, states
  bool reshard_ = true;
  bool accumulate_ = false;  // pipelining: no gradient sync until the chunk's last backward
  bool no_sync_ = false;     // gradient_sync: last-micro-batch (without pipelining)
  bool flat_ = false;        // flat_parameter: a unit's frozen parameters share its gradient
  bool copy_out_ = true;     // unshard: copy (FSDP2's copy-out on the compute stream)
  std::int64_t accumulated_bytes_ = 4;
  bool offload_ = false;  // parallel.fsdp.offload: cpu
  bool quantized_base_ = false;  // LoRA over an NF4 / int8 base
  GroupSpan shard_span_, replica_span_, expert_span_;
  std::vector<std::int32_t> unit_of_;  // per layer: 0 the root, b + 1 block b, then outer layers
  std::int32_t units_ = 1;
  // Per stage.
  std::vector<Unit> units_state_;
  std::vector<char> grads_held_;
  std::int32_t walk_unit_ = -1;               // the unit whose layers the walk is in
  std::int32_t walk_last_ = -1, walk_prev_ = -1;  // last compute op of that unit, of the one before
  std::int32_t pending_ = -1, pending_op_ = -1;   // unit to reduce-scatter, its copy-in op
  bool pending_accumulated_ = false;  // its reduce-scatter copies an accumulated gradient in
  std::vector<std::int32_t> final_;  // pipelining: the chunk's units to reduce-scatter at its end
  std::int32_t final_op_ = -1;       // the chunk's last backward op, which they wait for
  std::int32_t last_d2h_ = -1;                    // the last reduced shard's copy to the host
};

}  // namespace

PassEntry fsdp_pass() {
  return {"fsdp", kKeys, {}, make_pass<FsdpPass>, nullptr, StatesOwner::fsdp};
}

}  // namespace trainsim::parallel
