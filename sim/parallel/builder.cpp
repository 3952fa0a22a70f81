#include "sim/parallel/builder.hpp"

#include "sim/core/error.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

std::int64_t ProgramBuilder::room_for(const LowerContext& L) {
  return L.s.limits.max_ops - L.held_before;
}

void ProgramBuilder::refuse(std::int32_t microbatch) const { L_.check_size(P_, microbatch); }

std::uint32_t ProgramBuilder::add_open_dep(std::int32_t op_index) {
  Op& op = P_.ops[op_index];
  TRAINSIM_CHECK(op.dep_end == P_.deps.size(), "an open dependency must be added right after emit");
  const auto slot = static_cast<std::uint32_t>(P_.deps.size());
  P_.deps.push_back(OpRef{});
  op.dep_end = static_cast<std::uint32_t>(P_.deps.size());
  return slot;
}

std::int32_t ProgramBuilder::make_template(std::size_t first) {
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
    if (d.program != index_ || d.index < static_cast<std::int32_t>(first) ||
        d.index >= static_cast<std::int32_t>(k))
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

std::int32_t ProgramBuilder::emit_taps(std::int32_t macro, std::int32_t at,
                                       std::int32_t microbatch) {
  const MacroTemplate& t = P_.macros[static_cast<std::size_t>(macro)];
  const auto last_op = static_cast<std::int32_t>(t.end - t.begin) - 1;
  std::int32_t last = -1;
  for (auto i = t.taps_begin; i < t.taps_end; ++i) {
    Op op = P_.macro_taps[i];
    op.microbatch = microbatch;
    if (op.tap == last_op) op.tap = -1;
    op.dep_begin = static_cast<std::uint32_t>(P_.deps.size());
    P_.deps.push_back(OpRef{index_, at});
    op.dep_end = static_cast<std::uint32_t>(P_.deps.size());
    P_.ops.push_back(op);
    check_size(op.microbatch);
    last = static_cast<std::int32_t>(P_.ops.size() - 1);
  }
  return last;
}

std::int32_t ProgramBuilder::emit_macro(std::int32_t macro, std::int32_t microbatch,
                                        std::int32_t transfer) {
  Op op = P_.macro_ops[P_.macros[macro].begin];
  op.kind = op.kind == OpKind::recompute ? OpKind::backward : op.kind;
  op.microbatch = microbatch;
  op.macro = macro;
  op.tp_collectives = 0;
  op.tp_sequence_parallel = false;
  op.tp_overlap = TpOverlap::none;
  if (transfer < 0) return emit(op, {}, {}, {});
  TRAINSIM_CHECK(
      transfer + 1 == static_cast<std::int32_t>(P_.ops.size()) && P_.ops.back().kind == OpKind::p2p,
      "a folded transfer must be the op just emitted");
  const Op& p2p = P_.ops.back();
  TRAINSIM_CHECK(p2p.alloc_begin == p2p.free_end,
                 "a folded transfer books no memory (its receiver does)");
  op.arrival = true;
  op.comm = p2p.comm;
  op.alloc_begin = op.alloc_end = op.free_begin = op.free_end = p2p.alloc_begin;
  op.dep_begin = p2p.dep_begin;
  op.dep_end = p2p.dep_end;
  P_.ops.back() = op;
  return transfer;
}

std::int32_t ProgramBuilder::replace_by_macro(std::size_t first, std::int32_t macro,
                                              std::int32_t microbatch, std::int32_t transfer,
                                              std::int32_t* last_tap) {
  P_.ops.resize(first);
  const std::int32_t at = emit_macro(macro, microbatch, transfer);
  const std::int32_t tap = emit_taps(macro, at, microbatch);
  if (last_tap) *last_tap = tap;
  return at;
}

}  // namespace trainsim::parallel
