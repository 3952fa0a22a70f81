// Pipeline parallelism: the transfers between stages. A forward unit of a later chunk receives
// the previous chunk's last output, a backward unit of an earlier chunk the gradient of its own
// last output, each over a p2p op that waits for the sending unit on the other stage (resolved
// once every program is built). The receiving stage books the buffer when it posts the receive,
// just before the unit's first compute op (Megatron-LM's recv_forward / recv_backward).
// When the activation is replicated over the tensor ranks (no sequence parallelism), Megatron's
// scatter/gather optimisation sends 1/t from each rank and all-gathers it over the node's
// fabric (Narayanan et al. 2021, section 4.1). The schedules are data (schedule.cpp).
#include "sim/core/error.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

constexpr std::string_view kKeys[] = {"parallel.pipeline",       "parallel.schedule",
                                      "parallel.virtual_stages", "parallel.split_points",
                                      "training.global_batch",   "training.gradient_accumulation",
                                      "parallel.tensor",         "parallel.sequence_parallel",
                                      "cluster.placement",       "cluster.gpus_per_node"};

class PipelinePass final : public LoweringPass {
 public:
  void prepare(LowerContext& L) override {
    const auto ends = static_cast<std::size_t>(L.chunk_count()) * L.microbatches;
    forward_end_.assign(ends, OpRef{});
    backward_end_.assign(ends, OpRef{});
    open_.reserve(ends * 2);
  }

  void begin_unit(StageContext& c, UnitStep& u) override {
    const LowerContext& L = c.L;
    const std::int32_t g = u.g, j = u.microbatch(), stage = c.stage();
    if (u.forward() && !u.first_chunk) {
      const LayerShard& producer = L.shards[L.chunks[g - 1].end - 1];
      const core::Bytes recv = producer.output * L.mb_samples;
      const std::int32_t from = (g - 1) % L.stages;
      // The receive buffer is booked by the first layer's forward, not by the transfer.
      const std::int32_t op = c.B.emit(p2p_op(L, u.range.first, j, u.chunk(), recv,
                                              inter_node_boundary(L.s, from, stage), producer),
                                       {}, {}, {});
      open_.push_back({c.stage(), c.B.add_open_dep(op), true, g - 1, j});
      arrive(u, op, activation(recv, TensorKind::received, u.range.first));
      u.arrival_free = u.arrival_alloc;
    } else if (!u.forward() && !u.last_chunk) {
      const std::int32_t last = u.range.end - 1;
      const core::Bytes grad_in = L.shards[last].output * L.mb_samples;
      const std::int32_t to = (g + 1) % L.stages;
      const std::int32_t op = c.B.emit(p2p_op(L, last, j, u.chunk(), grad_in,
                                              inter_node_boundary(L.s, stage, to), L.shards[last]),
                                       {}, {}, {});
      open_.push_back({c.stage(), c.B.add_open_dep(op), false, g + 1, j});
      arrive(u, op, activation(grad_in, TensorKind::grad, last));
    }
  }

  void unit_done(StageContext& c, const UnitStep& u, std::int32_t last) override {
    (u.forward() ? forward_end_ : backward_end_)[u.g * c.L.microbatches + u.microbatch()] =
        c.B.ref(last);
  }

  void finish(const LowerContext& L, Plan& plan) override {
    plan.steady_state = L.s.parallel.schedule != scenario::Schedule::gpipe;
    plan.steady_lag = L.virtual_stages > 1 ? static_cast<std::uint32_t>(L.stages) : 1;
    for (const auto& o : open_) {
      const OpRef target =
          (o.forward ? forward_end_ : backward_end_)[o.g * L.microbatches + o.microbatch];
      TRAINSIM_CHECK(target.index >= 0, "pipeline dependency on an op that was never emitted");
      plan.programs[o.program].deps[o.slot] = target;
    }
  }

 private:
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
};

}  // namespace

PassEntry pipeline_pass() {
  return {"pipeline", kKeys, {}, make_pass<PipelinePass>};
}

}  // namespace trainsim::parallel
