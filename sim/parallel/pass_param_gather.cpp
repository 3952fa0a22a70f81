// ZeRO-1/2's all-gather of the updated weights overlapped with the next step's first forward:
// Megatron-Core's --overlap-param-gather (parallel.param_gather: overlapped), as
// megatron/core/optimizer/distrib_optimizer.py runs it (NVIDIA/Megatron-LM at f2e5db4):
// one all-gather per gradient bucket of the distributed optimizer's buffer, in forward order
// (`_get_model_param_buffer_dp_views`), the first dispatched once the step ended, each next one
// when the forward pre-hook of the first module reading the bucket before it waits for that one
// (`_finish_param_sync_helper`: "dispatches the next all-gather as necessary"). A bucket holds
// `parallel.bucket_size` of gradients (the buckets are shared with the gradient reduction;
// Megatron's default, max(40M, 1M x data) parameters, is a scenario's to set); a pipeline stage
// other than the first and a chunk other than a stage's first are one bucket each
// (distributed_data_parallel.py: no bucketing there, "not on the critical path"). Each layer of
// the step's first forward waits for its bucket's gather; the weights are gathered into the
// parameter buffer they already occupy, so nothing is allocated. The step, played from the
// gathers to the optimizer step, is the steady-state period: the gathers belong to the step
// whose forward waits for them. Without the key the model_states pass gathers after the step.
#include <algorithm>

#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

constexpr std::string_view kKeys[] = {"parallel.param_gather", "parallel.zero", "parallel.data",
                                      "parallel.bucket_size", "training.accumulate_grads"};

class ParamGatherPass final : public LoweringPass {
 public:
  void prepare(LowerContext& L) override {
    active_ = weights_gathered_before_forward(L);
  }

  void begin_stage(StageContext&) override {
    open_ = {};
    issue_after_ = -1;
  }

  int ops_per_layer(const LowerContext&) const override { return active_ ? 1 : 0; }
  // The first forward waits for the gathers; the other micro-batches repeat as before.
  bool repeats(const StageContext&, const UnitStep& u) const override {
    return !gated(u);
  }
  bool copies_units(const LowerContext&) const override { return !active_; }

  void before_layer(StageContext& c, UnitStep& u, std::int32_t i) override {
    const LowerContext& L = c.L;
    if (!gated(u) || L.shards[i].trainable == 0) return;
    if (i < open_.end) {  // inside the open bucket: its gather brings this layer's weights
      c.param_ready = open_.gather;
      return;
    }
    // A new bucket from layer i: the trained layers up to bucket_size of gradients (the whole
    // chunk where Megatron does not bucket).
    const bool bucketed = c.stage() == 0 && u.chunk() == 0;
    const std::int64_t per_grad = std::max<std::int64_t>(L.state_bytes.gradients, 1);
    const std::int64_t limit = L.s.parallel.bucket_size.value / per_grad;  // parameters
    std::int64_t elements = 0;
    std::int32_t j = i;
    for (; j < u.range.end && (!bucketed || elements < limit || elements == 0); ++j)
      elements += L.shards[j].trainable;
    const core::Bytes bytes = core::Bytes{elements} * L.state_bytes.weights;
    // Dispatched when the pre-hook waited for the bucket before (after the op before its first
    // layer); the step's first bucket at the step's start.
    const std::int32_t g = c.B.emit(
        comm_op(OpKind::all_gather, StreamKind::comm, CommPurpose::zero, i, u.microbatch(), u.chunk(),
                bytes, L.data, L.data_span.inter_node, L.data_span.per_node, L.data_span.pod_members),
        {}, {}, {c.ref_or_none(issue_after_)});
    issue_after_ = c.recent[1];
    open_ = {g, j};
    c.last_comm = g;
    c.param_ready = g;
  }

 private:
  bool gated(const UnitStep& u) const { return active_ && u.forward() && u.microbatch() == 0; }

  struct Bucket {
    std::int32_t gather = -1;
    std::int32_t end = -1;  // one past its last layer
  };

  bool active_ = false;
  Bucket open_;
  std::int32_t issue_after_ = -1;  // the op after which the next bucket's gather is dispatched
};

}  // namespace

PassEntry param_gather_pass() {
  return {"param_gather", kKeys, {}, make_pass<ParamGatherPass>, nullptr, StatesOwner::data_parallel};
}

}  // namespace trainsim::parallel
