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
      : L_(L), P_(P), index_(program) {}

  // Appends `op` with its allocations (booked when it starts), frees (when it ends) and
  // dependencies; zero-byte effects and empty references (index -1) are left out. Returns its
  // index. Throws core::ConfigError once the plan holds more than limits.max_ops ops.
  std::int32_t emit(Op op, std::initializer_list<MemEffect> allocs,
                    std::initializer_list<MemEffect> frees, std::initializer_list<OpRef> deps) {
    return emit(op, std::span(allocs.begin(), allocs.size()),
                std::span(frees.begin(), frees.size()), deps);
  }
  std::int32_t emit(Op op, std::span<const MemEffect> allocs, std::span<const MemEffect> frees,
                    std::initializer_list<OpRef> deps);
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

 private:
  const LowerContext& L_;
  Program& P_;
  std::int32_t index_;
};

// One tensor's memory effect (per micro-batch).
MemEffect tensor(hw::MemCategory cat, core::Bytes bytes, TensorKind kind, std::int32_t layer);
MemEffect activation(core::Bytes bytes, TensorKind kind, std::int32_t layer);

// A compute-stream op of `flops` and `bytes` for one layer (-1: none) and micro-batch (-1: none).
Op compute_op(OpKind kind, std::int32_t layer, std::int32_t microbatch, std::int32_t chunk,
              double flops, core::Bytes bytes, bool matmul);
// A layer's kernels: GEMM count (forward; doubled in backward: `gemm_multiplier`) and whether
// element-wise kernels sit between them.
Op shaped(Op op, const LayerShard& sh, int gemm_multiplier);
// GEMM kernels in one layer's forward.
std::int32_t forward_gemms(models::LayerKind k);
// A collective or transfer of `bytes` per rank over `ranks` ranks.
Op comm_op(OpKind kind, StreamKind stream, CommPurpose purpose, std::int32_t layer,
           std::int32_t microbatch, std::int32_t chunk, core::Bytes bytes, std::int64_t ranks,
           bool inter, std::int64_t ranks_per_node = 1);

}  // namespace trainsim::parallel
