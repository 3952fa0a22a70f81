// Expert parallelism for mixture-of-experts layers (GShard, Lepikhin et al. 2020; Switch
// Transformer, Fedus et al. 2021; DeepSpeed-MoE, Rajbhandari et al. 2022; Megatron-LM's
// expert_model_parallel_size). `parallel.expert` = E data-parallel ranks share one copy of each
// MoE layer's experts, 1/E of them each, so a device holds expert_params / (tensor x E) of a
// layer's routed experts (shard_layers splits them, before apply_training counts them). Each token's top-k routing becomes an all-to-all dispatch of the routed
// tokens to their experts' ranks before the experts and an all-to-all combine after, on the comm
// stream, gating the compute: forward dispatch, experts, combine; backward the same with the
// gradients. Each all-to-all moves tokens x k x hidden x activation bytes per rank, (E-1)/E of
// them leaving it. `training.expert_imbalance` (>= 1) scales the busiest rank's routed tokens:
// its expert FLOPs, their saved activations and its all-to-all bytes. A layer with a capacity
// factor (Layer::capacity_factor; Switch Transformer, Fedus et al. 2021, section 2.2) gives each
// expert a buffer of capacity = ceil(factor x T x k / experts) tokens for the T tokens of a
// micro-batch on this rank, padded to it (Megatron-LM's --moe-pad-expert-input-to-capacity) and
// dropping what exceeds it: every rank then routes experts x capacity tokens whatever the
// imbalance, so the routed work, saved activations and all-to-all bytes scale by
// experts x capacity / (T x k) in its place. Routed experts' gradients
// reduce over the E-strided expert-data-parallel group (data / E ranks), after the last
// micro-batch's backward of their layer (reduce-scattered under ZeRO-1, whose states the
// model_states pass shards over that group); everything else over all data ranks (the data pass).
// Every MoE layer's forward and backward (with or without expert parallelism) also run the
// router's and the token permutation's memory-bound kernels (moe_dispatch.hpp): their bytes and
// launches join the layer's compute op.
#include "sim/parallel/pass.hpp"

#include <algorithm>
#include <cmath>

#include "sim/parallel/moe_dispatch.hpp"
#include "sim/parallel/topology.hpp"

namespace trainsim::parallel {

namespace {

using hw::MemCategory;

constexpr std::string_view kKeys[] = {"parallel.expert", "training.expert_imbalance", "model",
                                      "training.micro_batch", "training.seq_len"};

// The busiest rank's routed tokens over the balanced share T x k / experts per expert:
// experts x capacity / (T x k) under a capacity factor (padded buffers), else the imbalance.
double routed_factor(const LowerContext& L, const models::Layer& l) {
  if (l.capacity_factor <= 0) return L.s.training.expert_imbalance;
  const std::int64_t per_sample =
      L.m.sequence_model ? L.s.parallel.tokens_per_rank(L.s.training.seq_len) : 1;
  const double routed = static_cast<double>(per_sample * L.mb_samples * l.top_k);
  const double capacity = std::ceil(l.capacity_factor * routed / static_cast<double>(l.experts));
  return static_cast<double>(l.experts) * capacity / routed;
}

class ExpertPass final : public LoweringPass {
 public:
  void prepare(LowerContext& L) override {
    E_ = L.s.parallel.expert;
    const auto n = static_cast<std::int32_t>(L.m.order.size());
    moe_.assign(static_cast<std::size_t>(n), 0);
    routed_.assign(static_cast<std::size_t>(n), core::Bytes{});
    dispatch_.assign(static_cast<std::size_t>(n), MoeDispatchShape{});
    const std::int64_t tokens =
        (L.m.sequence_model ? L.s.parallel.tokens_per_rank(L.s.training.seq_len) : 1) *
        L.mb_samples;
    for (std::int32_t i = 0; i < n; ++i) {
      const models::Layer& l = L.m.graph[L.m.order[i]];
      if (l.experts <= 1) continue;
      const double f = routed_factor(L, l);
      // The busiest rank's routed tokens, as the all-to-all below carries them.
      const core::Bytes routed = core::Bytes{static_cast<std::int64_t>(
          std::llround(f * double((l.output * l.top_k * L.mb_samples).value)))};
      dispatch_[i] = {routed, l.top_k, tokens * l.experts, std::max<std::int64_t>(1, l.experts / E_)};
      LayerShard& sh = L.shards[i];  // its experts split by shard_layers
      // The busiest rank's extra routed work and activations (less, f < 1, when the capacity
      // drops tokens).
      if (f != 1) {
        sh.flops += (f - 1) * l.expert_flops / static_cast<double>(L.tensor);
        const core::Bytes extra = core::Bytes{static_cast<std::int64_t>(
            std::floor((f - 1) * double((l.expert_saved / L.tensor).value)))};
        sh.saved += extra;
        L.kept[i].saved += extra;
      }
      if (E_ > 1) {
        moe_[i] = 1;
        // tokens x k x hidden x e per sample (the layer's output is e*s*h), on the busiest rank.
        const core::Bytes per_sample = l.output * l.top_k;
        routed_[i] = l.capacity_factor > 0  // experts x capacity tokens, exactly
                         ? core::Bytes{std::llround(f * double((per_sample * L.mb_samples).value))}
                         : core::Bytes{static_cast<std::int64_t>(f * double(per_sample.value))} *
                               L.mb_samples;
      }
    }
    active_ = std::find(moe_.begin(), moe_.end(), 1) != moe_.end();
    expert_span_ = data_subgroup_span(L.s, E_, 1);
    reduce_ranks_ = L.data / E_;
    reduce_span_ = expert_data_span(L.s);  // the reduce_ranks_ holding the same experts
  }

  int ops_per_layer(const LowerContext&) const override { return active_ ? 3 : 0; }
  bool expands_units(const LowerContext&) const override { return active_; }
  // The all-to-alls gate the compute ops: the unit's timing depends on the comm stream.
  bool repeats(const StageContext&, const UnitStep&) const override { return !active_; }

  void begin_unit(StageContext&, UnitStep&) override { pending_ = -1; }

  void before_layer(StageContext& c, UnitStep& u, std::int32_t i) override {
    if (!active_) return;
    if (pending_ >= 0) {  // the layer after an MoE layer waits for its combine
      c.param_ready = pending_;
      pending_ = -1;
    }
    if (!moe_[i]) return;
    // Dispatch (forward) or the combine's gradient (backward): the routed tokens go out once the
    // op before has produced them; the experts wait for them.
    c.last_comm = c.B.emit(all_to_all(u, i), {activation(routed_[i], TensorKind::routed, i)}, {},
                           {c.ref_or_none(c.recent[1])});
    c.param_ready = c.last_comm;
  }

  void layer_op(StageContext& c, const UnitStep& u, LayerOp& lo) override {
    const MoeDispatchShape& d = dispatch_[lo.layer];
    // The router's and the permutation's kernels (a backward below LoRA's lowest adapter runs
    // none).
    if (d.routed.value > 0 && (u.forward() || c.L.shards[lo.layer].grad_out)) {
      const MoeDispatchWork w = moe_dispatch_work(d, !u.forward());
      lo.op.work.bytes += w.bytes;
      if (lo.op.work.launches == 0) lo.op.work.launches = lo.op.kernels;
      lo.op.work.launches += w.launches;
    }
    if (active_ && moe_[lo.layer])
      lo.frees.push_back(activation(routed_[lo.layer], TensorKind::routed, lo.layer));
  }

  void after_layer(StageContext& c, UnitStep& u, std::int32_t i, std::int32_t op) override {
    if (!active_ || !moe_[i]) return;
    // Combine (forward) or the dispatch's gradient (backward): the experts' outputs go back.
    const MemEffect back = activation(routed_[i], TensorKind::routed, i);
    c.last_comm = c.B.emit(all_to_all(u, i), {back}, {back}, {c.B.ref(op)});
    pending_ = c.last_comm;
    const LowerContext& L = c.L;
    const std::int64_t p = L.shards[i].expert_params;
    // Under FSDP the fsdp pass reduce-scatters them over the same group.
    if (!u.forward() && u.last_microbatch && reduce_ranks_ > 1 && p > 0 &&
        L.states_owner != StatesOwner::fsdp) {
      const core::Bytes bytes = core::Bytes{p} * L.state_bytes.gradients;
      const MemEffect buffer = tensor(MemCategory::buffers, bytes, TensorKind::bucket, i);
      const std::span<const MemEffect> booked(&buffer, L.s.buckets_kept() ? 0 : 1);
      // Under ZeRO-1 (the distributed optimizer) each rank keeps its shard: a reduce-scatter.
      const OpKind kind = L.zero == 0 ? OpKind::all_reduce : OpKind::reduce_scatter;
      Op reduce = comm_op(kind, StreamKind::comm, L.zero == 0 ? CommPurpose::data : CommPurpose::zero,
                          i, u.microbatch(), u.chunk(), bytes, reduce_ranks_,
                          reduce_span_.inter_node, reduce_span_.per_node,
                          reduce_span_.pod_members);
      reduce.data_reduction = kind == OpKind::all_reduce;
      c.last_comm = c.B.emit(reduce, booked, booked, {c.B.ref(op)});
    }
  }

 private:
  Op all_to_all(const UnitStep& u, std::int32_t i) const {
    return comm_op(OpKind::all_to_all, StreamKind::comm, CommPurpose::all_to_all, i,
                   u.microbatch(), u.chunk(), routed_[i], E_, expert_span_.inter_node,
                   expert_span_.per_node, expert_span_.pod_members);
  }

  std::int64_t E_ = 1, reduce_ranks_ = 1;
  std::vector<char> moe_;             // per layer: routed through all-to-alls
  std::vector<core::Bytes> routed_;   // per layer: bytes of one all-to-all per micro-batch
  std::vector<MoeDispatchShape> dispatch_;  // per layer: its permutation (routed 0: not MoE)
  bool active_ = false;
  GroupSpan expert_span_, reduce_span_;
  std::int32_t pending_ = -1;  // the combine the next layer waits for
};

}  // namespace

PassEntry expert_pass() {
  return {"expert", kKeys, {}, make_pass<ExpertPass>};
}

}  // namespace trainsim::parallel
