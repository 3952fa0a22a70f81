// Tensor parallelism (Megatron-LM, Shoeybi et al. 2019) and sequence parallelism (Korthikanti et
// al. 2022): each layer is sharded over the tensor ranks (shard_layers), and the collectives
// that follow a layer's compute op on the compute stream — an all-reduce, or with sequence
// parallelism a reduce-scatter + all-gather pair, over the layer's full output — are folded into
// that op (Op::tp_collectives), so a step has a third fewer ops to play. Under
// parallel.tp_comm_overlap the pair of a dense attention or MLP layer's forward or backward is
// marked for Transformer Engine's userbuffers overlap (Op::tp_overlap, exec/tp_overlap.cpp):
// TE's attention (qkv / proj) and MLP (fc1 / fc2) modules run it; the embedding, the output
// layer and the MoE layers (Megatron-Core's own linears and token dispatchers) do not, nor a
// group spanning nodes, nor a recomputation replaying several layers (one op, several pairs).
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

constexpr std::string_view kKeys[] = {"parallel.tensor", "parallel.sequence_parallel",
                                      "parallel.tp_comm_overlap"};

class TensorPass final : public LoweringPass {
 public:
  void on_compute(StageContext& c, const ComputeOp& op) override {
    const LowerContext& L = c.L;
    int count = 0;
    core::Bytes full{};
    if (op.kind == OpKind::backward) {
      count = L.shards[op.last].allreduce_backward;
      full = L.shards[op.last].full_output;
    } else {
      // A forward, or a recomputation replaying the forwards of its layers.
      for (std::int32_t k = op.first; k <= op.last; ++k) {
        count += L.shards[k].allreduce_forward;
        if (L.shards[k].allreduce_forward > 0) full = L.shards[k].full_output;
      }
    }
    if (count == 0) return;
    Op& o = c.P.ops[op.index];
    o.tp_collectives = static_cast<std::uint8_t>(count);
    o.tp_sequence_parallel = L.s.parallel.sequence_parallel && L.tensor > 1;
    o.comm = CommWork{full * L.mb_samples, static_cast<std::int32_t>(L.tensor),
                      L.tensor_span.inter_node, static_cast<std::int32_t>(L.tensor_span.per_node),
                      1, static_cast<std::int32_t>(L.tensor_span.pod_members)};
    if (L.s.parallel.tp_comm_overlap && o.tp_sequence_parallel && count == 1 &&
        op.first == op.last && !o.comm.inter_node) {
      const models::Layer& l = L.m.graph[L.m.order[op.first]];
      if (l.experts == 0 && l.kind == models::LayerKind::attention) o.tp_overlap = TpOverlap::attention;
      if (l.experts == 0 && l.kind == models::LayerKind::mlp) o.tp_overlap = TpOverlap::mlp;
    }
  }
};

}  // namespace

PassEntry tensor_pass() {
  return {"tensor", kKeys, {}, make_pass<TensorPass>};
}

}  // namespace trainsim::parallel
