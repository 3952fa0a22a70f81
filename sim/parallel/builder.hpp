#pragma once
// Building one Program: ops appended with their memory effects and dependencies, and fast play's
// macro templates (docs/architecture.md, "Fast play"). The stage walk and its passes emit
// through it; ops and effects are plain data (program.hpp).
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>

#include "sim/parallel/program.hpp"
#include "sim/parallel/shard.hpp"

namespace trainsim::parallel {

struct LowerContext;

class ProgramBuilder {
 public:
  ProgramBuilder(const LowerContext& L, Program& P, std::int32_t program)
      : L_(L), P_(P), index_(program), room_(room_for(L)) {}

  // Appends `op` with its allocations (booked when it starts), frees (when it ends) and
  // dependencies; zero-byte effects and empty references (index -1) are left out. Returns its
  // index. Throws core::ConfigError once the plan holds more than limits.max_ops ops.
  std::int32_t emit(Op op, std::initializer_list<MemEffect> allocs,
                    std::initializer_list<MemEffect> frees, std::initializer_list<OpRef> deps) {
    return emit(op, std::span(allocs.begin(), allocs.size()),
                std::span(frees.begin(), frees.size()), deps);
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
    check_size(op.microbatch);
    return static_cast<std::int32_t>(P_.ops.size() - 1);
  }
  // Appends a dependency of op `op_index`, just emitted, on an op of a program not built yet;
  // returns its slot in Program::deps for the caller to fill once that op exists.
  std::uint32_t add_open_dep(std::int32_t op_index);
  OpRef ref(std::int32_t i) const { return OpRef{index_, i}; }
  // Copies ops [first, ops.size()) — a unit's compute ops, back to back, only the first with
  // dependencies, then communication ops each waiting for one of those compute ops alone (the
  // taps: ZeRO-2's reduce-scatters, emitted after the unit's compute ops) — into a new macro
  // template and returns its index; -1 when the unit has other work (transfers, ops waiting for
  // anything else) and cannot be one.
  std::int32_t make_template(std::size_t first);
  // The taps of template `macro` after its macro op `at` (just emitted) for micro-batch
  // `microbatch`, each booking its template's effects; a tap on the template's last op simply
  // waits for the macro op. Returns the last one's index (-1: none).
  std::int32_t emit_taps(std::int32_t macro, std::int32_t at, std::int32_t microbatch);
  // One macro op replaying template `macro` for `microbatch`. When its input arrives by the p2p
  // op `transfer` (>= 0), just emitted, the transfer is folded into it (Op::arrival): the macro
  // op takes the transfer's place and its dependency.
  std::int32_t emit_macro(std::int32_t macro, std::int32_t microbatch, std::int32_t transfer);
  // The unit just emitted at [first, ops.size()) made template `macro`: it is replaced by a macro
  // op replaying it, like every later copy; its taps follow it (emit_taps: the last one's
  // index, -1 when none, in `last_tap`).
  std::int32_t replace_by_macro(std::size_t first, std::int32_t macro, std::int32_t microbatch,
                                std::int32_t transfer, std::int32_t* last_tap = nullptr);
  Program& program() { return P_; }
  // Whether `more` ops can be appended without passing limits.max_ops (emit would throw).
  bool fits(std::size_t more) const {
    return P_.held_ops() + static_cast<std::int64_t>(more) <= room_;
  }

 private:
  // The ops this program may hold under limits.max_ops besides those of the programs built
  // before it (LowerContext::check_size, which refuse calls to throw).
  static std::int64_t room_for(const LowerContext& L);
  void check_size(std::int32_t microbatch) const {
    if (P_.held_ops() > room_) refuse(microbatch);
  }
  void refuse(std::int32_t microbatch) const;

  const LowerContext& L_;
  Program& P_;
  std::int32_t index_;
  std::int64_t room_;
};

// Op and effect constructors, inline: lowering calls them for every op.

// One tensor's memory effect (per micro-batch).
inline MemEffect tensor(hw::MemCategory cat, core::Bytes bytes, TensorKind kind,
                        std::int32_t layer) {
  return MemEffect{cat, bytes, kind, layer, true};
}
inline MemEffect activation(core::Bytes bytes, TensorKind kind, std::int32_t layer) {
  return tensor(hw::MemCategory::activations, bytes, kind, layer);
}

// A compute-stream op of `flops` and `bytes` for one layer (-1: none) and micro-batch (-1: none).
inline Op compute_op(OpKind kind, std::int32_t layer, std::int32_t microbatch, std::int32_t chunk,
                     double flops, core::Bytes bytes, bool matmul) {
  Op op;
  op.kind = kind;
  op.stream = StreamKind::compute;
  op.layer = layer;
  op.microbatch = microbatch;
  op.chunk = chunk;
  op.work = cost::KernelWork{flops, bytes, matmul};
  return op;
}

// GEMM kernels in one layer's forward (its backward runs twice as many: input and weight
// gradients), whether element-wise kernels sit between them, and every kernel the host
// launches for the layer's forward and for its backward (GEMMs included; tensor-parallel
// collectives not), counted from Megatron-LM's eager layer (docs/devices.md, "Host dispatch").
struct KernelShape {
  std::int32_t gemms = 1;
  bool serial_memory = false;
  std::int32_t forward_launches = 1;
  std::int32_t backward_launches = 2;
};
inline KernelShape kernel_shape(models::LayerKind k) {
  switch (k) {
    case models::LayerKind::attention:
      // QKV, QK^T, attn x V, projection. Forward 8: QKV GEMM and its bias, baddbmm, fused
      // scale-mask-softmax, dropout, bmm, the context's permute-contiguous copy, projection.
      // Backward 17: 8 GEMMs, QKV bias gradient, softmax, dropout and copy backward, the
      // q/k/v split's gradient, and 4 gradient accumulations (weights and biases).
      return {4, true, 8, 17};
    case models::LayerKind::mlp:
      // up (and gate) and down around the activation. Forward 3: two GEMMs, fused bias-GeLU.
      // Backward 10: 4 GEMMs, bias-GeLU backward, the up bias gradient, 4 accumulations.
      return {2, true, 3, 10};
    case models::LayerKind::layernorm:
    case models::LayerKind::rmsnorm:
      // Fused norm: 1 kernel; backward: input gradient and two passes for the weight
      // gradients, and 2 accumulations.
      return {1, false, 1, 5};
    case models::LayerKind::add:
      // Megatron's fused bias-dropout-add: 2 kernels; backward: dropout mask, bias gradient
      // and the residual branch's gradient sum.
      return {1, false, 2, 3};
    case models::LayerKind::embedding:
      // Word lookup, position lookup, add, dropout; backward: two embedding backwards (sort,
      // segment sums: 4 kernels each) and the dropout's.
      return {1, false, 4, 9};
    case models::LayerKind::loss:
      // LM-head GEMM, then the vocabulary-parallel cross entropy (max, subtract, target
      // gather and mask, exp, sum, log, mean: 8); backward: softmax minus one-hot (3 kernels)
      // and the head's two GEMMs and accumulation.
      return {1, false, 9, 6};
    default:
      return {1, false, 1, 2};
  }
}

// A layer's kernels: GEMM count (doubled in backward: `gemm_multiplier`), element-wise work
// between them, and the kernels the host launches.
inline Op shaped(Op op, const LayerShard& sh, int gemm_multiplier) {
  const KernelShape k = kernel_shape(sh.kind);
  op.kernels = sh.matmul ? k.gemms * gemm_multiplier : 1;
  op.work.serial_memory = k.serial_memory;
  op.work.launches = gemm_multiplier == 1 ? k.forward_launches : k.backward_launches;
  return op;
}

// A collective or transfer of `bytes` per rank over `ranks` ranks.
inline Op comm_op(OpKind kind, StreamKind stream, CommPurpose purpose, std::int32_t layer,
                  std::int32_t microbatch, std::int32_t chunk, core::Bytes bytes,
                  std::int64_t ranks, bool inter, std::int64_t ranks_per_node = 1,
                  std::int64_t pod_members = 0) {
  Op op;
  op.kind = kind;
  op.stream = stream;
  op.purpose = purpose;
  op.layer = layer;
  op.microbatch = microbatch;
  op.chunk = chunk;
  op.comm = CommWork{bytes, static_cast<std::int32_t>(ranks), inter,
                     static_cast<std::int32_t>(ranks_per_node), 1,
                     static_cast<std::int32_t>(pod_members)};
  op.model_flops = false;
  return op;
}

}  // namespace trainsim::parallel
