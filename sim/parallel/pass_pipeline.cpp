// Pipeline parallelism: the transfers between stages. A forward unit of a later chunk receives
// the previous chunk's last output, a backward unit of an earlier chunk the gradient of its own
// last output, each over a p2p op that waits for the sending unit on the other stage (resolved
// once every program is built). The receiving stage books the buffer when it posts the receive,
// just before the unit's first compute op (Megatron-LM's recv_forward / recv_backward).
// When the activation is replicated over the tensor ranks (no sequence parallelism), Megatron's
// scatter/gather optimisation sends 1/t from each rank and all-gathers it over the node's
// fabric (Narayanan et al. 2021, section 4.1). The schedules are data (schedule.cpp).
//
// parallel.pipeline_engine: deepspeed plays DeepSpeed's PipelineEngine instead
// (deepspeed/runtime/pipe/schedule.py TrainSchedule and engine.py): its four transfer
// instructions are blocking and paired with the neighbour's. A stage sends a unit's output in
// the step after the unit, before its next unit; a receive is posted only once the stage's
// previous work is done. So each transfer is two ops on the compute streams: the receive (on
// the receiver, waiting for the sending unit) and the send (on the sender, waiting for the
// receiver's op before the receive): both start when both stages are there and end together.
// Within a step the send of the previous unit's output comes first, except in a forward step
// after a backward (RecvActivation before SendGrad). Transfers stay expanded ops (no fast play).
//
// parallel.p2p: sync plays Megatron-LM's synchronous exchanges instead (pipeline_sync.hpp): the
// same transfers, each held by the calls of both stages that post it.
#include "sim/core/error.hpp"
#include "sim/parallel/pass.hpp"
#include "sim/parallel/pipeline_sync.hpp"

namespace trainsim::parallel {

namespace {

constexpr std::string_view kKeys[] = {"parallel.pipeline",       "parallel.schedule",
                                      "parallel.virtual_stages", "parallel.split_points",
                                      "training.global_batch",   "training.gradient_accumulation",
                                      "parallel.tensor",         "parallel.sequence_parallel",
                                      "cluster.placement",       "cluster.gpus_per_node",
                                      "parallel.pipeline_engine", "parallel.p2p"};

class PipelinePass final : public LoweringPass {
 public:
  void prepare(LowerContext& L) override {
    const auto ends = static_cast<std::size_t>(L.chunk_count()) * L.microbatches;
    forward_end_.assign(ends, OpRef{});
    backward_end_.assign(ends, OpRef{});
    open_.reserve(ends * 2);
    blocking_ = blocks(L);
    sync_ = syncs(L);
    if (sync_) exchanges_.prepare(L, &PipelinePass::transfer_op);
    if (blocking_) {
      recv_pred_[0].assign(ends, Pred{});
      recv_pred_[1].assign(ends, Pred{});
    }
  }

  // A blocking pair's send waits for an op of another stage inside the unit's run of ops, so
  // DeepSpeed's units stay expanded (no macro ops, no folded transfers).
  // So do the synchronous exchanges' calls.
  bool repeats(const StageContext&, const UnitStep&) const override {
    return !blocking_ && !sync_;
  }
  bool expands_units(const LowerContext& L) const override { return blocks(L) || syncs(L); }

  void begin_stage(StageContext& c) override {
    pending_ = {};
    if (sync_) exchanges_.begin_stage(c.stage());
  }

  void begin_unit(StageContext& c, UnitStep& u) override {
    if (sync_) {
      if (const std::int32_t op = exchanges_.before_unit(c, u); op >= 0) arrive(c, u, op);
      return;
    }
    if (!blocking_) return receive(c, u);
    // DeepSpeed's step order: a forward step after a backward receives, then sends the gradient.
    const bool receive_first = u.forward() && pending_.valid && !pending_.forward;
    if (receive_first) receive(c, u);
    send_pending(c);
    if (!receive_first) receive(c, u);
  }

  void unit_done(StageContext& c, const UnitStep& u, std::int32_t last) override {
    (u.forward() ? forward_end_ : backward_end_)[u.g * c.L.microbatches + u.microbatch()] =
        c.B.ref(last);
    if (blocking_ && (u.forward() ? !u.last_chunk : !u.first_chunk))
      pending_ = {true, u.forward(), u.g, u.microbatch()};
  }

  // The schedule's last sends, before anything the step does after it (end_backward runs
  // before every pass's end_step).
  void end_backward(StageContext& c) override {
    if (blocking_) send_pending(c);
    if (sync_) exchanges_.end_step(c);
  }

  void finish(const LowerContext& L, Plan& plan) override {
    plan.steady_state = L.s.parallel.schedule != scenario::Schedule::gpipe;
    // An interleaved schedule repeats a group of micro-batches later.
    plan.steady_lag =
        L.virtual_stages > 1 ? static_cast<std::uint32_t>(L.s.parallel.microbatch_group(L.microbatches))
                             : 1;
    for (const auto& o : open_) {
      const OpRef target =
          (o.forward ? forward_end_ : backward_end_)[o.g * L.microbatches + o.microbatch];
      TRAINSIM_CHECK(target.index >= 0, "pipeline dependency on an op that was never emitted");
      plan.programs[o.program].deps[o.slot] = target;
    }
    // A send waits for the op before the matching receive (else, when the receive is the
    // receiver's first op, for its own stage's op before it, which it follows anyway).
    for (const auto& s : sends_) {
      const Pred& r = recv_pred_[s.forward ? 1 : 0][s.g * L.microbatches + s.microbatch];
      TRAINSIM_CHECK(r.emitted, "a blocking send without its receive");
      plan.programs[s.program].deps[s.slot] = r.op.index >= 0 ? r.op : s.own_pred;
    }
    if (sync_) exchanges_.finish(plan);
  }

 private:
  static bool blocks(const LowerContext& L) {
    return L.s.parallel.pipeline_engine == scenario::PipelineEngine::deepspeed && L.stages > 1;
  }
  static bool syncs(const LowerContext& L) {
    return L.s.parallel.p2p == scenario::P2pMode::sync && !blocks(L) && L.stages > 1;
  }

  // The transfer feeding the unit of global chunk g for micro-batch j: a forward's input from
  // chunk g - 1, a backward's output gradient from chunk g + 1.
  static Op transfer_op(const LowerContext& L, bool forward, std::int32_t g, std::int32_t j) {
    const std::int32_t stage = g % L.stages;
    if (forward) {
      const LayerShard& producer = L.shards[L.chunks[g - 1].end - 1];
      return p2p_op(L, L.chunks[g].first, j, g / L.stages, producer.output * L.mb_samples,
                    inter_node_boundary(L.s, (g - 1) % L.stages, stage), producer);
    }
    const std::int32_t last = L.chunks[g].end - 1;
    return p2p_op(L, last, j, g / L.stages, L.shards[last].output * L.mb_samples,
                  inter_node_boundary(L.s, stage, (g + 1) % L.stages), L.shards[last]);
  }

  // Unit `u` receives its input by transfer `op`: its first compute op books the buffer.
  static void arrive(const StageContext& c, UnitStep& u, std::int32_t op) {
    const LowerContext& L = c.L;
    if (u.forward()) {
      const core::Bytes recv = L.shards[L.chunks[u.g - 1].end - 1].output * L.mb_samples;
      arrive(u, op, activation(recv, TensorKind::received, u.range.first));
      u.arrival_free = u.arrival_alloc;
    } else {
      const std::int32_t last = u.range.end - 1;
      arrive(u, op, activation(L.shards[last].output * L.mb_samples, TensorKind::grad, last));
    }
  }

  // The transfer feeding unit `u`, if any (Megatron: on the p2p stream; DeepSpeed: on the
  // compute stream, so it starts once the stage's previous op is done).
  void receive(StageContext& c, UnitStep& u) {
    const LowerContext& L = c.L;
    const std::int32_t g = u.g, j = u.microbatch();
    if (u.forward() ? u.first_chunk : u.last_chunk) return;
    // The receive buffer is booked by the unit's first op, not by the transfer.
    const OpRef pred = c.last_compute();
    const std::int32_t op = c.B.emit(transfer_op(L, u.forward(), g, j), {}, {}, {});
    const std::int32_t from = u.forward() ? g - 1 : g + 1;
    open_.push_back({c.stage(), c.B.add_open_dep(op), u.forward(), from, j});
    if (blocking_) posted(c, op, pred, u.forward(), from, j);
    arrive(c, u, op);
  }

  // A blocking receive: on the compute stream, and its sender will wait for `pred`.
  void posted(StageContext& c, std::int32_t op, OpRef pred, bool forward, std::int32_t g,
              std::int32_t j) {
    c.P.ops[op].stream = StreamKind::compute;
    recv_pred_[forward ? 1 : 0][g * c.L.microbatches + j] = {true, pred};
  }

  // The blocking send of the stage's last unit's output, if it has one not yet sent.
  void send_pending(StageContext& c) {
    if (!pending_.valid) return;
    const LowerContext& L = c.L;
    const Pending p = pending_;
    pending_ = {};
    const OpRef own = c.last_compute();
    // What crosses the boundary is the output of the lower chunk's last layer (or its
    // gradient); the op names the layer its receive names.
    const std::int32_t producer = L.chunks[p.forward ? p.g : p.g - 1].end - 1;
    const LayerShard& shard = L.shards[producer];
    const std::int32_t to = (p.forward ? p.g + 1 : p.g - 1) % L.stages;
    Op send = p2p_op(L, p.forward ? producer + 1 : producer, p.microbatch, p.g / L.stages,
                     shard.output * L.mb_samples, inter_node_boundary(L.s, c.stage(), to), shard);
    send.stream = StreamKind::compute;
    const std::int32_t op = c.B.emit(send, {}, {}, {});
    sends_.push_back({c.stage(), c.B.add_open_dep(op), own, p.forward, p.g, p.microbatch});
  }

  static void arrive(UnitStep& u, std::int32_t op, MemEffect buffer) {
    u.transfer = op;
    u.arrival_pending = true;
    u.arrival_alloc = buffer;
  }

  // A transfer of `bytes` held by each tensor rank.
  static Op p2p_op(const LowerContext& L, std::int32_t layer, std::int32_t j, std::int32_t chunk,
                   core::Bytes bytes, bool inter, const LayerShard& producer) {
    const bool sp = L.s.parallel.sequence_parallel && L.tensor > 1;
    const bool replicated = L.tensor > 1 && producer.output == producer.full_output && !sp;
    const std::int64_t ranks = replicated ? L.tensor : 1;
    Op op = comm_op(OpKind::p2p, StreamKind::p2p, CommPurpose::pipeline, layer, j, chunk,
                    core::ceil_div(bytes, ranks), 2, inter);
    op.comm.gather_ranks = static_cast<std::int32_t>(ranks);
    return op;
  }

  // A dependency of a program's op on the end of (global chunk g, micro-batch) in forward or
  // backward, on a stage that may not be built yet.
  struct Open {
    std::int32_t program;
    std::uint32_t slot;
    bool forward;
    std::int32_t g, microbatch;
  };
  std::vector<Open> open_;
  std::vector<OpRef> forward_end_, backward_end_;  // [g x microbatches + micro-batch]

  // DeepSpeed's blocking transfers (blocking_). A transfer is named by what is sent: the
  // output (forward) or input gradient (backward) of global chunk g for a micro-batch.
  struct Pending {
    bool valid = false, forward = false;
    std::int32_t g = 0, microbatch = 0;
  };
  struct Pred {
    bool emitted = false;
    OpRef op{};  // the receiver's op before the receive
  };
  struct Send {
    std::int32_t program;
    std::uint32_t slot;
    OpRef own_pred;
    bool forward;
    std::int32_t g, microbatch;
  };
  bool blocking_ = false;
  bool sync_ = false;  // parallel.p2p: sync (pipeline_sync.hpp)
  SyncExchanges exchanges_;
  Pending pending_;  // the current stage's unsent output
  std::vector<Pred> recv_pred_[2];  // [backward, forward][g x microbatches + micro-batch]
  std::vector<Send> sends_;
};

}  // namespace

PassEntry pipeline_pass() {
  return {"pipeline", kKeys, {}, make_pass<PipelinePass>};
}

}  // namespace trainsim::parallel
