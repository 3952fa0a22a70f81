// DeepSpeed ZeRO-3's parameter fetch (docs/zero3.md), as deepspeed/runtime/zero/
// partitioned_param_coordinator.py runs it: each submodule's pre-forward and pre-backward hook
// (fetch_sub_module) issues one coalesced all-gather of the next parameters in the recorded
// trace order, up to `stage3_prefetch_bucket_size` elements and at most `stage3_max_live_
// parameters` gathered at once; parameters of at most `stage3_param_persistence_threshold`
// elements are never partitioned (parameter_offload.py marks them ds_persist) and so are held
// whole by every rank and never gathered. Here a bucket is a run of consecutive layers in the
// unit's order, closed at the layer whose parameters bring it to the bucket size: one all-gather
// op per bucket on the comm stream, issued when the bucket before it begins (its first layer's
// hook), or once that bucket's last layer ended when both together exceed max_live_parameters.
// Every layer's compute op frees its own gathered part (release_sub_module).
#include <algorithm>

#include "models/param_tensors.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

using hw::MemCategory;

constexpr std::string_view kKeys[] = {"parallel.zero3", "parallel.zero", "parallel.data",
                                      "training.offload", "training.activation_offload",
                                      "parallel.expert", "parallel.context"};

class Zero3Pass final : public LoweringPass {
 public:
  // Each layer's persistent and gathered elements and the bytes of its gathered weights.
  void prepare(LowerContext& L) override {
    if (L.zero != 3) return;
    const std::size_t n = L.m.order.size();
    persistent_.assign(n, 0);
    full_.assign(n, {});
    for (std::size_t i = 0; i < n; ++i) {
      const LayerShard& sh = L.shards[i];
      if (sh.params == 0) continue;
      const std::int64_t kept = std::min(
          sh.params, persistent_elements(L.m.graph[L.m.order[i]], L.tensor,
                                         L.s.parallel.zero3.param_persistence_threshold));
      persistent_[i] = kept;
      // The gathered share of the layer's weight bytes (frozen weights stored as they are).
      full_[i] = core::Bytes{static_cast<std::int64_t>(
          static_cast<long double>(sh.weight_bytes.value) * (sh.params - kept) / sh.params)};
    }
    // Buckets span layers only where no other pass gates a layer's compute on an op of its own
    // (a parameter or activation fetch from the host, an expert all-to-all, a K/V exchange):
    // the compute op waits for one op, and those take that place.
    const scenario::Scenario& s = L.s;
    bucketed_ = !s.training.offload.parameters_on_cpu() && !s.training.activation_offload &&
                s.parallel.expert == 1 && s.parallel.context == 1;
  }

  // Persistent weights are held whole: the rank's share is the partitioned rest / data plus them.
  void book_states(StageContext& c) override {
    const LowerContext& L = c.L;
    if (L.zero != 3) return;
    std::int64_t kept = 0;
    core::Bytes kept_bytes{}, gathered{};
    for (int k = 0; k < L.virtual_stages; ++k) {
      const LayerRange r = L.chunks[static_cast<std::size_t>(k * L.stages + c.stage())];
      for (std::int32_t i = r.first; i < r.end; ++i) {
        kept += persistent_[i];
        kept_bytes += L.shards[i].weight_bytes - full_[i];
        gathered += full_[i];
      }
    }
    const std::int64_t d = L.data;
    Program& P = c.P;
    P.parameters = (c.params - kept + d - 1) / d + kept;
    P.persistent[MemCategory::weights] = core::ceil_div(gathered, d) + kept_bytes;
    P.model_states[MemCategory::weights] = P.persistent[MemCategory::weights];
  }

  void begin_stage(StageContext&) override { open_ = {}; }

  void begin_unit(StageContext&, UnitStep&) override { open_ = {}; }

  void before_layer(StageContext& c, UnitStep& u, std::int32_t i) override {
    const LowerContext& L = c.L;
    if (L.zero != 3 || full_[i].value == 0) return;
    if (open_.remaining > 0) {  // inside the open bucket: its gather brings this layer's weights
      --open_.remaining;
      c.param_ready = open_.gather;
      return;
    }
    const Bucket prev = open_;
    open_ = Bucket{};
    open_.elements = L.shards[i].params - persistent_[i];
    core::Bytes bytes = full_[i];
    std::vector<MemEffect> allocs{gathered(c, u, i)};
    if (bucketed_) {
      const std::int32_t step = u.forward() ? 1 : -1;
      for (std::int32_t j = i + step;
           open_.elements < L.s.parallel.zero3.prefetch_bucket_size && j >= u.range.first &&
           j < u.range.end;
           j += step) {
        if (full_[j].value == 0) continue;
        open_.elements += L.shards[j].params - persistent_[j];
        bytes += full_[j];
        allocs.push_back(gathered(c, u, j));
        ++open_.remaining;
      }
    }
    // Issued at the hook of the bucket before it, or after that bucket's last layer when both
    // would exceed max_live_parameters; a unit's first bucket one layer ahead, as before.
    OpRef after = c.prefetch_after();
    if (prev.gather >= 0)
      after = prev.elements + open_.elements > L.s.parallel.zero3.max_live_parameters
                  ? c.ref_or_none(c.recent[1])
                  : c.ref_or_none(prev.issue_after);
    open_.issue_after = c.recent[1];
    const std::int32_t g = c.B.emit(
        comm_op(OpKind::all_gather, StreamKind::comm, CommPurpose::zero, i, u.microbatch(),
                u.chunk(), bytes, L.data, L.data_span.inter_node, L.data_span.per_node,
                L.data_span.pod_members),
        allocs, {}, {after, c.ref_or_none(c.param_ready)});
    open_.gather = g;
    c.last_comm = g;
    c.param_ready = g;
  }

  void layer_op(StageContext& c, const UnitStep& u, LayerOp& lo) override {
    if (c.L.zero != 3 || full_[lo.layer].value == 0) return;
    lo.frees.push_back(gathered(c, u, lo.layer));
  }

 private:
  // The open bucket: its gather op, its elements, the layers after the first still to run, and
  // the compute op before its first layer (where the next bucket's gather is issued).
  struct Bucket {
    std::int32_t gather = -1;
    std::int64_t elements = 0;
    std::int32_t remaining = 0;
    std::int32_t issue_after = -1;
  };

  // What a layer's gather adds to the rank's own shard of it.
  MemEffect gathered(const StageContext& c, const UnitStep& u, std::int32_t i) const {
    const core::Bytes g = full_[i] - core::ceil_div(full_[i], c.L.data);
    return tensor(MemCategory::weights, g,
                  u.forward() ? TensorKind::gathered : TensorKind::gathered_backward, i);
  }

  // Elements of a layer's parameter tensors (per tensor-parallel rank) at most `threshold` each.
  static std::int64_t persistent_elements(const models::Layer& l, std::int64_t tensor,
                                          std::int64_t threshold) {
    std::int64_t kept = 0, listed = 0;
    for (const models::LinearWeight& w : l.linears) {
      if (w.count == 0) continue;
      listed += w.in * w.out * w.count;
      const std::int64_t numel = w.in * w.out / (w.split ? tensor : 1);
      if (numel <= threshold) kept += numel * w.count;
    }
    for (const models::ParamTensor& t : l.tensors) {
      listed += t.elements();
      if (t.elements() / t.count <= threshold) kept += t.elements();
    }
    // A layer without shapes (`generic`): its parameters as one vector (models/param_tensors.hpp).
    const std::int64_t rest = l.params - listed;
    if (rest > 0 && rest <= threshold) kept += rest;
    return kept;
  }

  std::vector<std::int64_t> persistent_;
  std::vector<core::Bytes> full_;
  bool bucketed_ = true;
  Bucket open_;
};

}  // namespace

PassEntry zero3_pass() {
  return {"zero3", kKeys, {}, make_pass<Zero3Pass>, nullptr, StatesOwner::data_parallel};
}

}  // namespace trainsim::parallel
