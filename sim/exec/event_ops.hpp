#pragma once
// What the event loop reads of an op when it starts or ends it (Player::start, Player::finish,
// Player::start_macro): whether it is a macro op (which template, whether its transfer is folded
// in) and, for any other op, the effect ranges it books and releases. 16 bytes per op, made with
// the play layout (PlayLayout::event_ops, sim/exec/layout.cpp) and shared by every play of the
// plan, so that an event does not bring the op's 128 bytes in from Program::ops — a ZeRO-3 plan
// of GPT-3 175B holds 376,336 ops, about 48 MB, and its events reach them in no order the
// cache keeps (docs/performance.md, twenty-fourth pass).
//
// The plain path reads the Op itself (EventOp::of on Program::ops at each event) and is the
// oracle: tests/exec/event_ops_test.cpp plays plans both ways and compares the reports byte for
// byte. The switch is per thread (ReadEventOps), not a PlayOptions field, so that switching does
// not recompile every file that includes sim/exec/player.hpp.
#include <cstdint>

#include "sim/parallel/program.hpp"

namespace trainsim::exec {

struct EventOp {
  // A plain op: [alloc_begin, alloc_end) and [free_begin, free_end) of Program::effects, as in
  // the Op. A macro op's own ranges are empty (its template's ops carry its effects), so its
  // record says what else it needs there: alloc_begin is kMacro, alloc_end its template
  // (Op::macro), free_begin 1 when its transfer is folded in (Op::arrival), else 0.
  static constexpr std::uint32_t kMacro = ~std::uint32_t{0};
  std::uint32_t alloc_begin = 0, alloc_end = 0, free_begin = 0, free_end = 0;

  bool is_macro() const { return alloc_begin == kMacro; }
  std::int32_t macro() const { return is_macro() ? static_cast<std::int32_t>(alloc_end) : -1; }
  bool arrival() const { return is_macro() && free_begin != 0; }

  // A program's effects number fewer than kMacro (make_layout checks), so no plain op's
  // alloc_begin is kMacro.
  static EventOp of(const parallel::Op& op) {
    if (op.macro >= 0)
      return {kMacro, static_cast<std::uint32_t>(op.macro), op.arrival ? 1u : 0u, 0};
    return {op.alloc_begin, op.alloc_end, op.free_begin, op.free_end};
  }
};
static_assert(sizeof(EventOp) == 16, "four records to a cache line");

// Whether plays on this thread read EventOp records from the play layout (true, the default)
// or each op from the plan (false: the plain path, the tests' oracle). Reports are the same.
bool read_event_ops();
// Sets it for this thread while in scope.
class ReadEventOps {
 public:
  explicit ReadEventOps(bool on);
  ~ReadEventOps();
  ReadEventOps(const ReadEventOps&) = delete;
  ReadEventOps& operator=(const ReadEventOps&) = delete;

 private:
  bool before_;
};

}  // namespace trainsim::exec
