#pragma once
// The order constraints of a Plan as one graph over all ops: each op waits for the op before it
// on its stream (compute and collective communication run in order; p2p transfers do not) and
// for its explicit dependencies (a tap, for a point inside a macro op). Ops are numbered
// globally: program p's op i is offset[p] + i.
// The player plays it; the memory-series writer replays it to reproduce the player's order.
#include <cstdint>
#include <vector>

#include "sim/parallel/program.hpp"

namespace trainsim::exec {

struct DependencyGraph {
  std::vector<std::uint32_t> offset;      // first global id of each program; back() = total
  std::vector<std::int32_t> program_of;   // global id -> program
  std::vector<std::uint32_t> waiting;     // predecessors of each op
  std::vector<std::uint32_t> succ_begin;  // CSR: successors of id are succ[succ_begin[id] ..
  std::vector<std::uint32_t> succ;        //       succ_begin[id + 1]), in plan order
  // Ops waiting for a point inside a macro op (Op::tap), not among its successors: those of
  // macro op id are taps[tap_begin[id] .. tap_begin[id + 1]), in plan order, each released when
  // op `after` of the macro's template ends. tap_begin is empty when the plan has none.
  struct Tap {
    std::uint32_t op;
    std::int32_t after;
  };
  std::vector<std::uint32_t> tap_begin;
  std::vector<Tap> taps;
  std::uint32_t total() const { return offset.back(); }
};

// Throws core::InternalError when a dependency names an op that does not exist.
DependencyGraph build_dependency_graph(const parallel::Plan& plan);

}  // namespace trainsim::exec
