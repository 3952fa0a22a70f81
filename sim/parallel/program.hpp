#pragma once
// The workload as data: one Program per distinct device role (a pipeline stage; its data- and
// tensor-parallel replicas behave identically and are counted, not played). A Program is an
// ordered list of typed ops with their memory effects and cost inputs. Lowering builds it;
// sim/exec plays it; nothing here knows about time.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/cost/cost.hpp"
#include "sim/cost/gemm_shape.hpp"
#include "sim/hw/device.hpp"
#include "sim/hw/ledger.hpp"

namespace trainsim::parallel {

enum class OpKind : std::uint8_t {
  forward,         // forward of one layer for one micro-batch
  backward,        // backward of one layer for one micro-batch
  recompute,       // replay of forward work during backward (activation checkpointing)
  optimizer,       // optimizer step over the device's parameter shard
  p2p,             // activation / gradient transfer between pipeline stages
  all_reduce,      // tensor-parallel or data-parallel all-reduce
  reduce_scatter,  // ZeRO gradient reduce-scatter, sequence-parallel
  all_gather,      // ZeRO parameter all-gather, sequence-parallel
  pcie_h2d,        // offload: host -> device copy over PCIe (parameters)
  pcie_d2h,        // offload: device -> host copy over PCIe (gradients)
  cpu_optimizer,   // offload: optimizer step on the host CPU over the device's shard
  all_to_all,      // expert parallelism: routed tokens to and from their experts' ranks
};
std::string_view to_string(OpKind k);

// What the communication is for: reported separately ("comm" in the JSON report).
// offload_pcie: PCIe copies between a GPU and host memory; offload_cpu_optimizer: the CPU's
// optimizer step (not communication, but host work the GPU waits for, reported alongside).
// FSDP (pass_fsdp.cpp): a unit's parameter all-gather, its gradient reduce-scatter, and HSDP's
// all-reduce of the reduced shard across the replica groups. all_to_all: expert parallelism's
// dispatch and combine of routed tokens (pass_expert.cpp). context_kv: context parallelism's
// key/value exchange in attention and its gradients (pass_context.cpp).
enum class CommPurpose : std::uint8_t {
  none, tensor, data, pipeline, zero, offload_pcie, offload_cpu_optimizer,
  fsdp_all_gather, fsdp_reduce_scatter, hsdp_all_reduce, all_to_all, context_kv,
};
inline constexpr std::size_t kCommPurposes = static_cast<std::size_t>(CommPurpose::context_kv) + 1;
std::string_view to_string(CommPurpose p);

// Streams: compute and collective communication each run their ops in program order, one at a
// time; p2p transfers have their own links and overlap freely. Offload adds the two directions
// of the GPU's PCIe link (full duplex, each in order) and the host CPU.
enum class StreamKind : std::uint8_t { compute = 0, comm = 1, p2p = 2, pcie_h2d = 3, pcie_d2h = 4, host = 5 };
inline constexpr int kStreams = 6;

// What a memory effect allocates or frees: one tensor (or one flat buffer) of a layer, so a
// caching-allocator model (sim/hw/caching_allocator.hpp) can free the very block a tensor took.
enum class TensorKind : std::uint8_t {
  none,          // not named (never freed apart)
  output,        // a layer's forward output
  saved,         // what a layer's forward keeps for backward (without the selective core)
  core,          // the attention core selective recomputation re-creates
  checkpoint,    // full recomputation's block input
  received,      // an activation received from the previous pipeline stage
  grad,          // gradient with respect to a layer's output
  input_grad,    // gradient sent back to the previous pipeline stage
  gathered,      // a ZeRO-3 all-gathered layer, for its forward
  fetched,       // a layer's parameter shard copied from host memory (parameter offload)
  gathered_backward,  // the same for its backward
  fetched_backward,
  param_grad,    // a layer's parameter gradients, held from the first backward to the optimizer
  offload_grad,  // a micro-batch's gradients on their way to host memory (optimizer offload)
  bucket,        // a data-parallel gradient reduction bucket
  unsharded_grad,  // FSDP: a layer's unsharded gradients, to its unit's reduce-scatter copy-in
  reduce_input,    // FSDP: a unit's reduce-scatter input, from the copy-in to the collective's end
  dequantized,   // a quantized layer's weight in the compute dtype, for its forward (QLoRA)
  dequantized_backward,  // the same for its backward
  routed,        // tokens dispatched to a layer's experts (expert parallelism's all-to-all)
  weight_cast,   // a layer's GEMM weights cast per forward (autocast, fp8), kept for its backward
  context_kv,    // context parallelism: K/V chunks received, gathered K/V, or their gradients
  logits,        // the loss's logits in flight in its forward (pass_loss.cpp)
  logits_grad,   // the gradients of one chunk of logits in the loss's backward
  optimizer_temp,  // the optimizer step's transient buffers (foreach AdamW's sqrt(v), Adafactor's)
  load_temp,     // a transient of loading the model before the step (Program::load)
  softmax_temp,    // the unfused attention softmax's fp32 buffers within one op (pass_softmax.cpp)
  grad_cast,     // a 16-bit gradient cast to fp32 before it is added (pass_accumulate.cpp)
  optimizer_state,  // a state tensor created in the first optimizer step (Program::lazy_states)
};

struct MemEffect {
  hw::MemCategory category;
  core::Bytes bytes;
  // The tensor: kind and layer; per micro-batch unless `per_microbatch` is false (parameter
  // gradients live across micro-batches), the micro-batch being the op's.
  TensorKind tensor = TensorKind::none;
  std::int32_t layer = -1;
  bool per_microbatch = true;
  bool operator==(const MemEffect&) const = default;
};

// Refers to an op of any program: programs[program].ops[index].
struct OpRef {
  std::int32_t program = -1;
  std::int32_t index = -1;
};

enum class TpOverlap : std::uint8_t { none, attention, mlp };

struct CommWork {
  core::Bytes bytes{};  // buffer size S on each rank
  std::int32_t ranks = 1;
  bool inter_node = false;  // crosses the node boundary (uses the inter-node link)
  std::int32_t ranks_per_node = 1;  // group members sharing each node's network (inter_node only)
  // p2p with Megatron's scatter/gather: each of `gather_ranks` tensor ranks sends 1/t of the
  // activation, then they all-gather it over the intra-node fabric.
  std::int32_t gather_ranks = 1;
  // Members of the group inside one pod when the group spans pods (cluster.pod_nodes), else 0:
  // what the pods' oversubscribed uplinks leave each of its rings (cost::congested_link).
  std::int32_t pod_members = 0;
  bool operator==(const CommWork&) const = default;
};

struct Op {
  OpKind kind = OpKind::forward;
  StreamKind stream = StreamKind::compute;
  CommPurpose purpose = CommPurpose::none;
  std::int32_t layer = -1;       // index into Model::order; -1 when not about one layer
  std::int32_t microbatch = -1;  // -1 when not about one micro-batch
  std::int32_t chunk = 0;        // virtual pipeline stage (interleaved schedule), else 0
  cost::KernelWork work{};       // compute ops
  CommWork comm{};               // communication ops, or a compute op's tensor-parallel collectives
  std::int32_t kernels = 1;
  // Megatron tensor parallelism: collectives that follow this compute op on the compute stream
  // (blocking), each over `comm`: an all-reduce, or a reduce-scatter + all-gather pair with
  // sequence parallelism. Folded into the op so a step has a third fewer ops to play.
  std::uint8_t tp_collectives = 0;
  bool tp_sequence_parallel = false;
  // parallel.tp_comm_overlap: the op's one collective pair overlapped with the GEMMs next to it
  // (Transformer Engine userbuffers, exec/tp_overlap.cpp), by the layer's TE module: the
  // attention block's (qkv / proj) or the MLP's (fc1 / fc2) userbuffers settings.
  TpOverlap tp_overlap = TpOverlap::none;
  // Memory effects: [alloc_begin, alloc_end) of Program::effects booked when the op starts,
  // [free_begin, free_end) released when it ends. Dependencies: [dep_begin, dep_end) of
  // Program::deps must finish before the op starts (besides the op before it in its stream).
  std::uint32_t alloc_begin = 0, alloc_end = 0, free_begin = 0, free_end = 0;
  std::uint32_t dep_begin = 0, dep_end = 0;
  bool model_flops = true;  // counted in MFU (false for recomputation)
  // Fast play: >= 0 when this compute op stands for a run of ops played back to back, the
  // template Program::macros[macro] (kind, layer, micro-batch and chunk name the run; its own
  // effect ranges are empty, the template's ops carry the effects).
  std::int32_t macro = -1;
  // A macro op whose incoming pipeline transfer is folded in: `comm` is the transfer, which
  // starts when its one dependency ends, and the macro starts no earlier than the transfer's end
  // — as the expanded plan's p2p op would. (A p2p op books no memory: the receive buffer is the
  // first allocation of the op that consumes it.)
  bool arrival = false;
  // A data-parallel gradient all-reduce (the data pass, ZeRO 0): the one op priced with
  // Plan::data_allreduce, a plan setting, so a play's loop snapshot pauses before the ops it
  // waits for (exec::PlaySnapshot).
  bool data_reduction = false;
  // Fast play: >= 0 when this op's one dependency is a macro op and it may start once op `tap` of
  // the macro's template ends, inside the macro op's span (a ZeRO-2 reduce-scatter waits for the
  // backward that filled its bucket, not for the whole unit).
  std::int32_t tap = -1;
  // Compute ops: the GEMMs the op runs, Program::gemm_shapes[gemm_begin, gemm_end) (the gemm
  // pass); their tile and wave quantization on the program's device is the work's
  // shape_efficiency (exec/op_durations.cpp). Empty: not modelled.
  std::uint32_t gemm_begin = 0, gemm_end = 0;
  bool operator==(const Op&) const = default;
};

// A run of compute-stream ops that a pipeline unit repeats for every micro-batch: the ops
// Program::macro_ops[begin, end), in order, each starting when the one before ends. Their
// dependencies are the macro op's; their effect ranges index Program::effects. The unit's
// communication ops that wait for one of them alone (ZeRO-2's reduce-scatters) are
// Program::macro_taps[taps_begin, taps_end), each with its Op::tap: every macro op of the
// template is followed by a copy of them (see Op::tap).
struct MacroTemplate {
  std::uint32_t begin = 0, end = 0;
  std::uint32_t taps_begin = 0, taps_end = 0;
};

struct Program {
  std::int32_t stage = 0;      // pipeline stage
  std::int64_t count = 1;      // identical devices this program stands for (data x tensor)
  hw::DeviceSpec device;       // the stage's device (parallel.stage_devices, else the scenario's)
  // How much longer its compute lasts waiting for the slowest of its `count` ranks
  // (cluster.jitter; cost::straggler_factor; set by the jitter pass): 1 without jitter.
  double straggler = 1;
  hw::MemBreakdown persistent;  // booked before the step starts (weights, optimizer states, reserved)
  std::vector<Op> ops;
  std::vector<MemEffect> effects;
  std::vector<OpRef> deps;
  std::vector<MacroTemplate> macros;  // fast play only (see Op::macro)
  std::vector<Op> macro_ops;
  std::vector<Op> macro_taps;
  // GEMM shapes of the ops (Op::gemm_begin), each distinct run stored once.
  std::vector<cost::GemmShape> gemm_shapes;
  // Bookkeeping for the report.
  std::int64_t parameters = 0;  // parameters held (after tensor and ZeRO-3 sharding)
  hw::MemBreakdown model_states;  // weights + gradients + optimizer states + reserved per device
  hw::MemBreakdown host;          // host memory held for each of these devices (offload), by category
  // Of the optimizer states, those in CUDA unified memory (bitsandbytes' paged optimizers): the
  // driver evicts their pages to host memory rather than fail an allocation (exec/paging.cpp).
  core::Bytes paged{};
  // Loading the model before the step, after the model states (pass_load.cpp): allocations
  // (`alloc`) and frees in order. The allocator model plays them and keeps the segments they
  // leave cached; the step's peaks start after them.
  struct LoadEffect {
    MemEffect effect;
    bool alloc = true;
    bool operator==(const LoadEffect&) const = default;
  };
  std::vector<LoadEffect> load;
  // training.optimizer_states: lazy (pass_load.cpp): the optimizer states as torch.optim creates
  // them in the first step's optimizer.step(), tensor by tensor; of P.persistent's optimizer
  // states, these are not booked before the step but in a first step played before it.
  std::vector<MemEffect> lazy_states;
  std::int32_t first_layer = 0, last_layer = 0;  // [first, last] in Model::order (chunk 0)

  // Ops held, with the macro templates' (what limits.max_ops bounds).
  std::int64_t held_ops() const {
    return static_cast<std::int64_t>(ops.size() + macro_ops.size() + macro_taps.size());
  }
};

struct Plan {
  std::vector<Program> programs;
  std::int64_t devices_total = 1;
  std::int64_t microbatches = 1;  // per data-parallel rank per step
  double model_flops = 0;         // FLOPs of one step of the whole job, without recomputation
  double hardware_flops = 0;      // with recomputation
  std::int64_t samples = 0;       // samples per step (global batch)
  std::int64_t tokens = 0;        // tokens per step (0 for non-sequence models)
  hw::LinkSpec intra_node, inter_node;
  // cluster.oversubscription: a pod's downlink to uplink ratio, for groups spanning pods.
  double oversubscription = 1;
  // SMs each NCCL kernel (collective or pipeline transfer) off the compute stream holds while it
  // runs: compute kernels beside it run on the rest (cluster.collective_sms; cost/contention.hpp,
  // exec/player.cpp). 0: none. A plan with it has no macro ops (pass_devices.cpp).
  int collective_sms = 0;
  // parallel.allreduce: the algorithm data-parallel all-reduces are forced to (NCCL_ALGO), or
  // none: NCCL's own choice (cost::nccl_best).
  std::optional<cost::CollectiveAlgo> data_allreduce;
  cost::MathMode math = cost::MathMode::half;  // tensor-core mode of the training precision
  bool compressed = false;  // lowered with LowerOptions::compress (some ops may be macros)
  // training.allocator: memory goes through the caching-allocator model (exec::play).
  bool caching_allocator = true;
  // The schedule has a steady state where each stage alternates forward and backward units
  // (1F1B, interleaved), so a device's memory can repeat from period to period; GPipe's grows
  // through the forwards and shrinks through the backwards, and never repeats.
  bool steady_state = false;
  // Units of one template between two ends a period apart in that steady state (the pipeline
  // pass sets it): 1, or the stage count under the interleaved schedule, whose units visit the
  // virtual stages a group of as many micro-batches as stages at a time.
  std::uint32_t steady_lag = 1;
  // Offload (training.offload): each GPU's PCIe link to host memory, and its share of the
  // node's DRAM bandwidth for the CPU optimizer (node bandwidth / GPUs per node).
  hw::LinkSpec pcie;
  core::Bandwidth host_bandwidth_per_gpu{};
  // Host memory per node: capacity, and the demand of the fullest node (sum of Program::host
  // over its GPUs); `host_stage` is the stage holding the most of it (-1 when nothing is held).
  core::Bytes host_capacity{};
  core::Bytes host_per_node{};
  std::int32_t host_stage = -1;
  // Lowering's own count: expanded units copied from the last of their kind (unit_copy.hpp).
  std::int64_t units_copied = 0;

  std::int64_t held_ops() const {
    std::int64_t n = 0;
    for (const auto& P : programs) n += P.held_ops();
    return n;
  }
};

}  // namespace trainsim::parallel
