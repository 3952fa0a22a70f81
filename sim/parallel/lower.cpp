#include "sim/parallel/lower.hpp"

#include <algorithm>
#include <span>

#include "sim/core/error.hpp"
#include "sim/parallel/offload.hpp"
#include "sim/parallel/partition.hpp"
#include "sim/parallel/schedule.hpp"
#include "sim/parallel/shard.hpp"
#include "sim/parallel/work_estimate.hpp"

namespace trainsim::parallel {

std::string_view to_string(OpKind k) {
  switch (k) {
    case OpKind::forward: return "forward";
    case OpKind::backward: return "backward";
    case OpKind::recompute: return "recompute";
    case OpKind::optimizer: return "optimizer";
    case OpKind::p2p: return "p2p";
    case OpKind::all_reduce: return "all_reduce";
    case OpKind::reduce_scatter: return "reduce_scatter";
    case OpKind::all_gather: return "all_gather";
    case OpKind::pcie_h2d: return "pcie_h2d";
    case OpKind::pcie_d2h: return "pcie_d2h";
    case OpKind::cpu_optimizer: return "cpu_optimizer";
  }
  return "?";
}

std::string_view to_string(CommPurpose p) {
  switch (p) {
    case CommPurpose::none: return "none";
    case CommPurpose::tensor: return "tensor_parallel";
    case CommPurpose::data: return "data_parallel";
    case CommPurpose::pipeline: return "pipeline_p2p";
    case CommPurpose::zero: return "zero";
    case CommPurpose::offload_pcie: return "offload_pcie";
    case CommPurpose::offload_cpu_optimizer: return "offload_cpu_optimizer";
  }
  return "?";
}

namespace {

using hw::MemCategory;
using scenario::Recompute;

// Everything lowering needs, computed once per scenario.
struct Lowering {
  const scenario::Scenario& s;
  const models::Model& m;
  std::vector<LayerShard> shards;
  std::vector<LayerRange> chunks;  // global virtual stages g = local_chunk * p + stage
  std::vector<std::int32_t> chunk_of;
  std::vector<std::vector<std::int32_t>> producers;  // order positions
  std::vector<std::int32_t> last_consumer;           // order position, -1 when none
  int p, v, mcount;
  std::int64_t t, d, mb;
  scenario::StateBytes sb;
  // Pending cross-program dependencies: op that must wait for the end of (virtual stage g,
  // micro-batch j) in forward / backward.
  struct Pending {
    std::int32_t program;
    std::uint32_t dep_slot;
    bool forward;
    std::int32_t g, j;
  };
  std::vector<Pending> pending;
  std::vector<OpRef> fwd_end, bwd_end;  // [g * mcount + j]
  bool compress = false;
  std::int64_t held_before = 0;  // ops (and macro templates' ops) of the programs built so far

  // Refuses the plan once it holds more ops than the scenario's limit (the check the scenario's
  // validation could only bound from below).
  void check_size(const Program& P, std::int32_t microbatch) const {
    const std::int64_t held = held_before + P.held_ops();
    if (held <= s.limits.max_ops) return;
    throw s.limits.refusal(
        "this step's plan would hold more than limits.max_ops = " + std::to_string(s.limits.max_ops) +
            " ops (reached at stage " + std::to_string(P.stage) + " of " + std::to_string(p) +
            (microbatch >= 0 ? ", micro-batch " + std::to_string(microbatch + 1) + " of " + std::to_string(mcount) : "") +
            ")" + (compress ? "" : ", expanded for a trace or memory series: every layer an op"),
        " (a plan and its play take about 300-500 bytes per op)");
  }

  Lowering(const scenario::Scenario& sc) : s(sc), m(sc.model) {}
};

// Placement (cluster.placement): ranks are numbered with the first listed dimension varying
// fastest, and node k holds ranks [k x gpus_per_node, (k + 1) x gpus_per_node). The default
// [tensor, pipeline, data] keeps tensor groups inside a node, then pipeline, then data.
std::int64_t degree(const scenario::Scenario& s, scenario::ParallelDim d) {
  switch (d) {
    case scenario::ParallelDim::tensor: return s.parallel.tensor;
    case scenario::ParallelDim::pipeline: return s.parallel.pipeline;
    case scenario::ParallelDim::data: return s.parallel.data;
  }
  return 1;
}
// Distance in ranks between neighbours along `dim`: 1 for the first dimension of the order,
// the first's degree for the second, the product of the first two for the third.
std::int64_t rank_stride(const scenario::Scenario& s, scenario::ParallelDim dim) {
  std::int64_t stride = 1;
  for (auto d : s.cluster.placement) {
    if (d == dim) return stride;
    stride *= degree(s, d);
  }
  return stride;
}
// How a group of `n` ranks `stride` apart sits on the nodes: whether it crosses a node boundary
// and how many of its members share each node (the ranks_per_node of cost::spanning_link).
// Exact when gpus_per_node is a multiple of the stride or the stride a multiple of it.
struct GroupSpan {
  bool inter_node = false;
  std::int64_t per_node = 1;
};
GroupSpan group_span(const scenario::Scenario& s, scenario::ParallelDim dim) {
  const std::int64_t gpn = s.cluster.gpus_per_node;
  const std::int64_t stride = rank_stride(s, dim), n = degree(s, dim);
  GroupSpan g;
  g.per_node = stride >= gpn ? 1 : std::min(n, gpn / stride);
  g.inter_node = n > 1 && stride * n > gpn;
  return g;
}
// Pipeline boundary from_stage -> to_stage, judged on the stages' rank 0 (tensor and data
// index 0): other ranks of the two stages may sit differently when a node boundary falls
// inside a stage's ranks.
bool inter_node_boundary(const scenario::Scenario& s, int from_stage, int to_stage) {
  const std::int64_t stride = rank_stride(s, scenario::ParallelDim::pipeline);
  const std::int64_t a = from_stage * stride / s.cluster.gpus_per_node;
  const std::int64_t b = to_stage * stride / s.cluster.gpus_per_node;
  return a != b;
}

class ProgramBuilder {
 public:
  ProgramBuilder(Lowering& L, Program& P, std::int32_t index) : L_(L), P_(P), index_(index) {}

  std::int32_t emit(Op op, std::initializer_list<MemEffect> allocs,
                    std::initializer_list<MemEffect> frees, std::initializer_list<OpRef> deps) {
    return emit(op, std::span(allocs.begin(), allocs.size()), std::span(frees.begin(), frees.size()), deps);
  }
  std::int32_t emit(Op op, std::span<const MemEffect> allocs, std::span<const MemEffect> frees,
                    std::initializer_list<OpRef> deps) {
    op.alloc_begin = static_cast<std::uint32_t>(P_.effects.size());
    for (auto e : allocs)
      if (e.bytes.value > 0) P_.effects.push_back(e);
    op.alloc_end = static_cast<std::uint32_t>(P_.effects.size());
    op.free_begin = op.alloc_end;
    for (auto e : frees)
      if (e.bytes.value > 0) P_.effects.push_back(e);
    op.free_end = static_cast<std::uint32_t>(P_.effects.size());
    op.dep_begin = static_cast<std::uint32_t>(P_.deps.size());
    for (auto d : deps)
      if (d.index >= 0) P_.deps.push_back(d);
    op.dep_end = static_cast<std::uint32_t>(P_.deps.size());
    P_.ops.push_back(op);
    L_.check_size(P_, op.microbatch);
    return static_cast<std::int32_t>(P_.ops.size() - 1);
  }
  // Adds a frees-at-end effect to an op already emitted only if it is the last one (effects of
  // an op must stay contiguous).
  void add_dep_pending(std::int32_t op_index, bool forward, std::int32_t g, std::int32_t j) {
    Op& op = P_.ops[op_index];
    TRAINSIM_CHECK(op.dep_end == P_.deps.size(), "pending dependency must be added right after emit");
    L_.pending.push_back({index_, static_cast<std::uint32_t>(P_.deps.size()), forward, g, j});
    P_.deps.push_back(OpRef{});
    op.dep_end = static_cast<std::uint32_t>(P_.deps.size());
  }
  OpRef ref(std::int32_t i) const { return OpRef{index_, i}; }
  // Copies ops [first, ops.size()) — a unit's compute ops, back to back, only the first with
  // dependencies, then communication ops each waiting for one of those compute ops alone (the
  // taps: ZeRO-2's reduce-scatters, emitted after the unit's compute ops) — into a new macro
  // template and returns its index; -1 when the unit has other work (transfers, ops waiting for
  // anything else) and cannot be one.
  std::int32_t make_template(std::size_t first) {
    std::size_t k = first;
    for (; k < P_.ops.size() && P_.ops[k].stream == StreamKind::compute; ++k) {
      const Op& op = P_.ops[k];
      if (op.macro >= 0 || (k > first && op.dep_begin != op.dep_end)) return -1;
    }
    if (k == first) return -1;
    for (std::size_t i = k; i < P_.ops.size(); ++i) {
      const Op& op = P_.ops[i];
      if (op.stream != StreamKind::comm || op.dep_end != op.dep_begin + 1) return -1;
      const OpRef d = P_.deps[op.dep_begin];
      if (d.program != index_ || d.index < static_cast<std::int32_t>(first) || d.index >= static_cast<std::int32_t>(k))
        return -1;
    }
    MacroTemplate t;
    t.begin = static_cast<std::uint32_t>(P_.macro_ops.size());
    P_.macro_ops.insert(P_.macro_ops.end(), P_.ops.begin() + static_cast<std::ptrdiff_t>(first),
                        P_.ops.begin() + static_cast<std::ptrdiff_t>(k));
    t.end = static_cast<std::uint32_t>(P_.macro_ops.size());
    t.taps_begin = static_cast<std::uint32_t>(P_.macro_taps.size());
    for (std::size_t i = k; i < P_.ops.size(); ++i) {
      Op op = P_.ops[i];
      op.tap = P_.deps[op.dep_begin].index - static_cast<std::int32_t>(first);
      P_.macro_taps.push_back(op);
    }
    t.taps_end = static_cast<std::uint32_t>(P_.macro_taps.size());
    P_.macros.push_back(t);
    return static_cast<std::int32_t>(P_.macros.size() - 1);
  }
  // The taps of template `macro` after its macro op `at` (just emitted) for micro-batch `mb`, each
  // booking its template's effects; a tap on the template's last op simply waits for the macro
  // op. Returns the last one's index (-1: none).
  std::int32_t emit_taps(std::int32_t macro, std::int32_t at, std::int32_t mb) {
    const MacroTemplate& t = P_.macros[static_cast<std::size_t>(macro)];
    const auto last_op = static_cast<std::int32_t>(t.end - t.begin) - 1;
    std::int32_t last = -1;
    for (auto i = t.taps_begin; i < t.taps_end; ++i) {
      Op op = P_.macro_taps[i];
      op.microbatch = mb;
      if (op.tap == last_op) op.tap = -1;
      op.dep_begin = static_cast<std::uint32_t>(P_.deps.size());
      P_.deps.push_back(OpRef{index_, at});
      op.dep_end = static_cast<std::uint32_t>(P_.deps.size());
      P_.ops.push_back(op);
      L_.check_size(P_, op.microbatch);
      last = static_cast<std::int32_t>(P_.ops.size() - 1);
    }
    return last;
  }
  // One macro op replaying template `macro` for micro-batch `mb`. When its input arrives by the
  // p2p op `transfer` (>= 0), just emitted, the transfer is folded into it (Op::arrival): the
  // macro op takes the transfer's place and its dependency.
  std::int32_t emit_macro(std::int32_t macro, std::int32_t mb, std::int32_t transfer) {
    Op op = P_.macro_ops[P_.macros[macro].begin];
    op.kind = op.kind == OpKind::recompute ? OpKind::backward : op.kind;
    op.microbatch = mb;
    op.macro = macro;
    op.tp_collectives = 0;
    op.tp_sequence_parallel = false;
    if (transfer < 0) return emit(op, {}, {}, {});
    TRAINSIM_CHECK(transfer + 1 == static_cast<std::int32_t>(P_.ops.size()) && P_.ops.back().kind == OpKind::p2p,
                   "a folded transfer must be the op just emitted");
    const Op& p2p = P_.ops.back();
    TRAINSIM_CHECK(p2p.alloc_begin == p2p.free_end, "a folded transfer books no memory (its receiver does)");
    op.arrival = true;
    op.comm = p2p.comm;
    op.alloc_begin = op.alloc_end = op.free_begin = op.free_end = p2p.alloc_begin;
    op.dep_begin = p2p.dep_begin;
    op.dep_end = p2p.dep_end;
    P_.ops.back() = op;
    return transfer;
  }
  // The unit just emitted at [first, ops.size()) made template `macro`: it is replaced by a macro
  // op replaying it, like every later copy; its taps follow it (emit_taps: the last one's
  // index, -1 when none, in `last_tap`).
  std::int32_t replace_by_macro(std::size_t first, std::int32_t macro, std::int32_t mb, std::int32_t transfer,
                                std::int32_t* last_tap = nullptr) {
    P_.ops.resize(first);
    const std::int32_t at = emit_macro(macro, mb, transfer);
    const std::int32_t tap = emit_taps(macro, at, mb);
    if (last_tap) *last_tap = tap;
    return at;
  }
  Program& program() { return P_; }

 private:
  Lowering& L_;
  Program& P_;
  std::int32_t index_;
};

// One tensor's memory effect.
MemEffect tensor(MemCategory cat, core::Bytes bytes, TensorKind kind, std::int32_t layer) {
  return MemEffect{cat, bytes, kind, layer, true};
}
MemEffect activation(core::Bytes bytes, TensorKind kind, std::int32_t layer) {
  return tensor(MemCategory::activations, bytes, kind, layer);
}

// GEMM kernels in one layer's forward (its backward runs twice as many: input and weight
// gradients), and whether element-wise kernels sit between them.
struct KernelShape {
  std::int32_t gemms = 1;
  bool serial_memory = false;
};
KernelShape kernel_shape(models::LayerKind k) {
  switch (k) {
    case models::LayerKind::attention: return {4, true};  // QKV, QK^T, attn x V, projection
    case models::LayerKind::mlp: return {2, true};        // up (and gate) and down around the activation
    default: return {1, false};
  }
}

// A layer's kernels: GEMM count (doubled in backward) and element-wise work between them.
Op shaped(Op op, const LayerShard& sh, int gemm_multiplier) {
  const KernelShape k = kernel_shape(sh.kind);
  op.kernels = sh.matmul ? k.gemms * gemm_multiplier : 1;
  op.work.serial_memory = k.serial_memory;
  return op;
}

Op compute_op(OpKind kind, std::int32_t layer, std::int32_t mb, std::int32_t chunk, double flops,
              core::Bytes bytes, bool matmul) {
  Op op;
  op.kind = kind;
  op.stream = StreamKind::compute;
  op.layer = layer;
  op.microbatch = mb;
  op.chunk = chunk;
  op.work = cost::KernelWork{flops, bytes, matmul};
  return op;
}

Op comm_op(OpKind kind, StreamKind stream, CommPurpose purpose, std::int32_t layer, std::int32_t mb,
           std::int32_t chunk, core::Bytes bytes, std::int64_t ranks, bool inter,
           std::int64_t ranks_per_node = 1) {
  Op op;
  op.kind = kind;
  op.stream = stream;
  op.purpose = purpose;
  op.layer = layer;
  op.microbatch = mb;
  op.chunk = chunk;
  op.comm = CommWork{bytes, static_cast<std::int32_t>(ranks), inter,
                     static_cast<std::int32_t>(ranks_per_node)};
  op.model_flops = false;
  return op;
}

// Builds the program of pipeline stage `stage`.
void build_stage(Lowering& L, Program& P, std::int32_t stage) {
  const auto& s = L.s;
  ProgramBuilder B(L, P, stage);
  const int G = L.p * L.v;
  const std::int64_t wb = L.sb.weights, gb = L.sb.gradients;
  const int zero = L.d > 1 ? s.parallel.zero : 0;
  // Whether each group crosses nodes and its members per node (which sets how much of a
  // node's network a spanning collective gets), from cluster.placement.
  const GroupSpan tp_span = group_span(s, scenario::ParallelDim::tensor);
  const GroupSpan dp_span = group_span(s, scenario::ParallelDim::data);
  const bool tp_inter = tp_span.inter_node;
  const bool dp_inter = dp_span.inter_node;
  const std::int64_t tp_per_node = tp_span.per_node;
  const std::int64_t dp_per_node = dp_span.per_node;
  const bool sp = s.parallel.sequence_parallel && L.t > 1;
  const auto mb = L.mb;

  // Per-layer bookkeeping for this device.
  const auto nlayers = static_cast<std::int32_t>(L.m.order.size());
  std::vector<char> grads_allocated(nlayers, 0);
  std::vector<int> backward_units_seen(L.v, 0);
  std::vector<MemEffect> param_grads;  // the gradient tensors held, freed by the optimizer step
  std::int32_t last_comm = -1;

  // A pipeline transfer of `bytes` held by each tensor rank. When the tensor is replicated
  // across the t ranks (no sequence parallelism), Megatron's scatter/gather optimisation sends
  // 1/t from each rank and all-gathers over NVLink (Narayanan et al. 2021, section 4.1).
  auto p2p_op = [&](std::int32_t layer, std::int32_t j, std::int32_t chunk, core::Bytes bytes,
                    bool inter, const LayerShard& producer) {
    const bool replicated = L.t > 1 && producer.output == producer.full_output && !sp;
    const std::int64_t ranks = replicated ? L.t : 1;
    Op op = comm_op(OpKind::p2p, StreamKind::p2p, CommPurpose::pipeline, layer, j, chunk,
                    core::ceil_div(bytes, ranks), 2, inter);
    op.comm.gather_ranks = static_cast<std::int32_t>(ranks);
    return op;
  };

  // Attaches the layer's tensor-parallel collectives to the compute op just emitted.
  auto tp_collectives = [&](std::int32_t op_index, int count, core::Bytes full) {
    Op& op = P.ops[op_index];
    op.tp_collectives = static_cast<std::uint8_t>(count);
    op.tp_sequence_parallel = sp;
    op.comm = CommWork{full * mb, static_cast<std::int32_t>(L.t), tp_inter,
                       static_cast<std::int32_t>(tp_per_node)};
  };

  // Layers whose saved activations full recomputation replaces by one checkpoint per block.
  auto checkpointed = [&](std::int32_t i) {
    const models::Layer& l = L.m.graph[L.m.order[i]];
    if (s.training.recompute != Recompute::full || l.block < 0) return false;
    if (s.training.recompute_layers < 0) return true;
    // Count blocks from the start of this layer's chunk.
    const auto& range = L.chunks[L.chunk_of[i]];
    const int first_block = L.m.graph[L.m.order[range.first]].block;
    const int local = l.block - (first_block < 0 ? l.block : first_block);
    return local < s.training.recompute_layers;
  };
  auto block_of = [&](std::int32_t i) { return L.m.graph[L.m.order[i]].block; };
  auto input_bytes = [&](std::int32_t i) {
    core::Bytes b{};
    for (auto pr : L.producers[i]) b += L.shards[pr].output;
    return b;
  };
  auto is_block_first = [&](std::int32_t i, const LayerRange& r) {
    return i == r.first || block_of(i - 1) != block_of(i);
  };
  auto is_block_last = [&](std::int32_t i, const LayerRange& r) {
    return i + 1 == r.end || block_of(i + 1) != block_of(i);
  };
  auto saved_in_forward = [&](std::int32_t i) {
    const auto& sh = L.shards[i];
    if (checkpointed(i)) return core::Bytes{};
    if (s.training.recompute == Recompute::selective) return sh.saved - sh.saved_core;
    return sh.saved;
  };
  // Full recomputation keeps one input per checkpointed block: the received activation for the
  // first layer of a later pipeline chunk, else the outputs feeding the block.
  auto checkpoint_bytes = [&](std::int32_t i, const LayerRange& r, std::int32_t g) {
    if (i == r.first && g > 0) return L.shards[L.chunks[g - 1].end - 1].output * mb;
    return input_bytes(i) * mb;
  };
  auto zero3_gather_bytes = [&](std::int32_t i) {
    const auto full = core::Bytes{L.shards[i].params} * wb;
    return full - core::ceil_div(full, L.d);
  };

  std::vector<std::int32_t> recent_compute;  // for ZeRO-3 prefetch depth
  // The gather of the layer about to run: its compute op must wait for it (it frees the bytes).
  std::int32_t gather_op = -1;
  auto gather_ref = [&]() { return gather_op >= 0 ? B.ref(gather_op) : OpRef{}; };
  const scenario::OffloadSpec& off = s.training.offload;
  // A bucket reduced in the gradients' own memory, or in a copy kept for the run, books no
  // buffer of its own (scenario::BucketBuffers).
  const bool buckets_kept = s.buckets_kept();
  // What the layer about to run was given (ZeRO-3 gather, parameter fetch); its compute op frees it.
  // The backward's copy is a tensor of its own: it may be gathered (prefetched) before the
  // forward's is freed.
  struct Gathered {
    core::Bytes fetched{}, extra{};
    std::int32_t layer = -1;
    bool backward = false;
  };
  auto zero3_gather = [&](std::int32_t i, std::int32_t j, std::int32_t chunk, bool backward) -> Gathered {
    const TensorKind fetched_kind = backward ? TensorKind::fetched_backward : TensorKind::fetched;
    const TensorKind gathered_kind = backward ? TensorKind::gathered_backward : TensorKind::gathered;
    gather_op = -1;
    const bool fetch = off.parameters_on_cpu();
    if ((zero != 3 && !fetch) || L.shards[i].params == 0) return {};
    OpRef after{};
    if (recent_compute.size() >= 2) after = B.ref(recent_compute[recent_compute.size() - 2]);
    // Parameter offload (ZeRO-Infinity): this rank's shard comes from host memory over PCIe
    // first, then the all-gather assembles the layer; the compute op frees both.
    core::Bytes fetched{};
    if (fetch) {
      fetched = core::Bytes{L.shards[i].params} * wb;
      if (zero == 3) fetched = core::ceil_div(fetched, L.d);
      gather_op = B.emit(pcie_copy_op(OpKind::pcie_h2d, i, j, chunk, fetched),
                         {tensor(MemCategory::weights, fetched, fetched_kind, i)}, {}, {after});
      if (zero != 3) return {fetched, {}, i, backward};
      after = B.ref(gather_op);
    }
    const core::Bytes extra = zero3_gather_bytes(i);
    last_comm = B.emit(comm_op(OpKind::all_gather, StreamKind::comm, CommPurpose::zero, i, j, chunk,
                               core::Bytes{L.shards[i].params} * wb, L.d, dp_inter, dp_per_node),
                       {tensor(MemCategory::weights, extra, gathered_kind, i)}, {}, {after});
    gather_op = last_comm;
    return {fetched, extra, i, backward};
  };
  // Effect lists of the op being built (reused: most ops name a few tensors).
  std::vector<MemEffect> allocs, frees;
  // A data-parallel bucket to reduce once the backward `after` has filled it.
  struct Flush {
    core::Bytes bytes;
    std::int32_t after, layer;
  };
  std::vector<Flush> deferred;  // a ZeRO-2 backward unit's, emitted after its compute ops
  auto free_gathered = [&](const Gathered& w) {
    frees.push_back(tensor(MemCategory::weights, w.fetched,
                           w.backward ? TensorKind::fetched_backward : TensorKind::fetched, w.layer));
    frees.push_back(tensor(MemCategory::weights, w.extra,
                           w.backward ? TensorKind::gathered_backward : TensorKind::gathered, w.layer));
  };

  // Optimizer offload (ZeRO-Offload): each micro-batch's 16-bit gradients are booked at their
  // layer's backward and freed when the PCIe copy that carries them to the host ends (DeepSpeed
  // accumulates on the host, so nothing stays on the GPU between micro-batches). Gradients are
  // reduced every micro-batch; with data parallelism each reduction bucket is copied once
  // reduced (each rank its 1/data share from ZeRO-1 on); alone, per bucket_size of gradients.
  core::Bytes offload_pending{};  // gradient bytes produced and not yet copied
  std::vector<MemEffect> offload_tensors;  // their tensors, freed by the copy
  std::int32_t last_d2h = -1;
  auto offload_grads = [&](std::int32_t i) -> core::Bytes {
    if (!off.optimizer_on_cpu()) return {};
    return core::Bytes{L.shards[i].params} * gb;
  };
  auto offload_flush = [&](std::int32_t after_op, std::int32_t layer, std::int32_t j, std::int32_t chunk) {
    if (!off.optimizer_on_cpu() || offload_pending.value == 0) return;
    const core::Bytes wire = zero >= 1 ? core::ceil_div(offload_pending, L.d) : offload_pending;
    last_d2h = B.emit(pcie_copy_op(OpKind::pcie_d2h, layer, j, chunk, wire), std::span<const MemEffect>{},
                      offload_tensors, {B.ref(after_op)});
    offload_pending = {};
    offload_tensors.clear();
  };
  auto offload_after_backward = [&](std::int32_t i, std::int32_t j, std::int32_t chunk, std::int32_t backward) {
    if (!off.optimizer_on_cpu() || L.shards[i].params == 0) return;
    offload_pending += offload_grads(i);
    offload_tensors.push_back(tensor(MemCategory::gradients, offload_grads(i), TensorKind::offload_grad, i));
    if (L.d == 1 && offload_pending >= s.parallel.bucket_size) offload_flush(backward, i, j, chunk);
  };

  const auto units =
      schedule_stage(s.parallel.schedule, stage, L.p, L.mcount, L.v);
  // Reserve once: a large run has hundreds of thousands of ops, and regrowing the vectors
  // (page faults on fresh memory) used to cost more than building them.
  std::size_t per_unit = 4;
  for (std::int32_t g = stage; g < G; g += L.p) {
    std::size_t n = 0;
    for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i)
      n += 2 + (zero == 3 ? 2 : 0);
    per_unit = std::max(per_unit, n + 4);
  }
  // Compressed, a repeated unit is a transfer and a macro op; a few units per chunk stay expanded
  // (all of them under ZeRO-3 and parameter offload; with optimizer offload the backward units:
  // reserved as if all were, the forward units' share left over).
  const bool units_repeat =
      L.compress && zero != 3 && !off.parameters_on_cpu() && !off.optimizer_on_cpu();
  const std::size_t expanded_units =
      units_repeat ? std::min<std::size_t>(units.size(), 4 * L.v + 4) : units.size();
  P.ops.reserve(expanded_units * per_unit + (units.size() - expanded_units) * 2 + 8);
  P.effects.reserve(expanded_units * per_unit * 2 + 8);
  P.deps.reserve(units.size() * 4 + P.ops.capacity() / 4 + 8);
  // Macro template per (virtual stage, direction) once a repeatable unit was emitted (fast play).
  std::vector<std::int32_t> macro_of(2 * static_cast<std::size_t>(G), -1);
  // Per-micro-batch data-parallel bucket state (flushes on the last backward of each chunk).
  for (const WorkUnit& u : units) {
    const std::int32_t g = u.chunk * L.p + stage;
    const LayerRange r = L.chunks[g];
    const std::int32_t j = u.microbatch;
    const bool first_g = g == 0, last_g = g == G - 1;
    if (u.forward) {
      core::Bytes recv{};
      std::int32_t arrival = -1;  // the p2p op the first layer waits for
      if (!first_g) {
        recv = L.shards[L.chunks[g - 1].end - 1].output * mb;
        const std::int32_t prev_stage = (g - 1) % L.p;
        // The receive buffer is booked by the first layer's forward below, not by the transfer.
        const std::int32_t op = B.emit(
            p2p_op(r.first, j, u.chunk, recv, inter_node_boundary(s, prev_stage, stage), L.shards[L.chunks[g - 1].end - 1]),
            {}, {}, {});
        B.add_dep_pending(op, true, g - 1, j);
        arrival = op;
      }
      const bool repeatable = L.compress && zero != 3;
      std::int32_t& macro = macro_of[2 * g + 1];
      if (repeatable && macro >= 0) {
        L.fwd_end[g * L.mcount + j] = B.ref(B.emit_macro(macro, j, arrival));
        continue;
      }
      const std::size_t unit_first = P.ops.size();
      std::int32_t last = -1;
      for (std::int32_t i = r.first; i < r.end; ++i) {
        const auto& sh = L.shards[i];
        const Gathered gathered = zero3_gather(i, j, u.chunk, false);
        allocs.clear();
        // The stage allocates the buffer for the previous stage's activation when it posts the
        // receive, just before this forward (Megatron-LM's recv_forward): booked where the stage's
        // own program reaches it, whenever the transfer starts.
        if (i == r.first && !first_g) allocs.push_back(activation(recv, TensorKind::received, r.first));
        allocs.push_back(activation(sh.output * mb, TensorKind::output, i));
        allocs.push_back(activation(saved_in_forward(i) * mb, TensorKind::saved, i));
        if (checkpointed(i) && is_block_first(i, r))
          allocs.push_back(activation(checkpoint_bytes(i, r, g), TensorKind::checkpoint, i));
        // Free at the end: outputs whose last consumer is this layer, and the received input.
        frees.clear();
        for (auto pr : L.producers[i])
          if (L.last_consumer[pr] == i && L.chunk_of[pr] == g)
            frees.push_back(activation(L.shards[pr].output * mb, TensorKind::output, pr));
        if (i == r.first) frees.push_back(activation(recv, TensorKind::received, r.first));
        if (i + 1 == r.end) {
          // Outputs still live (consumed in later chunks or nowhere) die with the unit.
          for (std::int32_t k = r.first; k <= i; ++k)
            if (L.last_consumer[k] < 0 || L.last_consumer[k] >= r.end)
              frees.push_back(activation(L.shards[k].output * mb, TensorKind::output, k));
        }
        free_gathered(gathered);
        last = B.emit(shaped(compute_op(OpKind::forward, i, j, u.chunk, sh.flops * mb,
                                        sh.io * mb + core::Bytes{sh.params} * wb, sh.matmul),
                             sh, 1),
                      allocs, frees,
                      {i == r.first && arrival >= 0 ? B.ref(arrival) : OpRef{}, gather_ref()});
        recent_compute.push_back(last);
        if (sh.allreduce_forward > 0) tp_collectives(last, sh.allreduce_forward, sh.full_output);
      }
      if (repeatable) macro = B.make_template(unit_first);
      if (repeatable && macro >= 0) last = B.replace_by_macro(unit_first, macro, j, arrival);
      L.fwd_end[g * L.mcount + j] = B.ref(last);
      continue;
    }

    // Backward unit.
    const bool first_microbatch = ++backward_units_seen[u.chunk] == 1;
    const bool last_microbatch = backward_units_seen[u.chunk] == L.mcount;
    core::Bytes bucket{};
    auto emit_flush = [&](const Flush& f) {
      const OpKind kind = zero == 0 ? OpKind::all_reduce : OpKind::reduce_scatter;
      const MemEffect buffer = tensor(MemCategory::buffers, f.bytes, TensorKind::bucket, f.layer);
      const std::span<const MemEffect> booked(&buffer, buckets_kept ? 0 : 1);
      last_comm = B.emit(comm_op(kind, StreamKind::comm, zero == 0 ? CommPurpose::data : CommPurpose::zero,
                                 f.layer, j, u.chunk, f.bytes, L.d, dp_inter, dp_per_node),
                         booked, booked, {B.ref(f.after)});
      offload_flush(last_comm, f.layer, j, u.chunk);
    };
    // ZeRO-2 reduces every micro-batch's gradients: its reduce-scatters are emitted after the
    // unit's compute ops (each still waits for the backward that filled its bucket; only events
    // of one instant follow the program order), so the unit repeats as a macro op whose template
    // carries them as taps (ProgramBuilder::make_template).
    const bool defer = zero == 2 && !off.optimizer_on_cpu();
    deferred.clear();
    auto flush_bucket = [&](std::int32_t after_op, std::int32_t layer) {
      if (bucket.value == 0 || L.d == 1) return;
      const Flush f{bucket, after_op, layer};
      bucket = {};
      if (defer) deferred.push_back(f);
      else emit_flush(f);
    };
    const bool reduce_now = zero >= 2 || off.optimizer_on_cpu() ? true : last_microbatch;
    std::int32_t arrival = -1;
    if (!last_g) {
      const core::Bytes grad_in = L.shards[r.end - 1].output * mb;
      const std::int32_t next_stage = (g + 1) % L.p;
      const std::int32_t op = B.emit(
          p2p_op(r.end - 1, j, u.chunk, grad_in, inter_node_boundary(s, stage, next_stage), L.shards[r.end - 1]),
          {}, {}, {});
      B.add_dep_pending(op, false, g + 1, j);
      arrival = op;
    }
    const std::int32_t transfer = arrival;
    // The unit's first compute op waits for the gradient to arrive and allocates its buffer, as
    // the stage posts the receive just before its backward (Megatron-LM's recv_backward).
    auto take_arrival = [&](std::vector<MemEffect>& op_allocs) {
      if (arrival < 0) return OpRef{};
      op_allocs.insert(op_allocs.begin(), activation(L.shards[r.end - 1].output * mb, TensorKind::grad, r.end - 1));
      const OpRef ref = B.ref(arrival);
      arrival = -1;
      return ref;
    };
    // The first backward of a chunk allocates its gradients, and under ZeRO 0/1 the last one
    // reduces them on the comm stream: neither repeats. ZeRO-2's units all reduce alike and do,
    // their reduce-scatters as taps. Offloaded gradients leave through a PCIe copy after every
    // backward.
    const bool repeatable = L.compress && zero != 3 && !first_microbatch && (defer || !(reduce_now && L.d > 1)) &&
                            !off.optimizer_on_cpu();
    std::int32_t& macro = macro_of[2 * g];
    if (repeatable && macro >= 0) {
      const std::int32_t at = B.emit_macro(macro, j, transfer);
      if (const std::int32_t tap = B.emit_taps(macro, at, j); tap >= 0) last_comm = tap;
      L.bwd_end[g * L.mcount + j] = B.ref(at);
      continue;
    }
    const std::size_t unit_first = P.ops.size();
    std::int32_t last = -1;
    for (std::int32_t i = r.end - 1; i >= r.first; --i) {
      const auto& sh = L.shards[i];
      // Replays before the backward that needs them.
      if (checkpointed(i) && is_block_last(i, r)) {
        double flops = 0;
        core::Bytes bytes{};
        allocs.clear();
        std::int32_t first = i;
        while (first > r.first && block_of(first - 1) == block_of(i)) --first;
        std::int32_t gemms = 0, collectives = 0;
        core::Bytes collective_bytes{};
        for (std::int32_t k = first; k <= i; ++k) {
          const auto& sk = L.shards[k];
          flops += sk.flops * mb;
          bytes += sk.io * mb;
          allocs.push_back(activation(sk.saved * mb, TensorKind::saved, k));
          gemms += sk.matmul ? kernel_shape(sk.kind).gemms : 0;
          collectives += sk.allreduce_forward;
          if (sk.allreduce_forward > 0) collective_bytes = sk.full_output;
        }
        // The replayed forward runs the block's kernels and its tensor-parallel collectives.
        Op op = compute_op(OpKind::recompute, i, j, u.chunk, flops, bytes, true);
        op.model_flops = false;
        op.kernels = std::max(1, gemms);
        op.work.serial_memory = true;
        const OpRef received = take_arrival(allocs);
        const std::int32_t rec = B.emit(op, allocs, std::span<const MemEffect>{}, {received});
        if (collectives > 0) tp_collectives(rec, collectives, collective_bytes);
      }
      if (s.training.recompute == Recompute::selective && sh.saved_core.value > 0) {
        Op op = compute_op(OpKind::recompute, i, j, u.chunk, sh.core_flops * mb,
                           sh.saved_core * mb, true);
        op.model_flops = false;
        allocs.assign({activation(sh.saved_core * mb, TensorKind::core, i)});
        const OpRef received = take_arrival(allocs);
        B.emit(op, allocs, std::span<const MemEffect>{}, {received});
      }
      const Gathered gathered = zero3_gather(i, j, u.chunk, true);
      allocs.clear();
      if (i + 1 == nlayers) allocs.push_back(activation(sh.output * mb, TensorKind::grad, i));  // loss gradient seeds backward
      for (auto pr : L.producers[i])
        if (L.last_consumer[pr] == i && L.chunk_of[pr] == g)
          allocs.push_back(activation(L.shards[pr].output * mb, TensorKind::grad, pr));
      core::Bytes input_grad{};
      if (i == r.first && !first_g) input_grad = L.shards[L.chunks[g - 1].end - 1].output * mb;
      allocs.push_back(activation(input_grad, TensorKind::input_grad, i));
      // Saved tensors: selective recomputation re-created the core apart from the rest.
      frees.clear();
      const core::Bytes core_bytes = s.training.recompute == Recompute::selective ? sh.saved_core * mb : core::Bytes{};
      frees.push_back(activation(sh.saved * mb - core_bytes, TensorKind::saved, i));
      frees.push_back(activation(core_bytes, TensorKind::core, i));
      frees.push_back(activation(input_grad, TensorKind::input_grad, i));
      const bool has_grad_out = i + 1 == nlayers ||
                                i + 1 == r.end ||
                                (L.last_consumer[i] >= 0 && L.last_consumer[i] < r.end);
      if (has_grad_out) frees.push_back(activation(sh.output * mb, TensorKind::grad, i));
      if (checkpointed(i) && is_block_first(i, r))
        frees.push_back(activation(checkpoint_bytes(i, r, g), TensorKind::checkpoint, i));
      free_gathered(gathered);
      if (off.optimizer_on_cpu()) {
        allocs.push_back(tensor(MemCategory::gradients, offload_grads(i), TensorKind::offload_grad, i));
      } else if (!grads_allocated[i] && sh.params > 0) {
        grads_allocated[i] = 1;
        core::Bytes new_grads = core::Bytes{sh.params} * gb;
        if (zero >= 2) new_grads = core::ceil_div(new_grads, L.d);
        MemEffect held = tensor(MemCategory::gradients, new_grads, TensorKind::param_grad, i);
        held.per_microbatch = false;
        allocs.push_back(held);
        param_grads.push_back(held);
      }
      const OpRef received = take_arrival(allocs);
      last = B.emit(shaped(compute_op(OpKind::backward, i, j, u.chunk, sh.flops * sh.backward_factor * mb,
                                      sh.io * mb * 2 + core::Bytes{sh.params} * (wb + gb), sh.matmul),
                           sh, 2),
                    allocs, frees, {received, gather_ref()});
      recent_compute.push_back(last);
      if (sh.allreduce_backward > 0) tp_collectives(last, sh.allreduce_backward, sh.full_output);
      offload_after_backward(i, j, u.chunk, last);
      if (reduce_now && sh.params > 0 && L.d > 1) {
        bucket += core::Bytes{sh.params} * gb;
        if (bucket >= s.parallel.bucket_size || zero == 3) flush_bucket(last, i);
      }
    }
    if (reduce_now) flush_bucket(last, r.first);
    for (const Flush& f : deferred) emit_flush(f);
    offload_flush(last, r.first, j, u.chunk);
    if (repeatable) macro = B.make_template(unit_first);
    // A one-off unit of compute ops (and taps) — the first backward, which allocates the
    // gradients — still plays as one macro op over its own template.
    const std::int32_t own = repeatable ? macro : L.compress ? B.make_template(unit_first) : -1;
    if (own >= 0) {
      std::int32_t tap = -1;
      last = B.replace_by_macro(unit_first, own, j, transfer, &tap);
      if (tap >= 0) last_comm = tap;
    }
    L.bwd_end[g * L.mcount + j] = B.ref(last);
  }

  // Optimizer step over this device's shard, after every gradient reduction.
  std::int64_t opt_params = 0;
  for (std::int32_t g = stage; g < G; g += L.p)
    for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) opt_params += L.shards[i].params;
  if (zero >= 1) opt_params = (opt_params + L.d - 1) / L.d;
  std::int32_t opt_index = -1;  // after it, this rank's updated weights are on the GPU
  if (off.optimizer_on_cpu()) {
    // ZeRO-Offload: the CPU updates this rank's shard once every gradient is on the host, then
    // the updated 16-bit weights go back over PCIe (parameter offload leaves them on the host).
    const std::int32_t cpu = B.emit(cpu_optimizer_op(cpu_optimizer_traffic(s, opt_params)),
                                    std::span<const MemEffect>{}, param_grads,
                                    {last_d2h >= 0 ? B.ref(last_d2h) : OpRef{},
                                     last_comm >= 0 ? B.ref(last_comm) : OpRef{}});
    opt_index = cpu;
    if (!off.parameters_on_cpu())
      opt_index = B.emit(pcie_copy_op(OpKind::pcie_h2d, -1, -1, 0, core::Bytes{opt_params} * wb), {}, {},
                         {B.ref(cpu)});
  } else {
    const std::int64_t weight_rw = L.sb.weights == 4 ? 8 : 2;  // fp32 updates in place; mixed writes a 16-bit copy
    const core::Bytes traffic =
        core::Bytes{opt_params} * (L.sb.gradients + 2 * L.sb.optimizer_states + weight_rw);
    Op opt = compute_op(OpKind::optimizer, -1, -1, 0, 0, traffic, false);
    opt.model_flops = false;
    opt_index = B.emit(opt, std::span<const MemEffect>{}, param_grads,
                       {last_comm >= 0 ? B.ref(last_comm) : OpRef{}});
  }
  if (zero == 1 || zero == 2) {
    core::Bytes params_bytes{};
    for (std::int32_t g = stage; g < G; g += L.p)
      for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i)
        params_bytes += core::Bytes{L.shards[i].params} * wb;
    B.emit(comm_op(OpKind::all_gather, StreamKind::comm, CommPurpose::zero, -1, -1, 0, params_bytes,
                   L.d, dp_inter, dp_per_node),
           {}, {}, {B.ref(opt_index)});
  }
}

}  // namespace

Plan lower(const scenario::Scenario& s, const LowerOptions& options) {
  check_work(s, options);  // before anything is reserved (sim/parallel/work_estimate.hpp)
  Lowering L(s);
  L.compress = options.compress;
  const auto& m = s.model;
  L.p = static_cast<int>(s.parallel.pipeline);
  L.v = s.parallel.schedule == scenario::Schedule::interleaved ? static_cast<int>(s.parallel.virtual_stages) : 1;
  L.t = s.parallel.tensor;
  L.d = s.parallel.data;
  L.mb = s.training.micro_batch;
  L.mcount = static_cast<int>(s.training.gradient_accumulation);
  L.sb = scenario::state_bytes_per_param(s.training.precision, s.training.optimizer);
  L.shards = shard_layers(m, L.t, s.parallel.sequence_parallel && L.t > 1);
  const int G = L.p * L.v;
  L.chunks = partition_layers(m, L.shards, G, s.parallel.split_points);

  const auto n = static_cast<std::int32_t>(m.order.size());
  std::vector<std::int32_t> pos(boost::num_vertices(m.graph), -1);
  for (std::int32_t i = 0; i < n; ++i) pos[m.order[i]] = i;
  L.producers.assign(n, {});
  L.last_consumer.assign(n, -1);
  L.chunk_of.assign(n, 0);
  for (int g = 0; g < G; ++g)
    for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) L.chunk_of[i] = g;
  for (std::int32_t i = 0; i < n; ++i) {
    for (auto [e, end] = boost::in_edges(m.order[i], m.graph); e != end; ++e)
      L.producers[i].push_back(pos[boost::source(*e, m.graph)]);
    for (auto [e, end] = boost::out_edges(m.order[i], m.graph); e != end; ++e)
      L.last_consumer[i] = std::max(L.last_consumer[i], pos[boost::target(*e, m.graph)]);
  }
  L.fwd_end.assign(static_cast<std::size_t>(G) * L.mcount, OpRef{});
  L.pending.reserve(static_cast<std::size_t>(G) * L.mcount * 2);
  L.bwd_end.assign(static_cast<std::size_t>(G) * L.mcount, OpRef{});

  Plan plan;
  plan.devices_total = s.parallel.devices();
  plan.microbatches = L.mcount;
  plan.samples = s.training.global_batch;
  plan.tokens = m.sequence_model ? core::checked_mul(plan.samples, s.training.seq_len) : 0;
  plan.intra_node = s.cluster.intra_node;
  plan.inter_node = s.cluster.inter_node;
  plan.data_allreduce = s.parallel.allreduce;
  plan.math = s.training.precision == scenario::Precision::fp32 ? cost::MathMode::fp32 : cost::MathMode::half;
  plan.compressed = options.compress;
  plan.caching_allocator = s.training.caching_allocator;
  plan.steady_state = s.parallel.schedule != scenario::Schedule::gpipe;
  const int zero = L.d > 1 ? s.parallel.zero : 0;
  plan.programs.resize(L.p);
  for (int stage = 0; stage < L.p; ++stage) {
    Program& P = plan.programs[stage];
    P.stage = stage;
    P.count = L.d * L.t;
    P.device = s.stage_device(stage);
    P.first_layer = L.chunks[stage].first;
    P.last_layer = L.chunks[stage].end - 1;
    std::int64_t params = 0;
    for (int g = stage; g < G; g += L.p)
      for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) params += L.shards[i].params;
    const core::Bytes w = core::Bytes{params} * L.sb.weights;
    const core::Bytes gr = core::Bytes{params} * L.sb.gradients;
    const core::Bytes o = core::Bytes{params} * L.sb.optimizer_states;
    P.parameters = zero == 3 ? (params + L.d - 1) / L.d : params;
    P.persistent[MemCategory::reserved] = P.device.reserved;
    P.persistent[MemCategory::weights] = zero == 3 ? core::ceil_div(w, L.d) : w;
    P.persistent[MemCategory::optimizer_states] = zero >= 1 ? core::ceil_div(o, L.d) : o;
    P.model_states = P.persistent;
    P.model_states[MemCategory::gradients] = zero >= 2 ? core::ceil_div(gr, L.d) : gr;
    if (s.ddp_gradient_copy()) {
      // PyTorch DDP's buckets: a second copy of the gradients, allocated when the model is wrapped.
      P.persistent[MemCategory::gradients] = gr;
      P.model_states[MemCategory::gradients] += gr;
    }
    P.host = host_states(s, params, zero, L.d);
    remove_offloaded_states(s.training.offload, P.persistent, P.model_states);
    build_stage(L, P, stage);
    L.held_before += P.held_ops();
  }
  plan.pcie = s.cluster.pcie;
  plan.host_bandwidth_per_gpu = host_bandwidth_per_gpu(s);
  plan.host_capacity = s.cluster.host_memory;
  const NodeHostDemand host = host_per_node(plan.programs, rank_stride(s, scenario::ParallelDim::pipeline),
                                            s.cluster.gpus_per_node, plan.devices_total);
  plan.host_per_node = host.fullest;
  plan.host_stage = host.stage;
  for (const auto& pd : L.pending) {
    const OpRef target = (pd.forward ? L.fwd_end : L.bwd_end)[pd.g * L.mcount + pd.j];
    TRAINSIM_CHECK(target.index >= 0, "pipeline dependency on an op that was never emitted");
    plan.programs[pd.program].deps[pd.dep_slot] = target;
  }

  // FLOPs of the whole job for one step (MFU counts model work; HFU adds recomputation).
  double per_sample = 0, recompute_per_sample = 0;
  for (std::int32_t i = 0; i < n; ++i) {
    const models::Layer& l = m.graph[m.order[i]];
    per_sample += l.flops * (1 + l.backward_factor);
  }
  for (const auto& P : plan.programs) {
    // Each macro template's replayed FLOPs, summed once.
    std::vector<double> template_recompute(P.macros.size(), 0.0);
    for (std::size_t t = 0; t < P.macros.size(); ++t)
      for (auto k = P.macros[t].begin; k < P.macros[t].end; ++k)
        if (P.macro_ops[k].kind == OpKind::recompute) template_recompute[t] += P.macro_ops[k].work.flops;
    for (const auto& op : P.ops) {
      if (op.kind == OpKind::recompute) recompute_per_sample += op.work.flops * static_cast<double>(P.count);
      if (op.macro >= 0) recompute_per_sample += template_recompute[op.macro] * static_cast<double>(P.count);
    }
  }
  plan.model_flops = per_sample * static_cast<double>(plan.samples);
  // Recompute ops were counted per micro-batch on one pipeline; scale to every data replica.
  plan.hardware_flops = plan.model_flops + recompute_per_sample;
  return plan;
}

}  // namespace trainsim::parallel
