#pragma once
// Lowering as a list of passes, one concern each (docs/architecture.md, "Lower"). The stage walk
// (stage_walk.cpp) visits a pipeline stage's work units in schedule order and each unit's layers,
// and at fixed points asks every pass of the list, in list order, to add its part: ops before a
// layer's compute op, the effects that op books and frees, collectives folded into it, ops after
// it, ops at the unit's and the step's end. A new parallelism is a new pass_<concern>.cpp and
// one line in the list (lower.cpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "sim/parallel/builder.hpp"
#include "sim/parallel/partition.hpp"
#include "sim/parallel/schedule.hpp"
#include "sim/parallel/shard.hpp"
#include "sim/parallel/topology.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::parallel {

// What a layer's forward keeps for its backward, per sample (set by the recomputation pass).
struct KeptActivations {
  core::Bytes saved{};  // booked by the forward as the layer's saved tensors
  core::Bytes core{};   // re-created apart before the backward (selective recomputation)
  // The forward runs inside an activation checkpoint (full or selective-op recomputation):
  // autograd keeps none of its saved tensors, which the block's replay makes again.
  bool checkpointed = false;
};

// Which sharding owns the model states and the gradient reduction: data parallelism with ZeRO
// stage LowerContext::zero (the model_states and data passes), or FSDP (the fsdp pass). Set in
// one place (lower.cpp); lower() builds only the passes of the owner in effect.
enum class StatesOwner { data_parallel, fsdp };

// What lowering derives from the scenario once, shared by every stage and pass.
struct LowerContext {
  const scenario::Scenario& s;
  const models::Model& m;
  std::vector<LayerShard> shards;      // per layer (Model::order), tensor-sharded
  std::vector<LayerRange> chunks;      // per global chunk g = local chunk x stages + stage
  std::vector<std::int32_t> chunk_of;  // each layer's global chunk
  std::vector<std::vector<std::int32_t>> producers;  // order positions
  std::vector<std::int32_t> last_consumer;           // order position, -1 when none
  std::vector<KeptActivations> kept;                 // per layer
  int stages = 1;                                    // pipeline degree (parallel.pipeline)
  int virtual_stages = 1;         // chunks per stage (interleaved schedule), else 1
  std::int32_t microbatches = 1;  // per step per data-parallel rank
  std::int64_t mb_samples = 1;    // samples per micro-batch (training.micro_batch)
  std::int64_t tensor = 1, data = 1;
  int zero = 0;  // ZeRO stage in effect: 0 without data parallelism
  StatesOwner states_owner = StatesOwner::data_parallel;
  scenario::StateBytes state_bytes;
  GroupSpan tensor_span, data_span;  // how each group sits on the nodes
  bool compress = false;             // LowerOptions::compress
  bool copy_units = false;           // LowerOptions::copy_units, compressed plans only
  std::int64_t units_copied = 0;     // units copied so far (unit_copy.hpp)
  std::int64_t held_before = 0;      // ops (and macro templates' ops) of the programs built so far

  explicit LowerContext(const scenario::Scenario& sc) : s(sc), m(sc.model) {}
  int chunk_count() const { return stages * virtual_stages; }
  // Refuses the plan once it holds more ops than the scenario's limit (the check the scenario's
  // validation could only bound from below).
  void check_size(const Program& P, std::int32_t microbatch) const;
};

class LoweringPass;

// One work unit of the stage being built (a forward or backward of one chunk for one
// micro-batch).
struct UnitStep {
  const WorkUnit& unit;
  std::int32_t g = 0;  // global chunk
  LayerRange range;
  bool first_chunk = false, last_chunk = false;  // of the whole pipeline
  // Backward units: the first / last of this chunk's backward units on the stage.
  bool first_microbatch = false, last_microbatch = false;
  // The transfer that feeds the unit (>= 0), emitted by the pipeline pass. The unit's first
  // compute op waits for it and books `arrival_alloc` first (the stage posts the receive just
  // before that op); a forward's also frees `arrival_free` (the received activation) at its end.
  std::int32_t transfer = -1;
  bool arrival_pending = false;
  MemEffect arrival_alloc{}, arrival_free{};

  std::int32_t microbatch() const { return unit.microbatch; }
  std::int32_t chunk() const { return unit.chunk; }
  bool forward() const { return unit.forward; }
};

// The layer whose compute op is being built, and that op: passes add their effects in list
// order (zero-byte effects are left out when it is emitted).
struct LayerOp {
  std::int32_t layer = 0;
  Op op;
  std::vector<MemEffect>& allocs;
  std::vector<MemEffect>& frees;
};

// A compute op just emitted: a layer's forward or backward, or a recomputation that replays the
// forwards of layers [first, last] (first > last: no whole layer, selective recomputation's
// attention core).
struct ComputeOp {
  std::int32_t index = 0;
  OpKind kind = OpKind::forward;
  std::int32_t first = 0, last = 0;
};

// The stage being built: its program, the passes, and what passes tell each other.
struct StageContext {
  LowerContext& L;
  Program& P;
  ProgramBuilder B;
  std::span<const std::unique_ptr<LoweringPass>> passes;
  std::int64_t params = 0;         // parameters of the stage's layers (after tensor sharding)
  std::int64_t trainable = 0;      // of which trained (all but LoRA's frozen ones)
  core::Bytes weight_bytes{};      // the stage's weights in bytes (frozen ones as stored)
  std::int64_t update_params = 0;  // trained parameters this rank's optimizer step updates
  // Set by the optimizer pass's book_states for the optimizers whose states depend on tensor
  // shapes (scenario::per_tensor_states): the stage's optimizer states tensor by tensor; and,
  // for every optimizer, the elements of the stage's largest trained tensor.
  core::Bytes tensor_states{};
  core::Bytes tensor_paged{};  // of tensor_states, in unified memory (scenario::tensor_paged_bytes)
  std::int64_t largest_trained = 0;
  // The offload pass moved the optimizer states and step to the host: gradients leave the GPU
  // every micro-batch and none are held.
  bool optimizer_on_host = false;
  std::vector<MemEffect>
      held_grads;                 // gradient tensors held to the optimizer step, which frees them
  std::int32_t last_comm = -1;    // the last op on the comm stream
  std::int32_t param_ready = -1;  // the op the layer about to run waits for (its parameters)
  std::int32_t update_op = -1;    // after it, this rank's updated weights are on the GPU
  std::int32_t recent[2] = {-1, -1};  // the last two layer compute ops (ZeRO-3 prefetch)
  // The layer's last compute op: its own until a pass adds compute after it (ring attention's
  // chunks); the passes after that one, and the unit's end, wait for it.
  std::int32_t layer_end = -1;

  StageContext(LowerContext& l, Program& p, std::span<const std::unique_ptr<LoweringPass>> list)
      : L(l), P(p), B(l, p, p.stage), passes(list) {}

  std::int32_t stage() const { return P.stage; }
  // Where a layer's parameters may start to arrive: once the compute op before the previous one
  // ended (one layer of prefetch).
  OpRef prefetch_after() const { return recent[0] >= 0 ? B.ref(recent[0]) : OpRef{}; }
  OpRef ref_or_none(std::int32_t i) const { return i >= 0 ? B.ref(i) : OpRef{}; }
  // The stage's last compute-stream op so far (none: an empty ref).
  OpRef last_compute() const {
    for (auto i = static_cast<std::int32_t>(P.ops.size()); i-- > 0;)
      if (P.ops[static_cast<std::size_t>(i)].stream == StreamKind::compute) return B.ref(i);
    return OpRef{};
  }
  // Emits a compute op of `unit`: the unit's first one takes its arrival (UnitStep), the op
  // waits for `ready` too; then every pass's on_compute. `first`/`last`: as ComputeOp.
  std::int32_t emit_compute(UnitStep& unit, const Op& op, std::vector<MemEffect>& allocs,
                            std::vector<MemEffect>& frees, OpRef ready, std::int32_t first,
                            std::int32_t last);
  // Tells every pass that op `op` reduced a gradient bucket ending at `layer`.
  void reduced(UnitStep& unit, std::int32_t op, std::int32_t layer);
};

// A concern of lowering. Every hook defaults to doing nothing; a pass overrides those it needs.
// Passes are made anew for each lower() call and keep their per-stage state in members reset by
// begin_stage.
class LoweringPass {
 public:
  virtual ~LoweringPass() = default;
  // Once per plan, before any stage: per-layer tables in the context.
  virtual void prepare(LowerContext&) {}
  // Once per stage, before its units: the model states each device books (Program::persistent,
  // model_states, parameters), then (place_states) what moves off the GPU.
  virtual void book_states(StageContext&) {}
  virtual void place_states(StageContext&) {}
  virtual void begin_stage(StageContext&) {}
  // Fast play's reservation: ops this pass adds per layer and unit, and whether it keeps every
  // unit expanded.
  virtual int ops_per_layer(const LowerContext&) const { return 0; }
  virtual bool expands_units(const LowerContext&) const { return false; }
  // A unit starts: the ops that feed it, the unit's state.
  virtual void begin_unit(StageContext&, UnitStep&) {}
  // Whether the unit, as far as this pass goes, repeats exactly from one micro-batch to the next
  // and may play as a macro op (fast play).
  virtual bool repeats(const StageContext&, const UnitStep&) const { return true; }
  // Whether a unit that stays expanded may be copied from the last one of its kind once two
  // were found congruent (unit_copy.hpp): false when the pass keeps state that a unit changes
  // and the next unit reads, which a copy would not change (its ops, effects, dependencies and
  // StageContext's op slots are copied; state begin_unit resets is fine).
  virtual bool copies_units(const LowerContext&) const { return true; }
  // Before a layer's compute op: ops it waits for (recomputation, parameter fetch and gather).
  virtual void before_layer(StageContext&, UnitStep&, std::int32_t /*layer*/) {}
  // The layer's compute op: its work and what it books and frees.
  virtual void layer_op(StageContext&, const UnitStep&, LayerOp&) {}
  // Any compute op just emitted: what runs with it (tensor-parallel collectives).
  virtual void on_compute(StageContext&, const ComputeOp&) {}
  // After a layer's compute op `op` (its index; StageContext::layer_end once a pass before this
  // one added compute ops after it).
  virtual void after_layer(StageContext&, UnitStep&, std::int32_t /*layer*/, std::int32_t /*op*/) {}
  // Op `op` reduced a gradient bucket (StageContext::reduced).
  virtual void after_reduction(StageContext&, UnitStep&, std::int32_t /*op*/,
                               std::int32_t /*layer*/) {}
  // After the unit's layers (`last`: its last compute op), before it may become a macro op.
  virtual void end_unit(StageContext&, UnitStep&, std::int32_t /*last*/) {}
  // The unit is emitted; `last` is the op the next stage's unit waits for.
  virtual void unit_done(StageContext&, const UnitStep&, std::int32_t /*last*/) {}
  // After every unit of the stage: the schedule's last exchanges, then what the step does once
  // the schedule returned, before the optimizer (Megatron-LM's train_step after
  // forward_backward_func: its local DDP's all-reduce).
  virtual void end_backward(StageContext&) {}
  // After every pass's end_backward: the optimizer step and what follows it.
  virtual void end_step(StageContext&) {}
  // After every stage: what joins the programs (pipeline dependencies, host memory per node).
  virtual void finish(const LowerContext&, Plan&) {}
};

// A pass of the list, with the scenario keys it reads ("training.offload" covers its sub-keys).
// `keys` shape the programs; `settings` reach the plan only as fields `apply_settings` sets, so
// a lowered plan serves any value of them once they are applied again (the sweep's plan reuse).
struct PassEntry {
  std::string_view name;
  std::span<const std::string_view> keys;
  std::span<const std::string_view> settings;
  std::unique_ptr<LoweringPass> (*make)();
  void (*apply_settings)(Plan&, const scenario::Scenario&) = nullptr;
  // The passes of one owner of the model states only take part when it owns them.
  std::optional<StatesOwner> owner = std::nullopt;
};

template <class Pass>
std::unique_ptr<LoweringPass> make_pass() {
  return std::make_unique<Pass>();
}

// The passes, one concern each (pass_<concern>.cpp).
PassEntry compute_pass();
// The low-precision copies of layer i's GEMM weights one forward makes and keeps for the
// backward (pass_compute.cpp), and whether the block's replay makes them again for the backward
// (a checkpointed layer's casts: saved tensors the checkpoint drops).
core::Bytes weight_casts(const LowerContext& L, std::int32_t i);
bool casts_replayed(const LowerContext& L, std::int32_t i);
PassEntry loss_pass();
PassEntry activation_offload_pass();
PassEntry tensor_pass();
PassEntry gemm_pass();
PassEntry softmax_pass();
PassEntry batch_host_pass();
PassEntry accumulate_pass();
PassEntry expert_pass();
PassEntry recompute_pass();
PassEntry pipeline_pass();
PassEntry offload_pass();
PassEntry optimizer_pass();
PassEntry model_states_pass();
PassEntry zero3_pass();
// Whether ZeRO-1/2's weight all-gather runs before the step's first forward
// (parallel.param_gather: overlapped, pass_param_gather.cpp) instead of after the update.
inline bool weights_gathered_before_forward(const LowerContext& L) {
  return L.s.parallel.param_gather == scenario::ParamGather::overlapped &&
         (L.zero == 1 || L.zero == 2) && L.data > 1;
}
PassEntry param_gather_pass();
PassEntry jitter_pass();
PassEntry fsdp_pass();
PassEntry data_pass();
PassEntry context_pass();
PassEntry devices_pass();
PassEntry load_pass();

// The list, in the order passes act at each point of the stage walk.
std::span<const PassEntry> lowering_passes();

// Builds the program of pipeline stage `P.stage` (stage_walk.cpp).
void build_stage(LowerContext& L, std::span<const std::unique_ptr<LoweringPass>> passes,
                 Program& P);

}  // namespace trainsim::parallel
