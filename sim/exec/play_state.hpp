#pragma once
// The player's data (sim/exec/player.cpp and the files beside it): the loop's state as one value
// (PlayState), which a snapshot copies and a resume assigns, and what a play keeps beside it —
// the macro templates' profiles, the plan's op numbering and duration classes, the steady-state
// marks and the snapshots a plan digest keeps for the plan's next plays.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/exec/event_ops.hpp"
#include "sim/exec/period_detector.hpp"
#include "sim/exec/player.hpp"
#include "sim/exec/timeline.hpp"

namespace trainsim::exec {

constexpr std::uint32_t kNone = ~std::uint32_t{0};
// An event whose payload has this bit releases the op in the other bits from a tap (Op::tap)
// instead of ending an op.
constexpr std::uint32_t kTapEvent = std::uint32_t{1} << 31;

// A macro template costed and measured once per play: when each of its ops starts, how much of
// it the kernels (not the tensor-parallel collectives) occupy, and the memory after each op's
// allocations, so a macro op books its whole run with one peak candidate.
struct MacroProfile {
  std::vector<core::Duration> offset;         // start of op k from the macro's start [K]
  std::vector<core::Duration> kernel;         // kernel time of op k [K]
  std::vector<core::Duration> kernel_before;  // kernel time of ops < k [K + 1]
  core::Duration total{}, tp{};
  // Point 0 is the macro's start, point k (1..K) follows op k-1's allocations; memory relative
  // to point 0. `net` follows the last op's releases.
  std::vector<hw::MemBreakdown> level;
  std::vector<core::Bytes> level_total;
  hw::MemBreakdown net;
  // Sparse table of the earliest highest point: row l (entries [l * n, l * n + n - 2^l]) holds
  // the answer for [j, j + 2^l). One buffer, so a template costs one allocation, not one per row.
  std::vector<std::uint32_t> highest;

  std::uint32_t ops() const { return static_cast<std::uint32_t>(offset.size()); }

  void build_highest() {
    const auto n = static_cast<std::uint32_t>(level_total.size());
    const auto rows = static_cast<std::uint32_t>(std::bit_width(n));
    highest.assign(static_cast<std::size_t>(rows) * n, 0);
    for (std::uint32_t j = 0; j < n; ++j) highest[j] = j;
    std::uint32_t l = 1;
    for (std::uint32_t w = 1; 2 * w <= n; w *= 2, ++l) {
      const std::uint32_t* prev = &highest[static_cast<std::size_t>(l - 1) * n];
      std::uint32_t* row = &highest[static_cast<std::size_t>(l) * n];
      for (std::uint32_t j = 0; j + 2 * w <= n; ++j) row[j] = better(prev[j], prev[j + w]);
    }
  }
  std::uint32_t better(std::uint32_t a, std::uint32_t b) const {
    if (level_total[a] != level_total[b]) return level_total[a] > level_total[b] ? a : b;
    return std::min(a, b);
  }
  // The earliest highest point in [a, b].
  std::uint32_t highest_in(std::uint32_t a, std::uint32_t b) const {
    const auto l = static_cast<std::uint32_t>(std::bit_width(b - a + 1) - 1);
    const std::size_t row = static_cast<std::size_t>(l) * level_total.size();
    return better(highest[row + a], highest[row + b - (1u << l) + 1]);
  }
  // Kernel time within [0, x) of the macro's span.
  core::Duration kernel_within(core::Duration x) const {
    if (x.ns <= 0) return {};
    const auto it = std::upper_bound(offset.begin(), offset.end(), x) - 1;
    const auto k = static_cast<std::size_t>(it - offset.begin());
    return kernel_before[k] + std::min(x - offset[k], kernel[k]);
  }
};

// What a PlanDigest keeps of a play's costing: the macro templates' profiles per program, and
// what they depend on — each program's device speeds, the precision's math mode and the links
// (the intra-node link prices tensor-parallel collectives within a node; the inter-node link
// those that span nodes; the inter-node link, PCIe, host bandwidth and the data-parallel
// algorithm also ops other than compute ops, which a template rarely holds).
struct PlayProfiles {
  std::vector<std::vector<MacroProfile>> profiles;  // [program][template]
  std::vector<hw::DeviceSpec> devices;              // [program]
  cost::MathMode math = cost::MathMode::half;
  hw::LinkSpec intra_node, inter_node, pcie;
  std::optional<cost::CollectiveAlgo> data_allreduce;
  core::Bandwidth host_bandwidth_per_gpu{};
  double oversubscription = 1;  // Plan::oversubscription
  // Every template op is a compute op whose tensor-parallel collectives (if any) stay within a
  // node: of the links and host figures only the intra-node link matters.
  bool intra_node_only = true;
  std::uint64_t generation = 0;  // counts the costings: equal, the same profiles
};

// What a PlanDigest keeps of a play's op numbering, which the plan alone sets (not its links or
// devices): each op's fine ids (the expanded plan's numbering, which orders the events of one
// instant) and the op a macro op's folded transfer waits for.
struct PlayLayout {
  std::vector<std::uint64_t> fine_first;    // per op: fine id of its (first) op
  std::vector<std::uint64_t> end_key;       // per op: fine id of its (last) op, its end's key
  std::vector<std::uint32_t> arrival_from;  // per op: what its folded transfer waits for (kNone)
  std::uint64_t extra_events = 0;           // ops inside macro ops beyond the first of each
  // Per op: whether a data-parallel all-reduce (Op::data_reduction, the one op the all-reduce
  // algorithm prices) waits for it; a play pauses a copy before the first such op ends
  // (PlaySnapshot).
  std::vector<char> feeds_data_reduction;
  // Per op: its duration class, so a play costs each class once and not each op. First one class
  // per macro template, those of program p from template_base[p] on (a macro op lasts its
  // template's profile), then from `templates` on the work classes: ops of one program whose
  // work costs the same (equal exec::WorkKey, work_key.hpp), class_op naming one op of each.
  std::vector<std::uint32_t> work_class;
  std::vector<std::uint32_t> template_base;
  std::uint32_t templates = 0;
  std::vector<std::uint32_t> class_op;
  // Per op: its folded transfer's class (kNone without one): transfers of one program with equal
  // communication work (Player::same_transfer) last as long; transfer_op names one of each.
  std::vector<std::uint32_t> transfer_class;
  std::vector<std::uint32_t> transfer_op;
  // Per op: what the event loop reads of it at its start and end (event_ops.hpp).
  std::vector<EventOp> event_ops;
};

// A macro op in flight on a program: which points of its template the ledger holds so far.
struct InFlight {
  std::uint32_t id = kNone;
  std::int32_t index = -1;  // in the program
  std::int32_t macro = -1;
  core::TimePoint t0{};
  std::uint64_t key0 = 0;       // fine id of its first op
  std::uint64_t start_key = 0;  // its start's place among events at t0 (point 1)
  std::uint32_t applied = 0;
};

// Memory effects in the order a program's ledger took them, replayed through the caching-
// allocator model once the step has played (memory does not change timing).
struct MemRecord {
  enum class Kind : std::uint8_t { allocs, frees, points, tail };
  Kind kind = Kind::allocs;
  std::int32_t index = -1;     // the op in the program
  std::uint32_t a = 0, b = 0;  // effect range [a, b) (allocs, frees); macro points [a, b] (points)
  core::TimePoint time{};      // when (allocs, frees); the macro's start (points)
  std::uint64_t key = 0;       // the op's fine id (allocs, frees); its first op's (points, tail)
};

// What a play keeps of its event loop to find a steady state (Player, "Steady state"): an op's
// times, waiting count and whether it is done (OpState), the loop's state projected onto what a
// period can change (SteadyMark), and the play's running bounds and marks (Steady).
struct OpState {
  core::TimePoint start, finish, arrival;
  std::uint32_t waiting = 0;
  char done = 0;
};
// The projection of PlayState that a steady-state check compares: the state at one anchor,
// restricted to the window of ops a period can change. Player::mark_steady takes it, one
// PlayState member after another; a light mark keeps only what a state that cannot repeat
// changes (the window and the counts).
struct SteadyMark {
  bool valid = false, full = false;
  core::TimePoint at;
  std::vector<std::uint32_t> lo, end;  // per program: the window [lo, end) of ops
  std::uint64_t events = 0;            // queue: events run
  std::size_t ooms = 0;                // tl: OOM points recorded (oom_seen follows them)
  // Full marks:
  std::vector<hw::MemBreakdown> level;     // ledgers: per program, what it holds
  std::vector<core::Bytes> peak;           // ledgers: per program, its peak
  std::vector<std::uint32_t> state_begin;  // per program: its window's first OpState
  std::vector<OpState> states;  // tl's op times, arrival_start, waiting, done: the window's ops
  std::vector<InFlight> inflight;                               // inflight, per program
  std::vector<core::TimePoint> sms_busy;  // sms_busy_until, per program (at least `at`)
  std::vector<core::EventQueue<std::uint32_t>::Event> pending;  // queue: in (time, key) order
  std::vector<std::size_t> logged;                              // memlog: per program, its size
};
// How one SteadyMark moves to the next a period on: every time `period` later, each program's
// ops `shift[p]` on and its fine ids `fine_shift[p]` on.
struct PeriodShift {
  core::Duration period;
  std::vector<std::uint32_t> shift;
  std::vector<std::uint64_t> fine_shift;
};
struct Steady {
  std::vector<std::uint32_t> lo;   // per program: the first op not done
  std::vector<std::uint32_t> end;  // per program: one past the last op touched
  // Per template of the first program, `lag` marks taken in turn at its macro ops' ends (keyed
  // template * lag + turn): each is compared `lag` such ends later (1 for 1F1B; an interleaved
  // schedule repeats only a group of as many micro-batches as stages later).
  PeriodDetector<SteadyMark> marks;
  SteadyMark now;                   // the state at the anchor being checked
  std::vector<std::uint32_t> seen;  // per template (anchor key): ends so far
  // A plan without macro ops: per op of the first program, its anchor key (-1: none), which
  // stands for the template (expanded_anchor_keys).
  std::vector<std::int32_t> anchor_of;
  std::uint32_t lag = 1;
  std::uint32_t gap = 1, wait = 0;  // anchors between tries, doubled while they fail
};

// The event loop's state: everything its events change. A snapshot of a play is a copy of it,
// a resume an assignment (PlaySnapshot); a steady-state check compares its projection
// (SteadyMark, taken by Player::mark_steady) with the projection a period earlier.
// Player::mark_steady binds every member by name: a member added here does not compile until
// the projection places it.
struct PlayState {
  Timeline tl;
  std::vector<hw::MemoryLedger> ledgers;       // per program
  std::vector<std::uint32_t> waiting;          // per op: unfinished predecessors
  std::vector<char> done;                      // per op
  std::vector<char> oom_seen;                  // per program: its first OOM point is recorded
  std::vector<core::TimePoint> arrival_start;  // per op: when its folded transfer started
  core::EventQueue<std::uint32_t> queue;
  std::vector<InFlight> inflight;              // per program: its macro op in flight
  std::vector<std::vector<MemRecord>> memlog;  // per program, with the allocator model
  // Per program: until when the NCCL kernels started on it so far hold SMs (Plan::collective_sms).
  std::vector<core::TimePoint> sms_busy_until;
};

// A play's event loop paused before an event (see PlanDigest::snapshots): everything the loop
// changes, and what the events before it depended on besides the plan — the macro profiles (by
// their costing), each device's capacity and what it holds before the step, the host memory, and
// the durations of the ops started by then (those of the others are read only once they start;
// kept by duration class and by transfer class).
struct PlaySnapshot {
  std::uint64_t profiles_generation = 0;
  std::vector<core::Bytes> capacity;
  std::vector<hw::MemBreakdown> persistent;
  core::Bytes host_capacity{}, host_per_node{};
  std::vector<core::Duration> class_time, transfer_class_time;  // per duration / transfer class
  std::vector<core::Duration> class_beside;  // per duration class, under contention (Player)
  // The classes of the ops started by then (of their folded transfers): those a play taking it
  // up must cost alike.
  std::vector<std::uint32_t> started_classes, started_transfers;
  // The loop's state (of a snapshot taken at the end, only its timeline).
  PlayState state;
  // and a play taking it up plays the same step to the end — the allocator model's outcome and
  // the accounts too (the same logs, capacities, start states and durations). Then `state.tl` is
  // the play's whole timeline, and the rest of the loop's state is not kept.
  bool at_end = false;
  std::size_t max_oom_points = 0;  // the cap its OOM points were kept under (PlayOptions)
  std::uint64_t events_run = 0;    // by the event queue before the snapshot
  // What a play taking it up does not compute again, filled by the play that took it (after its
  // loop; a loop snapshot only). `at`: the time of the event it paused before; nothing that
  // starts from then on can be an earlier play's.
  core::TimePoint at{};
  // Per program, the accounts of the folded transfers of ops started by then whose transfer
  // ended by `at`: their windows and the compute that covers them are the same in every play
  // taking it up (Player::account).
  std::vector<core::Duration> ended_transfer_time, ended_transfer_exposed;
  // Per program, Player::prefix_hashes of the logged records (empty: not computed).
  std::vector<std::vector<std::uint64_t>> log_prefix, log_work;
};

}  // namespace trainsim::exec
