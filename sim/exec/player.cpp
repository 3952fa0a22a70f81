#include "sim/exec/player.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "sim/core/error.hpp"
#include "sim/core/event_queue.hpp"
#include "sim/core/flat_table.hpp"
#include "sim/exec/allocator_memo.hpp"
#include "sim/exec/allocator_model.hpp"
#include "sim/exec/dependency_graph.hpp"

namespace trainsim::exec {

using parallel::Op;
using parallel::OpKind;
using parallel::Plan;
using parallel::Program;
using parallel::StreamKind;

std::string_view to_string(OomCause c) {
  switch (c) {
    case OomCause::model_states: return "model_states";
    case OomCause::activations: return "activations";
    case OomCause::host_memory: return "host_memory";
  }
  return "?";
}

core::Duration tensor_parallel_time(const Plan& plan, const Op& op) {
  if (op.tp_collectives == 0) return {};
  const hw::LinkSpec link = op.comm.inter_node
                               ? cost::spanning_link(plan.intra_node, plan.inter_node, op.comm.ranks_per_node)
                               : plan.intra_node;
  const core::Duration one =
      op.tp_sequence_parallel
          ? cost::reduce_scatter_time(op.comm.bytes, op.comm.ranks, link) +
                cost::all_gather_time(op.comm.bytes, op.comm.ranks, link)
          : cost::all_reduce_time(op.comm.bytes, op.comm.ranks, link);
  return one * op.tp_collectives;
}

core::Duration op_duration(const Plan& plan, const Program& program, const Op& op) {
  switch (op.kind) {
    case OpKind::forward:
    case OpKind::backward:
    case OpKind::recompute:
    case OpKind::optimizer:
      return cost::kernel_time(op.work, program.device, plan.math, op.kernels) +
             tensor_parallel_time(plan, op);
    case OpKind::p2p:
    case OpKind::all_reduce:
    case OpKind::reduce_scatter:
    case OpKind::all_gather: {
      const hw::LinkSpec link = op.comm.inter_node
                                   ? cost::spanning_link(plan.intra_node, plan.inter_node, op.comm.ranks_per_node)
                                   : plan.intra_node;
      if (op.kind == OpKind::p2p)
        return cost::p2p_time(op.comm.bytes, link) +
               cost::all_gather_time(op.comm.bytes * op.comm.gather_ranks, op.comm.gather_ranks, plan.intra_node);
      if (op.kind == OpKind::all_reduce) {
        // Stream all-reduces are data-parallel gradient reductions (tensor-parallel ones are
        // folded into compute ops above and stay ring).
        const cost::CollectiveAlgo algo =
            op.purpose == parallel::CommPurpose::data ? plan.data_allreduce : cost::CollectiveAlgo::ring;
        return cost::all_reduce_time(op.comm.bytes, op.comm.ranks, link, algo);
      }
      if (op.kind == OpKind::reduce_scatter) return cost::reduce_scatter_time(op.comm.bytes, op.comm.ranks, link);
      return cost::all_gather_time(op.comm.bytes, op.comm.ranks, link);
    }
    case OpKind::pcie_h2d:
    case OpKind::pcie_d2h:
      return cost::p2p_time(op.comm.bytes, plan.pcie);
    case OpKind::cpu_optimizer:
      return op.work.bytes / plan.host_bandwidth_per_gpu;
  }
  return {};
}

namespace {

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

}  // namespace

// What a PlanDigest keeps of a play's costing: the macro templates' profiles per program, and
// what they depend on — each program's device speeds, the precision's math mode and the links
// (the intra-node link prices tensor-parallel collectives within a node; the inter-node link
// those that span nodes; the inter-node link, PCIe, host bandwidth and the data-parallel
// algorithm also ops other than compute ops, which a template rarely holds).
struct PlayProfiles {
  std::vector<std::vector<MacroProfile>> profiles;  // [program][template]
  std::vector<hw::DeviceSpec> devices;               // [program]
  cost::MathMode math = cost::MathMode::half;
  hw::LinkSpec intra_node, inter_node, pcie;
  cost::CollectiveAlgo data_allreduce = cost::CollectiveAlgo::ring;
  core::Bandwidth host_bandwidth_per_gpu{};
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
  // Per op: whether a data-parallel all-reduce (the one kind of op the all-reduce algorithm
  // prices) waits for it; a play pauses a copy before the first such op ends (PlaySnapshot).
  std::vector<char> feeds_data_reduction;
  // Per op: its duration class, so a play costs each class once and not each op. First one class
  // per macro template, those of program p from template_base[p] on (a macro op lasts its
  // template's profile), then from `templates` on the work classes: ops of one program whose
  // work costs the same (equal Player::WorkKey), class_op naming one op of each.
  std::vector<std::uint32_t> work_class;
  std::vector<std::uint32_t> template_base;
  std::uint32_t templates = 0;
  std::vector<std::uint32_t> class_op;
  // Per op: its folded transfer's class (kNone without one): transfers of one program with equal
  // communication work (Player::same_transfer) last as long; transfer_op names one of each.
  std::vector<std::uint32_t> transfer_class;
  std::vector<std::uint32_t> transfer_op;
};

namespace {

// A macro op in flight on a program: which points of its template the ledger holds so far.
struct InFlight {
  std::uint32_t id = kNone;
  std::int32_t index = -1;  // in the program
  std::int32_t macro = -1;
  core::TimePoint t0{};
  std::uint64_t key0 = 0;  // fine id of its first op
  std::uint64_t start_key = 0;  // its start's place among events at t0 (point 1)
  std::uint32_t applied = 0;
};

// Memory effects in the order a program's ledger took them, replayed through the caching-
// allocator model once the step has played (memory does not change timing).
struct MemRecord {
  enum class Kind : std::uint8_t { allocs, frees, points, tail };
  Kind kind = Kind::allocs;
  std::int32_t index = -1;       // the op in the program
  std::uint32_t a = 0, b = 0;    // effect range [a, b) (allocs, frees); macro points [a, b] (points)
  core::TimePoint time{};        // when (allocs, frees); the macro's start (points)
  std::uint64_t key = 0;         // the op's fine id (allocs, frees); its first op's (points, tail)
};

// What a play keeps of its event loop to find a steady state (Player, "Steady state"): an op's
// times, waiting count and whether it is done (OpState), the loop's state at the end of a macro
// op of the first program (SteadyMark), and the play's running bounds and marks (Steady).
struct OpState {
  core::TimePoint start, finish, arrival;
  std::uint32_t waiting = 0;
  char done = 0;
};
struct SteadyMark {
  bool valid = false, full = false;
  core::TimePoint at;
  std::uint64_t events = 0;
  std::size_t ooms = 0;
  std::vector<std::uint32_t> lo, end;      // per program: the window [lo, end) of ops
  std::vector<std::size_t> logged;         // per program: records logged by then
  std::vector<hw::MemBreakdown> level;     // per program: the ledger (full marks)
  std::vector<core::Bytes> peak;           // per program: the ledger's peak (full marks)
  std::vector<InFlight> inflight;          // per program
  std::vector<std::uint32_t> state_begin;  // per program: its window's first OpState
  std::vector<OpState> states;
  std::vector<core::EventQueue<std::uint32_t>::Event> pending;  // in (time, key) order
};
struct Steady {
  std::vector<std::uint32_t> lo;    // per program: the first op not done
  std::vector<std::uint32_t> end;   // per program: one past the last op touched
  // Per template of the first program, `lag` marks taken in turn at its macro ops' ends: each is
  // compared `lag` such ends later (1 for 1F1B; an interleaved schedule repeats only a group of
  // as many micro-batches as stages later).
  std::vector<SteadyMark> marks;
  std::vector<std::uint32_t> seen;  // per template: ends so far
  std::uint32_t lag = 1;
  std::uint32_t gap = 1, wait = 0;  // anchors between tries, doubled while they fail
};

thread_local std::vector<std::vector<MemRecord>> spare_logs;  // see Player::run
// The per-op arrays of this thread's last play, whose buffers the next one reuses (see
// Player::run).
struct SpareArrays {
  std::vector<std::uint32_t> waiting;
  std::vector<char> done;
  std::vector<core::TimePoint> arrival_start;
};
thread_local SpareArrays spare_arrays;
thread_local std::vector<std::uint64_t> spare_work;  // see Player::model_allocator

}  // namespace

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
  // The classes of the ops started by then (of their folded transfers): those a play taking it
  // up must cost alike.
  std::vector<std::uint32_t> started_classes, started_transfers;
  // The loop's state.
  Timeline tl;
  std::vector<hw::MemoryLedger> ledgers;
  std::vector<std::uint32_t> waiting;
  std::vector<char> done, oom_seen;
  std::vector<core::TimePoint> arrival_start;
  core::EventQueue<std::uint32_t> queue;
  std::vector<InFlight> inflight;
  std::vector<std::vector<MemRecord>> memlog;
  // Taken when the loop had ended (no op fed a data-parallel all-reduce): every op had started,
  // and a play taking it up plays the same step to the end — the allocator model's outcome and
  // the accounts too (the same logs, capacities, start states and durations). Then `tl` is the
  // play's whole timeline, and the rest of the loop's state is not kept.
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

namespace {

struct Player {
  const Plan& plan;
  const PlayOptions& opt;
  PlanDigest::Program local_digest;  // program_hashes without a PlanDigest
  Timeline tl;
  std::vector<hw::MemoryLedger> ledgers;
  // The plan's dependency graph, read-only (the digest's when there is one); the waiting counts
  // that run down are this play's copy.
  std::shared_ptr<const DependencyGraph> graph;
  std::span<const std::uint32_t> offset;      // first global id of each program
  std::span<const std::int32_t> program_of;   // global id -> program
  std::span<const std::uint32_t> succ_begin, succ;  // CSR successor lists
  std::span<const std::uint32_t> tap_begin;         // ops waiting inside macro ops (DependencyGraph)
  std::span<const DependencyGraph::Tap> taps;
  std::vector<std::uint32_t> waiting;    // unfinished predecessors per op
  std::vector<char> done;
  // Durations by class (PlayLayout::work_class), costed once per play.
  std::vector<core::Duration> class_time;
  std::span<const std::uint32_t> work_class;
  core::Duration duration(std::uint32_t id) const { return class_time[work_class[id]]; }
  // Events at one instant run in the order of the expanded plan's op numbering (a macro op's
  // ops numbered as if expanded), so a compressed plan replays the expanded plan's order.
  // Macro ops with a folded transfer (Op::arrival) wait for arrival_from; the transfer's
  // duration (by its class, PlayLayout::transfer_class), and when it started once it has, are
  // this play's.
  std::shared_ptr<const PlayLayout> layout;
  std::span<const std::uint64_t> fine_first, end_key;
  std::span<const std::uint32_t> arrival_from;
  std::vector<core::Duration> transfer_time;  // per transfer class
  std::span<const std::uint32_t> transfer_class;
  core::Duration arrival_time(std::uint32_t id) const { return transfer_time[transfer_class[id]]; }
  std::vector<core::TimePoint> arrival_start;
  core::EventQueue<std::uint32_t> queue;
  std::vector<char> oom_seen;
  std::vector<std::vector<MacroProfile>> profiles;  // [program][template]
  bool profiles_reused = false;  // taken from opt.plan_digest (keep_profiles)
  std::vector<InFlight> inflight;                   // per program
  std::vector<std::vector<MemRecord>> memlog;       // per program, with the allocator model
  void log(std::int32_t prog, MemRecord r) {
    if (plan.caching_allocator) memlog[prog].push_back(r);
  }

  Player(const Plan& p, const PlayOptions& o) : plan(p), opt(o) {}

  const Op& op_at(std::uint32_t id, std::int32_t& prog, std::int32_t& idx) const {
    prog = program_of[id];
    idx = static_cast<std::int32_t>(id - offset[prog]);
    return plan.programs[prog].ops[idx];
  }
  std::uint64_t finish_key(std::uint32_t id) const { return end_key[id]; }

  // `order`: the request's place among those of one instant (see OomPoint::order).
  void book(std::int32_t prog, std::int32_t idx, const Op* op, hw::MemCategory cat, core::Bytes b,
            core::TimePoint now, std::uint64_t order) {
    hw::MemoryLedger& led = ledgers[prog];
    const hw::MemBreakdown before = led.current();
    const bool fits = led.allocate(cat, b, /*book_anyway=*/true);
    if (fits) return;
    tl.devices[prog].fits = false;
    const bool first_here = !oom_seen[prog];
    oom_seen[prog] = 1;
    if (!first_here && !opt.all_ooms) return;
    tl.ooms.push_back(gpu_oom(prog, idx, op, op ? op->microbatch : -1, cat, b, before, now, order));
  }

  // An allocation on device `prog` that did not fit: what asked, how much, what was held.
  OomPoint gpu_oom(std::int32_t prog, std::int32_t idx, const Op* op, std::int32_t microbatch, hw::MemCategory cat,
                   core::Bytes requested, const hw::MemBreakdown& in_use, core::TimePoint at,
                   std::uint64_t order) const {
    const Program& P = plan.programs[prog];
    OomPoint pt;
    pt.order = order;
    pt.program = prog;
    pt.time = at;
    pt.op = idx;
    if (op) {
      pt.kind = op->kind;
      pt.layer = op->layer;
      pt.microbatch = microbatch;
    }
    pt.category = cat;
    pt.requested = requested;
    pt.in_use = in_use;
    pt.capacity = P.device.memory;
    pt.cause = P.model_states.total() > P.device.memory ? OomCause::model_states : OomCause::activations;
    return pt;
  }

  // Offloaded states sit in host memory before the step, like the model states on the GPU
  // (plan.host_per_node is the fullest node's demand). Recorded apart from the GPU ledgers: a
  // node can run out of host memory while every GPU fits.
  void check_host_memory() {
    if (plan.host_stage < 0 || plan.host_per_node <= plan.host_capacity) return;
    tl.host_fits = false;
    const hw::MemBreakdown& host = plan.programs[plan.host_stage].host;
    OomPoint pt;
    pt.program = plan.host_stage;
    pt.op = -1;
    pt.kind = OpKind::cpu_optimizer;
    pt.category = hw::MemCategory::optimizer_states;
    for (std::size_t c = 0; c < hw::kMemCategories; ++c)
      if (host.bytes[c] > host[pt.category]) pt.category = static_cast<hw::MemCategory>(c);
    pt.requested = plan.host_per_node;
    pt.capacity = plan.host_capacity;
    pt.cause = OomCause::host_memory;
    tl.ooms.push_back(pt);
  }

  void release(std::int32_t prog, std::int32_t idx, const Op& op, std::uint32_t begin, std::uint32_t end) {
    const Program& P = plan.programs[prog];
    for (auto e = begin; e < end; ++e) {
      const auto cat = P.effects[e].category;
      TRAINSIM_CHECK(ledgers[prog].current()[cat] >= P.effects[e].bytes,
                     "stage " + std::to_string(prog) + " op " + std::to_string(idx) + " (" +
                         std::string(parallel::to_string(op.kind)) + " layer " +
                         std::to_string(op.layer) + " micro-batch " +
                         std::to_string(op.microbatch) + ") frees " +
                         std::to_string(P.effects[e].bytes.value) + " bytes of " +
                         std::string(hw::to_string(cat)) + " but only " +
                         std::to_string(ledgers[prog].current()[cat].value) + " are held");
      ledgers[prog].release(cat, P.effects[e].bytes);
    }
  }

  // Model states booked before the step come first (order 0), then ops by fine id and effect.
  static std::uint64_t effect_order(std::uint64_t fine, std::uint32_t effect) {
    return ((fine + 1) << 8) | std::min<std::uint32_t>(effect, 255);
  }

  // --- Macro ops ---------------------------------------------------------------------------
  // Point 1 of the macro in flight is its start (t0, start_key); point j >= 2 happens at the end
  // of its op j-2: at t0 + offset[j-1], ordered among events of that instant by op j-2's fine id.
  bool point_before(const InFlight& f, const MacroProfile& m, std::uint32_t j, core::TimePoint t,
                    std::uint64_t key) const {
    const core::TimePoint at = f.t0 + m.offset[j - 1];
    return at != t ? at < t : (j == 1 ? f.start_key : f.key0 + j - 2) < key;
  }

  // Brings the ledger of `prog` to point `upto` of its macro in flight. When the run would not
  // fit and the OOM point must be recorded, it is replayed op by op to find the exact request.
  void apply_points(std::int32_t prog, InFlight& f, std::uint32_t upto) {
    if (upto <= f.applied) return;
    log(prog, {MemRecord::Kind::points, f.index, f.applied + 1, upto, f.t0, f.key0});
    const MacroProfile& m = profiles[prog][f.macro];
    hw::MemoryLedger& led = ledgers[prog];
    const std::uint32_t k = m.highest_in(f.applied + 1, upto);
    const core::Bytes high = led.in_use() - m.level_total[f.applied] + m.level_total[k];
    if (high > led.capacity() && (opt.all_ooms || !oom_seen[prog])) {
      replay_points(prog, f, upto);
      return;
    }
    if (high > led.capacity()) tl.devices[prog].fits = false;
    // The highest state sums to `high` (the ledger's categories sum to in_use): below the peak it
    // cannot be one.
    if (high > led.peak()) {
      hw::MemBreakdown highest = led.current();
      for (std::size_t c = 0; c < hw::kMemCategories; ++c)
        highest.bytes[c] += m.level[k].bytes[c] - m.level[f.applied].bytes[c];
      led.raise_peak(highest);
    }
    led.apply_run(m.level[f.applied], m.level[upto]);
    f.applied = upto;
  }

  // Points [a, b] of template `macro` op by op: point j >= 2 first releases op j-2's frees
  // (ended(op)), then every point j books op j-1's allocations (started(op, j)).
  template <typename Ended, typename Started>
  void for_points(const Program& P, std::int32_t macro, std::uint32_t a, std::uint32_t b, Ended&& ended,
                  Started&& started) const {
    const parallel::MacroTemplate& t = P.macros[macro];
    for (std::uint32_t j = a; j <= b; ++j) {
      if (j >= 2) ended(P.macro_ops[t.begin + j - 2]);
      started(P.macro_ops[t.begin + j - 1], j);
    }
  }

  void replay_points(std::int32_t prog, InFlight& f, std::uint32_t upto) {
    const Program& P = plan.programs[prog];
    const MacroProfile& m = profiles[prog][f.macro];
    for_points(
        P, f.macro, f.applied + 1, upto,
        [&](const Op& ended) { release(prog, f.index, ended, ended.free_begin, ended.free_end); },
        [&](const Op& next, std::uint32_t j) {
          Op op = next;
          op.microbatch = P.ops[f.index].microbatch;
          for (auto e = op.alloc_begin; e < op.alloc_end; ++e)
            book(prog, f.index, &op, P.effects[e].category, P.effects[e].bytes, f.t0 + m.offset[j - 1],
                 effect_order(f.key0 + j - 1, e - op.alloc_begin));
        });
    f.applied = upto;
  }

  // Before anything else touches `prog`'s memory at (t, key): the points of its macro in flight
  // that come first.
  void catch_up(std::int32_t prog, core::TimePoint t, std::uint64_t key) {
    InFlight& f = inflight[prog];
    if (f.id == kNone) return;
    const MacroProfile& m = profiles[prog][f.macro];
    std::uint32_t lo = f.applied, hi = m.ops();  // last point before (t, key) lies in [lo, hi]
    while (lo < hi) {
      const std::uint32_t mid = (lo + hi + 1) / 2;
      if (point_before(f, m, mid, t, key)) lo = mid;
      else hi = mid - 1;
    }
    apply_points(prog, f, lo);
  }

  // --- Playing -------------------------------------------------------------------------------
  void start(std::uint32_t id, core::TimePoint now, std::uint64_t trigger) {
    std::int32_t prog, idx;
    const Op& op = op_at(id, prog, idx);
    if (op.macro >= 0) {
      start_macro(id, now, trigger);
      // Booked now: ops started by the same event after it (in successor order) come later.
      apply_points(prog, inflight[prog], 1);
      return;
    }
    const Program& P = plan.programs[prog];
    tl.devices[prog].start[idx] = now;
    queue.schedule(now + duration(id), id, finish_key(id));
    if (op.alloc_begin == op.alloc_end) return;
    catch_up(prog, now, trigger);  // (a macro op returned above: its allocs are its transfer's)
    log(prog, {MemRecord::Kind::allocs, idx, op.alloc_begin, op.alloc_end, now, fine_first[id]});
    for (auto e = op.alloc_begin; e < op.alloc_end; ++e)
      book(prog, idx, &op, P.effects[e].category, P.effects[e].bytes, now,
           effect_order(fine_first[id], e - op.alloc_begin));
  }

  void finish(std::uint32_t id, core::TimePoint now) {
    std::int32_t prog, idx;
    const Op& op = op_at(id, prog, idx);
    const std::uint64_t key = finish_key(id);
    if (op.macro >= 0) {
      InFlight& f = inflight[prog];
      const MacroProfile& m = profiles[prog][op.macro];
      apply_points(prog, f, m.ops());
      log(prog, {MemRecord::Kind::tail, idx, 0, 0, now, f.key0});
      ledgers[prog].apply_run(m.level.back(), m.net);
      f = InFlight{};
    } else if (op.free_begin != op.free_end) {
      catch_up(prog, now, key);
      log(prog, {MemRecord::Kind::frees, idx, op.free_begin, op.free_end, now, key});
      release(prog, idx, op, op.free_begin, op.free_end);
    }
    tl.devices[prog].finish[idx] = now;
    done[id] = 1;
    if (steady) {
      std::uint32_t& lo = steady->lo[prog];
      if (static_cast<std::uint32_t>(idx) == lo) {
        const auto n = static_cast<std::uint32_t>(plan.programs[prog].ops.size());
        do ++lo;
        while (lo < n && done[offset[prog] + lo]);
      }
    }
    for (auto k = succ_begin[id]; k < succ_begin[id + 1]; ++k) {
      const std::uint32_t s = succ[k];
      TRAINSIM_CHECK(waiting[s] > 0, "op became ready twice");
      if (steady) touch(s);
      const bool folded = arrival_from[s] != kNone;
      if (folded && arrival_from[s] == id) begin_arrival(s, now);
      if (--waiting[s] != 0) continue;
      if (!folded) {
        start(s, now, key);
        continue;
      }
      // The expanded plan starts it when the later of its transfer's end (ordered by the
      // transfer's fine id) and its other predecessors comes.
      const core::TimePoint ready = arrival_start[s] + arrival_time(s);
      if (ready < now || (ready == now && fine_first[s] < key)) start(s, now, key);
      else start_macro(s, ready, fine_first[s]);
    }
  }

  // A macro op starts at (at, key) — now, or at its transfer's end when that comes after
  // everything else it waits for: its times are known either way, and a later start's first
  // memory point is booked lazily in (time, key) order like the others (no event needed).
  void start_macro(std::uint32_t id, core::TimePoint at, std::uint64_t key) {
    std::int32_t prog, idx;
    const Op& op = op_at(id, prog, idx);
    tl.devices[prog].start[idx] = at;
    queue.schedule(at + duration(id), id, finish_key(id));
    InFlight& f = inflight[prog];
    TRAINSIM_CHECK(f.id == kNone, "two macro ops in flight on one compute stream");
    f = InFlight{id, idx, op.macro, at, fine_first[id] + (op.arrival ? 1 : 0), key, 0};
    if (tap_begin.empty()) return;
    // Ops waiting inside it: when its template op `after` ends, at the expanded op's end key.
    const MacroProfile& m = profiles[prog][op.macro];
    for (auto k = tap_begin[id]; k < tap_begin[id + 1]; ++k) {
      const auto after = static_cast<std::uint32_t>(taps[k].after);
      queue.schedule(at + m.offset[after + 1], taps[k].op | kTapEvent, f.key0 + after);
    }
  }

  // Template op `after` of the macro in flight on s's program ended (Op::tap): as in the expanded
  // plan, where that op's end frees its tensors and starts the next op (point after + 2 of the
  // macro) before s, which it also releases.
  void tapped(std::uint32_t s, core::TimePoint now, std::uint64_t key) {
    std::int32_t prog, idx;
    const Op& op = op_at(s, prog, idx);
    InFlight& f = inflight[prog];
    TRAINSIM_CHECK(f.id != kNone, "a tap outside its macro op");
    apply_points(prog, f, static_cast<std::uint32_t>(op.tap) + 2);
    TRAINSIM_CHECK(waiting[s] > 0, "op became ready twice");
    if (--waiting[s] == 0) start(s, now, key);
  }

  // A folded transfer starts when the op it waits for ends. (It books no memory: the receive
  // buffer is the receiving op's first allocation, see sim/parallel/lower.cpp.)
  void begin_arrival(std::uint32_t id, core::TimePoint now) { arrival_start[id] = now; }

  // --- Steady state --------------------------------------------------------------------------
  // A pipeline in its steady state repeats itself: one micro-batch later (an interleaved group of
  // micro-batches later) every stage runs the same units with the same lags between stages and
  // the same events, all `period` later, and its memory moves by the same change. A play of a
  // compressed plan looks for that at the ends of the first program's macro ops. It keeps a
  // light mark there (per program the first op not yet done and one past the last op touched —
  // started, or waited for by an op that ended); when the end of a macro op of
  // the same template `Steady::lag` ends later finds every program as far on with as many
  // touched, it keeps a full mark (the ops between with their times, waiting counts and
  // transfers, the macro ops in flight, the events waiting, the ledgers and peaks), and as many
  // ends later compares the state with the mark moved by one period: each program `shift[p]` ops
  // on, its fine ids `fine_shift[p]` on, every time `period` later. If they agree, no OOM point was
  // recorded in the period, and the plan from the mark's ops on repeats with the same shifts for
  // k more periods (the same work, transfers, effects, waits and successors, each successor
  // shifted by its own program's shift), the next k periods would repeat the last one exactly:
  // the player writes them down (the ops' times, the memory log's records, the ledgers moved by
  // k changes) instead of playing them, and goes on from the state k periods on. Where memory
  // grows, k stops short of a new OOM point (skip_periods).
  std::optional<Steady> steady;
  static constexpr std::uint32_t kMaxSteadyGap = 4;

  void start_steady(bool from_start) {
    if (!from_start || !opt.steady_skip || !plan.compressed || !taps.empty() ||
        plan.programs.empty() || plan.programs[0].macros.empty())
      return;
    steady.emplace();
    steady->lo.assign(plan.programs.size(), 0);
    steady->end.assign(plan.programs.size(), 0);
    // Interleaved: units visit the virtual stages a group of `stages` micro-batches at a time.
    std::int32_t chunks = 1;
    for (const Op& op : plan.programs[0].ops) chunks = std::max(chunks, op.chunk + 1);
    steady->lag = chunks > 1 ? static_cast<std::uint32_t>(plan.programs.size()) : 1;
    steady->seen.assign(plan.programs[0].macros.size(), 0);
    steady->marks.resize(plan.programs[0].macros.size() * steady->lag);
  }

  // Op id was started or waited for by an op that ended: its program's window reaches it.
  void touch(std::uint32_t id) {
    const auto p = program_of[id];
    steady->end[p] = std::max(steady->end[p], id - offset[p] + 1);
  }
  // A time `d` later, or none (0) when it was none: an op's times before it has them.
  static core::TimePoint later(core::TimePoint t, core::Duration d) {
    return t.ns == 0 ? t : t + d;
  }
  OpState op_state(std::uint32_t id) const {
    const std::int32_t p = program_of[id];
    const std::uint32_t i = id - offset[p];
    return {tl.devices[p].start[i], tl.devices[p].finish[i], arrival_start[id], waiting[id],
            done[id]};
  }
  void set_op_state(std::uint32_t id, const OpState& s) {
    const std::int32_t p = program_of[id];
    const std::uint32_t i = id - offset[p];
    tl.devices[p].start[i] = s.start;
    tl.devices[p].finish[i] = s.finish;
    arrival_start[id] = s.arrival;
    waiting[id] = s.waiting;
    done[id] = s.done;
  }
  // The program whose ops a fine id numbers (fine ids run program by program).
  std::size_t program_of_fine(std::uint64_t fine) const {
    std::size_t lo = 0, hi = plan.programs.size() - 1;
    while (lo < hi) {
      const std::size_t mid = (lo + hi + 1) / 2;
      if (offset[mid] < fine_first.size() && fine_first[offset[mid]] <= fine)
        lo = mid;
      else
        hi = mid - 1;
    }
    return lo;
  }
  static bool pending_before(const core::EventQueue<std::uint32_t>::Event& a,
                             const core::EventQueue<std::uint32_t>::Event& b) {
    return a.time != b.time ? a.time < b.time : a.key < b.key;
  }

  // A light mark keeps what changes when the state cannot repeat (the ops done and touched); a
  // full one the whole state, taken once a light one was seen to repeat.
  void mark_steady(SteadyMark& m, core::TimePoint now, bool full) {
    const std::size_t n = plan.programs.size();
    Steady& st = *steady;
    m.valid = true;
    m.full = full;
    m.at = now;
    m.events = queue.events_run();
    m.ooms = tl.ooms.size();
    m.lo = st.lo;
    m.end = st.end;
    if (!full) return;
    m.level.resize(n);
    m.peak.resize(n);
    for (std::size_t p = 0; p < n; ++p) {
      m.level[p] = ledgers[p].current();
      m.peak[p] = ledgers[p].peak();
    }
    m.logged.resize(n);
    m.inflight = inflight;
    m.state_begin.resize(n + 1);
    m.states.clear();
    for (std::size_t p = 0; p < n; ++p) {
      m.logged[p] = memlog[p].size();
      m.state_begin[p] = static_cast<std::uint32_t>(m.states.size());
      for (std::uint32_t i = st.lo[p]; i < st.end[p]; ++i)
        m.states.push_back(op_state(offset[p] + i));
    }
    m.state_begin[n] = static_cast<std::uint32_t>(m.states.size());
    m.pending.clear();
    queue.for_each([&](const auto& e) { m.pending.push_back(e); });
    std::sort(m.pending.begin(), m.pending.end(), pending_before);
  }

  // At the end of op `id` of the first program (a macro op).
  void steady_anchor(std::uint32_t id, core::TimePoint now) {
    Steady& st = *steady;
    const auto t = static_cast<std::size_t>(plan.programs[0].ops[id].macro);
    SteadyMark& m = st.marks[t * st.lag + st.seen[t]++ % st.lag];
    if (m.valid) {
      if (!m.full && moved_on(m, now)) {
        mark_steady(m, now, true);
        return;
      }
      if (m.full && skip_periods(m, now)) {
        for (auto& k : st.marks) k.valid = false;
        st.gap = 1;
        st.wait = 0;
        return;
      }
      m.valid = false;
      st.gap = std::min(st.gap * 2, kMaxSteadyGap);
      st.wait = st.gap - 1;
      return;
    }
    if (st.wait > 0) {
      --st.wait;
      return;
    }
    mark_steady(m, now, false);
  }

  // Whether the state may be mark m's a period on: no OOM point since, and every program some ops
  // on with as many touched. (Memory may have moved: a GPipe phase books or frees a micro-batch's
  // tensors every period.)
  bool moved_on(const SteadyMark& m, core::TimePoint now) const {
    const Steady& st = *steady;
    if (now <= m.at || tl.ooms.size() != m.ooms) return false;
    for (std::size_t p = 0; p < plan.programs.size(); ++p) {
      const auto ops = static_cast<std::uint32_t>(plan.programs[p].ops.size());
      if (st.lo[p] <= m.lo[p] || st.lo[p] >= ops || st.end[p] < st.lo[p] || m.end[p] < m.lo[p] ||
          st.end[p] - m.end[p] != st.lo[p] - m.lo[p])
        return false;
    }
    return true;
  }

  // Whether op j + shift of program p repeats op j (the plan's side of a period).
  bool repeats(std::size_t p, std::uint32_t j, const std::vector<std::uint32_t>& shift,
               std::uint64_t fine_shift) const {
    const Program& P = plan.programs[p];
    const std::uint32_t d = shift[p];
    const Op& a = P.ops[j];
    const Op& b = P.ops[j + d];
    const std::uint32_t g = offset[p] + j, h = g + d;
    if (a.kind != b.kind || a.stream != b.stream || a.purpose != b.purpose || a.macro != b.macro ||
        a.arrival != b.arrival || a.tap != b.tap || work_class[g] != work_class[h] ||
        transfer_class[g] != transfer_class[h] || layout->feeds_data_reduction[g] ||
        layout->feeds_data_reduction[h] || graph->waiting[g] != graph->waiting[h] ||
        fine_first[h] != fine_first[g] + fine_shift || end_key[h] != end_key[g] + fine_shift)
      return false;
    if ((arrival_from[g] == kNone) != (arrival_from[h] == kNone)) return false;
    if (arrival_from[g] != kNone &&
        arrival_from[h] != arrival_from[g] + shift[program_of[arrival_from[g]]])
      return false;
    if (succ_begin[g + 1] - succ_begin[g] != succ_begin[h + 1] - succ_begin[h]) return false;
    for (auto k = succ_begin[g], l = succ_begin[h]; k < succ_begin[g + 1]; ++k, ++l)
      if (succ[l] != succ[k] + shift[program_of[succ[k]]]) return false;
    if (a.macro >= 0) return true;
    if (a.alloc_end - a.alloc_begin != b.alloc_end - b.alloc_begin ||
        a.free_end - a.free_begin != b.free_end - b.free_begin)
      return false;
    for (std::uint32_t e = 0; e < a.alloc_end - a.alloc_begin; ++e)
      if (!(P.effects[a.alloc_begin + e] == P.effects[b.alloc_begin + e])) return false;
    for (std::uint32_t e = 0; e < a.free_end - a.free_begin; ++e)
      if (!(P.effects[a.free_begin + e] == P.effects[b.free_begin + e])) return false;
    return true;
  }

  // Per program, the first op j >= from[p] that op j + shift[p] does not repeat (or the last
  // that has such a pair), from the plan digest when a play of the plan found it.
  std::vector<std::uint32_t> repeat_until(const std::vector<std::uint32_t>& from,
                                          const std::vector<std::uint32_t>& shift,
                                          const std::vector<std::uint64_t>& fine_shift) const {
    const std::size_t n = plan.programs.size();
    PlanDigest::Repeat* known = nullptr;
    if (opt.plan_digest)
      for (auto& r : opt.plan_digest->repeats)
        if (r.shift == shift && r.fine_shift == fine_shift) known = &r;
    std::vector<std::uint32_t> until(n);
    for (std::size_t p = 0; p < n; ++p) {
      const auto ops = static_cast<std::uint32_t>(plan.programs[p].ops.size());
      std::uint32_t j = from[p];
      if (known && known->from[p] <= j && j <= known->until[p]) {
        until[p] = known->until[p];
        continue;
      }
      // Up to a known run (its pairs repeat), or to the first pair that does not.
      const std::uint32_t stop = known && j < known->from[p] ? known->from[p] : ops;
      while (j < stop && j + shift[p] < ops && repeats(p, j, shift, fine_shift[p])) ++j;
      until[p] = j == stop && stop != ops ? known->until[p] : j;
    }
    if (!opt.plan_digest) return until;
    if (known) {
      // Pairs from min(from, known from) on repeat where either run says so.
      for (std::size_t p = 0; p < n; ++p)
        if (until[p] == known->until[p]) known->from[p] = std::min(known->from[p], from[p]);
      return until;
    }
    auto& kept = opt.plan_digest->repeats;
    if (kept.size() == 2) kept.erase(kept.begin());
    kept.push_back({shift, fine_shift, from, until});
    return until;
  }

  // Compares the loop's state now with mark m one period on and, when they agree, writes down
  // as many more periods as the plan repeats. False when nothing was skipped.
  bool skip_periods(const SteadyMark& m, core::TimePoint now) {
    Steady& st = *steady;
    const std::size_t n = plan.programs.size();
    const core::Duration period = now - m.at;
    if (!moved_on(m, now)) return false;
    std::vector<std::uint32_t> shift(n);
    std::vector<std::uint64_t> fine_shift(n);
    for (std::size_t p = 0; p < n; ++p) {
      shift[p] = st.lo[p] - m.lo[p];
      fine_shift[p] = fine_first[offset[p] + st.lo[p]] - fine_first[offset[p] + m.lo[p]];
    }
    if (queue.size() != m.pending.size()) return false;
    auto moved = [&](core::TimePoint was, core::TimePoint is) { return is == later(was, period); };
    // The macro ops in flight.
    for (std::size_t p = 0; p < n; ++p) {
      const InFlight& a = m.inflight[p];
      const InFlight& b = inflight[p];
      if ((a.id == kNone) != (b.id == kNone)) return false;
      if (a.id == kNone) continue;
      if (b.id != a.id + shift[p] || b.macro != a.macro || b.applied != a.applied ||
          b.t0 != a.t0 + period || b.key0 != a.key0 + fine_shift[p] ||
          b.start_key != a.start_key + fine_shift[program_of_fine(a.start_key)])
        return false;
    }
    // The ops between the first not done and the last touched.
    for (std::size_t p = 0; p < n; ++p)
      for (std::uint32_t i = 0; i < m.end[p] - m.lo[p]; ++i) {
        const OpState& a = m.states[m.state_begin[p] + i];
        const OpState b = op_state(offset[p] + st.lo[p] + i);
        if (a.done != b.done || a.waiting != b.waiting || !moved(a.start, b.start) ||
            !moved(a.finish, b.finish) || !moved(a.arrival, b.arrival))
          return false;
      }
    // The events waiting.
    std::vector<core::EventQueue<std::uint32_t>::Event> pending;
    pending.reserve(m.pending.size());
    queue.for_each([&](const auto& e) { pending.push_back(e); });
    std::sort(pending.begin(), pending.end(), pending_before);
    for (std::size_t i = 0; i < pending.size(); ++i) {
      const auto& a = m.pending[i];
      const auto& b = pending[i];
      const auto q = program_of[a.payload];
      if (b.payload != a.payload + shift[q] || b.time != a.time + period ||
          b.key != a.key + fine_shift[q])
        return false;
    }
    // How many more periods the plan repeats: pairs (j, j + shift) from the mark's first op on,
    // up to the last op touched k periods on. Another play of the plan may have found where.
    const std::vector<std::uint32_t> until = repeat_until(m.lo, shift, fine_shift);
    std::uint64_t k = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t p = 0; p < n; ++p) {
      // Pairs from m.lo up to until - 1 repeat; k periods need them up to end - 1 + (k - 1) shift.
      if (until[p] < st.end[p]) return false;
      k = std::min<std::uint64_t>(k, (until[p] - st.end[p]) / shift[p] + 1);
    }
    // Memory: each period books the same effects, so every state of period r + 1 is the state of
    // the last period moved by r times its change. A change that frees (or none) makes no new
    // peak. One that books must have made the peak in the last period (so its highest state is
    // the ledger's at_peak, and each later period's is that moved on), and no program may pass
    // its capacity where that would record an OOM point.
    for (std::size_t p = 0; p < n; ++p) {
      const std::int64_t grows = (ledgers[p].in_use() - m.level[p].total()).value;
      if (grows <= 0) continue;
      if (!(ledgers[p].peak() > m.peak[p])) return false;
      if (oom_seen[p] && !opt.all_ooms) continue;
      const std::int64_t room = (ledgers[p].capacity() - ledgers[p].peak()).value;
      if (room < grows) return false;
      k = std::min<std::uint64_t>(k, static_cast<std::uint64_t>(room / grows));
    }
    write_down(m, k, period, shift, fine_shift);
    return true;
  }

  // Plays k periods like the one since mark m by writing them down: the ops they end take the
  // times of the ops a period back, the window of ops in progress and the events waiting move k
  // periods on, the memory log repeats the period's records.
  void write_down(const SteadyMark& m, std::uint64_t k, core::Duration period,
                  const std::vector<std::uint32_t>& shift,
                  const std::vector<std::uint64_t>& fine_shift) {
    Steady& st = *steady;
    const std::size_t n = plan.programs.size();
    const auto kk = static_cast<std::uint32_t>(k);
    const core::Duration span{period.ns * static_cast<std::int64_t>(k)};
    std::vector<OpState> window;
    for (std::size_t p = 0; p < n; ++p) {
      const Program& P = plan.programs[p];
      const std::uint32_t d = shift[p], lo = st.lo[p], end = st.end[p], base = offset[p];
      window.clear();
      for (std::uint32_t i = lo; i < end; ++i) window.push_back(op_state(base + i));
      // Ended within the k periods: as the op a period back, a period later.
      for (std::uint32_t i = lo; i < lo + kk * d; ++i) {
        OpState s = op_state(base + i - d);
        s.start = s.start + period;
        s.finish = s.finish + period;
        if (arrival_from[base + i] != kNone) s.arrival = s.arrival + period;
        set_op_state(base + i, s);
      }
      for (std::uint32_t i = 0; i < window.size(); ++i) {
        OpState s = window[i];
        s.start = later(s.start, span);
        s.finish = later(s.finish, span);
        s.arrival = later(s.arrival, span);
        set_op_state(base + lo + kk * d + i, s);
      }
      st.lo[p] = lo + kk * d;
      st.end[p] = end + kk * d;
      // The ledger moved k periods on (skip_periods: a growing one made its peak in the period).
      hw::MemBreakdown moved;
      const hw::MemBreakdown& now_level = ledgers[p].current();
      for (std::size_t c = 0; c < hw::kMemCategories; ++c)
        moved.bytes[c] = (now_level.bytes[c] - m.level[p].bytes[c]) * static_cast<std::int64_t>(k);
      if (moved.total().value > 0) {
        hw::MemBreakdown highest = ledgers[p].at_peak();
        for (std::size_t c = 0; c < hw::kMemCategories; ++c) highest.bytes[c] += moved.bytes[c];
        ledgers[p].raise_peak(highest);
      }
      ledgers[p].apply_run(hw::MemBreakdown{}, moved);
      InFlight& f = inflight[p];
      if (f.id != kNone) {
        const std::uint64_t trigger_shift = fine_shift[program_of_fine(f.start_key)];
        f.id += kk * d;
        f.index += static_cast<std::int32_t>(kk * d);
        f.t0 = f.t0 + span;
        f.key0 = fine_first[f.id] +
                 (P.ops[static_cast<std::size_t>(f.index)].arrival ? 1 : 0);  // as start_macro
        // Its start's place: the key of the event that started it, in that event's program.
        f.start_key += k * trigger_shift;
      }
      // The period's records, k times.
      auto& log = memlog[p];
      const std::size_t first = m.logged[p], last = log.size();
      log.resize(last + k * (last - first));
      std::size_t to = last;
      for (std::uint32_t r = 1; r <= kk; ++r)
        for (std::size_t i = first; i < last; ++i) {
          MemRecord& rec = log[to++];
          rec = log[i];
          rec.index += static_cast<std::int32_t>(r * d);
          rec.time = rec.time + core::Duration{period.ns * r};
          // The op's own effects and keys, as play logs them (start, finish, apply_points).
          const std::uint32_t g = base + static_cast<std::uint32_t>(rec.index);
          const Op& op = P.ops[static_cast<std::size_t>(rec.index)];
          switch (rec.kind) {
            case MemRecord::Kind::allocs:
              rec.a = op.alloc_begin;
              rec.b = op.alloc_end;
              rec.key = fine_first[g];
              break;
            case MemRecord::Kind::frees:
              rec.a = op.free_begin;
              rec.b = op.free_end;
              rec.key = end_key[g];
              break;
            case MemRecord::Kind::points:
            case MemRecord::Kind::tail:
              rec.key = fine_first[g] + (op.arrival ? 1 : 0);
              break;
          }
        }
    }
    const std::uint64_t events = k * (queue.events_run() - m.events);
    tl.events_skipped += events;
    // (No taps: every event is an op's end, keyed by its end key.)
    queue.shift(span, events, [&](core::EventQueue<std::uint32_t>::Event& e) {
      e.payload += kk * shift[program_of[e.payload]];
      e.key = finish_key(e.payload);
    });
  }

  void build_graph() {
    if (opt.plan_digest) {
      auto& kept = opt.plan_digest->graph;
      if (!kept) kept = std::make_shared<const DependencyGraph>(build_dependency_graph(plan));
      graph = kept;
    } else {
      graph = std::make_shared<const DependencyGraph>(build_dependency_graph(plan));
    }
    offset = graph->offset;
    program_of = graph->program_of;
    succ_begin = graph->succ_begin;
    tap_begin = graph->tap_begin;
    taps = graph->taps;
    TRAINSIM_CHECK(graph->total() < kTapEvent, "too many ops to number events");
    succ = graph->succ;
    waiting = std::move(spare_arrays.waiting);
    waiting.assign(graph->waiting.begin(), graph->waiting.end());
    done = std::move(spare_arrays.done);
    done.assign(waiting.size(), 0);
  }

  // Ops repeat per micro-batch with identical work, so each distinct piece of work is costed
  // once per device role.
  struct WorkKey {
    std::uint64_t a, b, c;
    bool operator==(const WorkKey&) const = default;
  };
  struct WorkHash {
    std::size_t operator()(const WorkKey& k) const {
      return std::hash<std::uint64_t>()(k.a * 0x9E3779B97F4A7C15ULL ^ (k.b + 0x7F4A7C15ULL) * 31 ^ k.c);
    }
  };
  // Durations by WorkKey, costed once per distinct key; the tables' slots stay allocated across
  // programs and plays (one pair per thread: spare_memos).
  using DurationTable = core::FlatTable<WorkKey, core::Duration, WorkHash>;
  struct DurationTables {
    DurationTable memo, tp_memo;
  };
  static DurationTables& spare_memos() {
    thread_local DurationTables tables;
    return tables;
  }
  using ClassTable = core::FlatTable<WorkKey, std::uint32_t, WorkHash>;
  static ClassTable& spare_class_table() {
    thread_local ClassTable table;
    return table;
  }

  static WorkKey work_key(const Op& op) {
    std::uint64_t flops_bits;
    std::memcpy(&flops_bits, &op.work.flops, sizeof flops_bits);
    return WorkKey{static_cast<std::uint64_t>(op.kind) | (static_cast<std::uint64_t>(op.work.matmul) << 8) |
                       (static_cast<std::uint64_t>(op.comm.inter_node) << 9) |
                       (static_cast<std::uint64_t>(op.tp_sequence_parallel) << 10) |
                       (static_cast<std::uint64_t>(op.tp_collectives) << 56) |
                       (static_cast<std::uint64_t>(static_cast<std::uint32_t>(op.kernels)) << 16) |
                       (static_cast<std::uint64_t>(static_cast<std::uint32_t>(op.comm.ranks)) << 40),
                   flops_bits ^ static_cast<std::uint64_t>(op.comm.bytes.value),
                   static_cast<std::uint64_t>(op.work.bytes.value) ^
                       (static_cast<std::uint64_t>(op.comm.ranks_per_node) << 48) ^
                       (static_cast<std::uint64_t>(op.comm.gather_ranks) << 32) ^
                       (static_cast<std::uint64_t>(op.work.serial_memory) << 63)};
  }

  MacroProfile profile(const Program& P, const parallel::MacroTemplate& t, DurationTable& memo,
                       DurationTable& tp_memo) const {
    MacroProfile m;
    const std::uint32_t n = t.end - t.begin;
    m.offset.reserve(n);
    m.kernel.reserve(n);
    m.kernel_before.reserve(n + 1);
    m.kernel_before.assign(1, core::Duration{});
    m.level.reserve(n + 1);
    m.level.assign(1, hw::MemBreakdown{});
    hw::MemBreakdown now;
    for (auto k = t.begin; k < t.end; ++k) {
      const Op& op = P.macro_ops[k];
      const WorkKey key = work_key(op);
      auto [d, inserted] = memo.find_or_add(key);
      if (inserted) *d = op_duration(plan, P, op);
      const core::Duration whole = *d;
      core::Duration tp{};
      if (op.tp_collectives > 0) {
        auto [t, fresh] = tp_memo.find_or_add(key);
        if (fresh) *t = tensor_parallel_time(plan, op);
        tp = *t;
      }
      m.offset.push_back(m.total);
      m.kernel.push_back(whole - tp);
      m.kernel_before.push_back(m.kernel_before.back() + m.kernel.back());
      m.total += whole;
      m.tp += tp;
      if (k > t.begin) {
        const Op& prev = P.macro_ops[k - 1];
        for (auto e = prev.free_begin; e < prev.free_end; ++e) now[P.effects[e].category] -= P.effects[e].bytes;
      }
      for (auto e = op.alloc_begin; e < op.alloc_end; ++e) now[P.effects[e].category] += P.effects[e].bytes;
      m.level.push_back(now);
    }
    const Op& last = P.macro_ops[t.end - 1];
    for (auto e = last.free_begin; e < last.free_end; ++e) now[P.effects[e].category] -= P.effects[e].bytes;
    m.net = now;
    m.level_total.reserve(m.level.size());
    for (const auto& l : m.level) m.level_total.push_back(l.total());
    m.build_highest();
    return m;
  }

  static bool same_transfer(const parallel::CommWork& a, const parallel::CommWork& b) {
    return a.bytes == b.bytes && a.ranks == b.ranks && a.inter_node == b.inter_node &&
           a.ranks_per_node == b.ranks_per_node && a.gather_ranks == b.gather_ranks;
  }

  // Whether the digest holds profiles costed as this play would cost them.
  bool kept_profiles_fit() const {
    if (!opt.plan_digest || !opt.plan_digest->profiles) return false;
    const PlayProfiles& k = *opt.plan_digest->profiles;
    if (k.profiles.size() != plan.programs.size() || k.math != plan.math || !cost::same_link_speed(k.intra_node, plan.intra_node))
      return false;
    if (!k.intra_node_only &&
        (!cost::same_link_speed(k.inter_node, plan.inter_node) || !cost::same_link_speed(k.pcie, plan.pcie) ||
         k.data_allreduce != plan.data_allreduce || !(k.host_bandwidth_per_gpu == plan.host_bandwidth_per_gpu)))
      return false;
    for (std::size_t p = 0; p < plan.programs.size(); ++p)
      if (!cost::same_kernel_speed(k.devices[p], plan.programs[p].device)) return false;
    return true;
  }
  // Hands the profiles to the digest for the plan's next play.
  void keep_profiles() {
    if (!opt.plan_digest) return;
    auto& kept = opt.plan_digest->profiles;
    if (!kept) kept = std::make_shared<PlayProfiles>();
    PlayProfiles& k = *kept;
    if (profiles_reused) {  // costed for what it says already
      k.profiles = std::move(profiles);
      return;
    }
    k.devices.clear();
    k.intra_node_only = true;
    ++k.generation;
    for (const Program& P : plan.programs) {
      k.devices.push_back(P.device);
      for (const Op& op : P.macro_ops) {
        const bool compute = op.kind == OpKind::forward || op.kind == OpKind::backward ||
                             op.kind == OpKind::recompute || op.kind == OpKind::optimizer;
        if (!compute || (op.tp_collectives > 0 && op.comm.inter_node)) k.intra_node_only = false;
      }
    }
    k.math = plan.math;
    k.intra_node = plan.intra_node;
    k.inter_node = plan.inter_node;
    k.pcie = plan.pcie;
    k.data_allreduce = plan.data_allreduce;
    k.host_bandwidth_per_gpu = plan.host_bandwidth_per_gpu;
    k.profiles = std::move(profiles);
  }

  // The plan's op numbering and work classes (the digest's when there is one).
  static PlayLayout make_layout(const Plan& plan, const DependencyGraph& g, std::size_t ops) {
    const std::span<const std::uint32_t> offset = g.offset;
    PlayLayout l;
    l.feeds_data_reduction.assign(ops, 0);
    l.fine_first.resize(ops);
    l.end_key.resize(ops);
    l.arrival_from.assign(ops, kNone);
    l.work_class.resize(ops);  // every op gets a class below
    l.transfer_class.assign(ops, kNone);
    for (const Program& P : plan.programs) {
      l.template_base.push_back(l.templates);
      l.templates += static_cast<std::uint32_t>(P.macros.size());
    }
    ClassTable& classes = spare_class_table();
    std::uint64_t fine = 0;
    for (std::size_t p = 0; p < plan.programs.size(); ++p) {
      const Program& P = plan.programs[p];
      classes.clear();  // durations are per program (its device)
      WorkKey last_key{};
      std::uint32_t last_class = kNone;
      const auto transfers_before = static_cast<std::uint32_t>(l.transfer_op.size());
      for (std::size_t i = 0; i < P.ops.size(); ++i) {
        const Op& op = P.ops[i];
        const std::uint32_t id = offset[p] + static_cast<std::uint32_t>(i);
        l.fine_first[id] = fine;
        if (op.macro < 0) {
          l.end_key[id] = fine++;
          // Consecutive ops often repeat the same work (a unit's transfers): the last one first.
          const WorkKey key = work_key(op);
          if (last_class == kNone || !(key == last_key)) {
            auto [c, added] = classes.find_or_add(key);
            if (added) {
              *c = l.templates + static_cast<std::uint32_t>(l.class_op.size());
              l.class_op.push_back(id);
            }
            last_key = key;
            last_class = *c;
          }
          l.work_class[id] = last_class;
          continue;
        }
        const parallel::MacroTemplate& t = P.macros[static_cast<std::size_t>(op.macro)];
        const std::uint64_t ops_in = t.end - t.begin;
        l.work_class[id] = l.template_base[p] + static_cast<std::uint32_t>(op.macro);
        if (op.arrival) {
          TRAINSIM_CHECK(op.dep_end == op.dep_begin + 1, "a folded transfer waits for exactly one op");
          const parallel::OpRef from = P.deps[op.dep_begin];
          l.arrival_from[id] = offset[from.program] + static_cast<std::uint32_t>(from.index);
          // A program has a few kinds of transfers: searched from the newest class down.
          std::uint32_t c = kNone;
          for (auto k = static_cast<std::uint32_t>(l.transfer_op.size()); k-- > transfers_before;)
            if (same_transfer(op.comm, P.ops[l.transfer_op[k] - offset[p]].comm)) {
              c = k;
              break;
            }
          if (c == kNone) {
            c = static_cast<std::uint32_t>(l.transfer_op.size());
            l.transfer_op.push_back(id);
          }
          l.transfer_class[id] = c;
        }
        fine += ops_in + (op.arrival ? 1 : 0);
        l.end_key[id] = fine - 1;
        l.extra_events += ops_in - 1 + (op.arrival ? 1 : 0);
      }
    }
    for (std::uint32_t u = 0; u + 1 < g.succ_begin.size(); ++u)
      for (auto k = g.succ_begin[u]; k < g.succ_begin[u + 1]; ++k) {
        const std::uint32_t v = g.succ[k];
        const std::int32_t p = g.program_of[v];
        const Op& op = plan.programs[p].ops[v - offset[p]];
        if (op.kind == OpKind::all_reduce && op.purpose == parallel::CommPurpose::data) l.feeds_data_reduction[u] = 1;
      }
    return l;
  }

  void compute_durations() {
    const std::size_t ops = waiting.size();
    if (opt.plan_digest) {
      auto& kept = opt.plan_digest->layout;
      if (!kept) kept = std::make_shared<const PlayLayout>(make_layout(plan, *graph, ops));
      layout = kept;
    } else {
      layout = std::make_shared<const PlayLayout>(make_layout(plan, *graph, ops));
    }
    fine_first = layout->fine_first;
    end_key = layout->end_key;
    arrival_from = layout->arrival_from;
    work_class = layout->work_class;
    transfer_class = layout->transfer_class;
    arrival_start = std::move(spare_arrays.arrival_start);
    arrival_start.assign(ops, core::TimePoint{});
    const bool reuse = kept_profiles_fit();
    profiles_reused = reuse;
    if (reuse) profiles = std::move(opt.plan_digest->profiles->profiles);
    else profiles.assign(plan.programs.size(), {});
    DurationTable& memo = spare_memos().memo;
    DurationTable& tp_memo = spare_memos().tp_memo;
    // Each class once: the work classes on their program's device, the templates by profile.
    const std::vector<std::uint32_t>& class_op = layout->class_op;
    class_time.resize(layout->templates + class_op.size());
    for (std::size_t c = 0; c < class_op.size(); ++c) {
      std::int32_t prog, idx;
      const Op& op = op_at(class_op[c], prog, idx);
      class_time[layout->templates + c] = op_duration(plan, plan.programs[prog], op);
    }
    for (std::size_t p = 0; p < plan.programs.size(); ++p) {
      const Program& P = plan.programs[p];
      if (!reuse) {
        memo.clear();
        tp_memo.clear();
        for (const auto& t : P.macros) profiles[p].push_back(profile(P, t, memo, tp_memo));
      }
      for (std::size_t t = 0; t < P.macros.size(); ++t)
        class_time[layout->template_base[p] + t] = profiles[p][t].total;
    }
    // The folded transfers, a class (equal CommWork in one program) at a time.
    transfer_time.resize(layout->transfer_op.size());
    for (std::size_t c = 0; c < layout->transfer_op.size(); ++c) {
      std::int32_t p, idx;
      Op transfer = op_at(layout->transfer_op[c], p, idx);
      transfer.kind = OpKind::p2p;
      transfer.macro = -1;
      transfer.kernels = 1;
      transfer.work = {};
      transfer_time[c] = op_duration(plan, plan.programs[p], transfer);
    }
  }

  // Compute stream busy with kernels: [a, b) of one op, or a macro op's span (macro >= 0) whose
  // kernel time inside it its profile gives.
  struct Busy {
    core::TimePoint a, b;
    std::int32_t macro;
  };
  // The first of the sorted, disjoint busy intervals that ends after `a`, searched outward from
  // `hint` (the previous answer: queries come in nearly increasing order), which it updates.
  static std::size_t first_ending_after(core::TimePoint a, const std::vector<Busy>& busy, std::size_t& hint) {
    const std::size_t n = busy.size();
    auto before = [&](std::size_t i) { return busy[i].b <= a; };  // true on a prefix
    std::size_t lo = 0, hi = n;  // the answer lies in [lo, hi]; before(hi) is false or hi == n
    std::size_t h = std::min(hint, n);
    std::size_t step = 1;
    if (h < n && before(h)) {  // gallop right: every index below lo is before
      lo = h + 1;
      while (lo + step - 1 < n && before(lo + step - 1)) {
        lo += step;
        step *= 2;
      }
      hi = std::min(n, lo + step - 1);
    } else {  // gallop left: no index from hi on is before
      hi = h;
      while (hi >= step && !before(hi - step)) {
        hi -= step;
        step *= 2;
      }
      lo = hi >= step ? hi - step + 1 : 0;
    }
    const auto it = std::partition_point(busy.begin() + static_cast<std::ptrdiff_t>(lo),
                                         busy.begin() + static_cast<std::ptrdiff_t>(hi),
                                         [&](const Busy& iv) { return iv.b <= a; });
    hint = static_cast<std::size_t>(it - busy.begin());
    return hint;
  }

  // Part of [a, b) not covered by the sorted, disjoint busy intervals.
  static core::Duration uncovered(core::TimePoint a, core::TimePoint b, const std::vector<Busy>& busy,
                                  const std::vector<MacroProfile>& profiles, std::size_t& hint) {
    std::int64_t covered = 0;
    auto it = busy.begin() + static_cast<std::ptrdiff_t>(first_ending_after(a, busy, hint));
    for (; it != busy.end() && it->a < b; ++it) {
      const core::TimePoint lo = std::max(a, it->a), hi = std::min(b, it->b);
      if (it->macro < 0) {
        covered += hi.ns - lo.ns;
        continue;
      }
      const MacroProfile& m = profiles[it->macro];
      covered += (m.kernel_within(hi - it->a) - m.kernel_within(lo - it->a)).ns;
    }
    return core::Duration{(b - a).ns - covered};
  }

  void account() {
    core::TimePoint end{}, pipe_end{};
    // Per-purpose sums kept in an array and moved into tl.comm at the end: a map lookup per op
    // cost more than the rest of this loop. (Sums of non-negative durations: any order is exact.)
    constexpr std::size_t kPurposes = static_cast<std::size_t>(parallel::CommPurpose::offload_cpu_optimizer) + 1;
    std::array<CommStats, kPurposes> comm{};
    std::array<bool, kPurposes> used{};
    auto stats = [&](parallel::CommPurpose c) -> CommStats& {
      used[static_cast<std::size_t>(c)] = true;
      return comm[static_cast<std::size_t>(c)];
    };
    // A folded transfer of an op started before a loop snapshot, ended by the time it paused at:
    // its window and the compute ops that cover it (started before its end) are the same in every
    // play of the snapshot, so the play that took it sums those transfers for the plays that take
    // it up, which add the sums instead of searching again.
    auto carried = [](const PlaySnapshot* s, std::uint32_t id, core::TimePoint end) {
      return s && s->waiting[id] == 0 && end <= s->at;
    };
    PlaySnapshot* const own = snapshot && !snapshot->at_end ? snapshot.get() : nullptr;
    if (own) {
      own->ended_transfer_time.assign(plan.programs.size(), core::Duration{});
      own->ended_transfer_exposed.assign(plan.programs.size(), core::Duration{});
    }
    for (std::size_t p = 0; p < plan.programs.size(); ++p) {
      const Program& P = plan.programs[p];
      DeviceTimeline& d = tl.devices[p];
      std::vector<Busy> busy;
      busy.reserve(P.ops.size());
      // Tensor-parallel part of each compute op, costed once per distinct op (in the loop below:
      // a pass of its own over a large plan's ops cost more than the costing).
      DurationTable& memo = spare_memos().memo;
      memo.clear();
      auto tp_time = [&](const Op& op) -> core::Duration {
        {
          if (op.macro >= 0) return profiles[p][op.macro].tp;
          if (op.tp_collectives == 0) return {};
          const WorkKey key{static_cast<std::uint64_t>(op.comm.bytes.value),
                            static_cast<std::uint64_t>(op.comm.ranks) | (static_cast<std::uint64_t>(op.comm.inter_node) << 32) |
                                (static_cast<std::uint64_t>(op.comm.ranks_per_node) << 40),
                            static_cast<std::uint64_t>(op.tp_collectives) | (static_cast<std::uint64_t>(op.tp_sequence_parallel) << 8)};
          auto [d, inserted] = memo.find_or_add(key);
          if (inserted) *d = tensor_parallel_time(plan, op);
          return *d;
        }
      };
      for (std::size_t i = 0; i < P.ops.size(); ++i) {
        const Op& op = P.ops[i];
        d.end = std::max(d.end, d.finish[i]);
        if (op.stream == StreamKind::compute) {
          const core::Duration span = d.finish[i] - d.start[i];
          d.compute_busy += span;
          if (op.kind != OpKind::optimizer) {
            d.pipeline_busy += span;
            pipe_end = std::max(pipe_end, d.finish[i]);
          }
          // Compute hides other traffic only while its kernels run, not during its own
          // tensor-parallel collectives.
          const core::Duration tp = tp_time(op);
          if (op.macro >= 0) busy.push_back({d.start[i], d.finish[i], op.macro});
          else if (op.purpose == parallel::CommPurpose::none) busy.push_back({d.start[i], d.finish[i] - tp, -1});
          if (tp.ns > 0) {
            CommStats& c = stats(parallel::CommPurpose::tensor);
            c.time += tp;
            c.exposed += tp;
          }
        }
      }
      std::size_t hint = 0;
      bool took_carried = false;
      for (std::size_t i = 0; i < P.ops.size(); ++i) {
        const Op& op = P.ops[i];
        if (op.arrival) {
          const std::uint32_t id = offset[p] + static_cast<std::uint32_t>(i);
          CommStats& c = stats(parallel::CommPurpose::pipeline);
          const core::Duration time = arrival_time(id);
          const core::TimePoint a = arrival_start[id], b = a + time;
          if (carried(resumed_from.get(), id, b)) {
            took_carried = true;
            continue;
          }
          const core::Duration exposed = uncovered(a, b, busy, profiles[p], hint);
          c.time += time;
          c.exposed += exposed;
          if (carried(own, id, b)) {
            own->ended_transfer_time[p] += time;
            own->ended_transfer_exposed[p] += exposed;
          }
        }
        if (op.purpose == parallel::CommPurpose::none || op.macro >= 0) continue;
        CommStats& c = stats(op.purpose);
        const core::Duration span = d.finish[i] - d.start[i];
        c.time += span;
        c.exposed += op.stream == StreamKind::compute ? span : uncovered(d.start[i], d.finish[i], busy, profiles[p], hint);
      }
      if (took_carried) {
        CommStats& c = stats(parallel::CommPurpose::pipeline);
        c.time += resumed_from->ended_transfer_time[p];
        c.exposed += resumed_from->ended_transfer_exposed[p];
      }
      d.capacity = ledgers[p].capacity();
      d.peak = ledgers[p].peak();
      d.at_peak = ledgers[p].at_peak();
      d.tensor_peak = d.peak;
      end = std::max(end, d.end);
    }
    for (std::size_t c = 0; c < kPurposes; ++c)
      if (used[c]) tl.comm[static_cast<parallel::CommPurpose>(c)] = comm[c];
    tl.step_time = end - core::TimePoint{};
    tl.pipeline_end = pipe_end;
  }

  // --- Caching allocator -------------------------------------------------------------------
  // The program's memory effects, in the order its ledger took them, through the allocator
  // model: its peak becomes the context plus the peak reserved, its OOM points those of the
  // allocator (a request that finds no cached block and no room for a new segment, even after
  // the cache is given back).
  // `where`: the request's place in the log (see AllocatorReplay::Failure).
  void allocator_book(AllocatorReplay& run, const parallel::MemEffect& e, std::int32_t microbatch,
                      std::size_t record, std::uint32_t point, std::uint32_t effect) {
    const auto r = run.model.allocate(e, microbatch);
    // The peak is the most the device holds (context + reserved); of the moments it holds that
    // much, the breakdown shows the one whose tensors take the most of it (the earliest if tied).
    const core::Bytes total = run.model.total();
    if (total > run.peak || (total == run.peak && run.model.tensors_total() + run.at_peak[hw::MemCategory::allocator_cache] > run.peak)) {
      run.peak = total;
      run.at_peak = run.model.state();
    }
    if (r.fits) return;
    // What was in use before the request: the tensors without it, the cache without its segment.
    const std::int64_t reserved = run.model.allocator().reserved();  // with the segment booked anyway
    const bool rise = run.rises.empty() || reserved > run.rises.back().reserved;
    const bool recorded = ++run.failures == 1 || opt.all_ooms;  // the first, unless every one is asked for
    if (!rise && !recorded) return;
    hw::MemBreakdown before = run.model.state();
    before[e.category] -= e.bytes;
    before[hw::MemCategory::allocator_cache] += e.bytes - core::Bytes{r.new_segment};
    const AllocatorReplay::Failure f{record, point, effect, e.category, e.bytes, before, core::Bytes{r.new_segment}};
    if (rise) run.rises.push_back({reserved, f});
    if (recorded) run.failed.push_back(f);
  }

  // A failed request's OOM point, named and timed from this play's log.
  OomPoint failure_point(std::int32_t prog, const AllocatorReplay::Failure& f) const {
    const Program& P = plan.programs[prog];
    OomPoint pt;
    if (f.record == AllocatorReplay::kBeforeStep) {
      pt = gpu_oom(prog, -1, nullptr, -1, f.category, f.requested, f.in_use, core::TimePoint{}, 0);
    } else {
      const MemRecord& r = memlog[prog][f.record];
      const Op& op = P.ops[r.index];
      if (r.kind == MemRecord::Kind::allocs) {
        pt = gpu_oom(prog, r.index, &op, op.microbatch, f.category, f.requested, f.in_use, r.time,
                     effect_order(r.key, f.effect - r.a));
      } else {
        const Op& next = P.macro_ops[P.macros[op.macro].begin + f.point - 1];
        pt = gpu_oom(prog, r.index, &next, op.microbatch, f.category, f.requested, f.in_use,
                     r.time + profiles[prog][op.macro].offset[f.point - 1],
                     effect_order(r.key + f.point - 1, f.effect - next.alloc_begin));
      }
    }
    pt.segment = f.segment;
    return pt;
  }

  void allocator_free(std::int32_t prog, AllocatorReplay& run, const Op& op, const parallel::MemEffect& e,
                      std::int32_t microbatch) {
    TRAINSIM_CHECK(run.model.release(e, microbatch),
                   "stage " + std::to_string(prog) + ": " + std::string(parallel::to_string(op.kind)) + " of layer " +
                       std::to_string(op.layer) + " micro-batch " + std::to_string(microbatch) +
                       " frees a tensor the allocator does not hold");
  }

  void replay_record(std::int32_t prog, AllocatorReplay& run, std::size_t record) {
    const MemRecord& r = memlog[prog][record];
    const Program& P = plan.programs[prog];
    const Op& op = P.ops[r.index];
    switch (r.kind) {
      case MemRecord::Kind::allocs: {
        for (auto e = r.a; e < r.b; ++e) allocator_book(run, P.effects[e], op.microbatch, record, 0, e);
        break;
      }
      case MemRecord::Kind::frees:
        for (auto e = r.a; e < r.b; ++e) allocator_free(prog, run, op, P.effects[e], op.microbatch);
        break;
      case MemRecord::Kind::points: {
        for_points(
            P, op.macro, r.a, r.b,
            [&](const Op& ended) {
              for (auto e = ended.free_begin; e < ended.free_end; ++e)
                allocator_free(prog, run, ended, P.effects[e], op.microbatch);
            },
            [&](const Op& next, std::uint32_t j) {
              for (auto e = next.alloc_begin; e < next.alloc_end; ++e)
                allocator_book(run, P.effects[e], op.microbatch, record, j, e);
            });
        break;
      }
      case MemRecord::Kind::tail: {
        const Op& last = P.macro_ops[P.macros[op.macro].end - 1];
        for (auto e = last.free_begin; e < last.free_end; ++e)
          allocator_free(prog, run, last, P.effects[e], op.microbatch);
        break;
      }
    }
  }

  // Two log records do the same to the allocator with micro-batches `shift` apart.
  bool same_record(const Program& P, const MemRecord& x, const MemRecord& y, std::int32_t shift) const {
    if (x.kind != y.kind) return false;
    const Op& a = P.ops[x.index];
    const Op& b = P.ops[y.index];
    if (a.microbatch < 0 || b.microbatch != a.microbatch + shift) return false;
    if (x.kind == MemRecord::Kind::points || x.kind == MemRecord::Kind::tail)
      return a.macro == b.macro && x.a == y.a && x.b == y.b;
    if (x.b - x.a != y.b - y.a) return false;
    return std::equal(P.effects.begin() + x.a, P.effects.begin() + x.b, P.effects.begin() + y.a);
  }

  // --- Replays shared across plays (PlayOptions::allocator_memo) -----------------------------
  // A replay depends on the start state (the family) and on the records it read: each record's
  // kind, op micro-batch and macro, range, and the effects it books and frees (by content).
  static std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    std::uint64_t x = (h ^ v) * 0x9E3779B97F4A7C15ULL;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ULL;
    return x ^ (x >> 32);
  }
  // An effect by content, its layer counted from the program's first (as the allocator names it).
  static std::uint64_t fold(std::uint64_t h, const parallel::MemEffect& e, std::int32_t first_layer) {
    const auto layer = static_cast<std::uint32_t>(AllocatorModel::relative_layer(e, first_layer));
    const std::uint64_t what = static_cast<std::uint64_t>(e.category) | (static_cast<std::uint64_t>(e.tensor) << 8) |
                               (static_cast<std::uint64_t>(e.per_microbatch) << 16) |
                               (static_cast<std::uint64_t>(layer) << 32);
    return mix(h ^ what, static_cast<std::uint64_t>(e.bytes.value));
  }
  // The start state: what the program holds before the step. Not which program it is — stages
  // holding equal layers share replays (see model_allocator).
  std::uint64_t family(std::size_t program) const {
    const Program& P = plan.programs[program];
    std::uint64_t h = mix(0x7472616E73696D31ULL, plan.compressed && plan.steady_state);
    // Not the CUDA context: it lies outside the allocator (a replay goes on with another, see
    // AllocatorReplay::set_device).
    for (std::size_t c = 0; c < hw::kMemCategories; ++c)
      if (static_cast<hw::MemCategory>(c) != hw::MemCategory::reserved)
        h = mix(h, static_cast<std::uint64_t>(P.persistent.bytes[c].value));
    return h;
  }
  // The CUDA context of a program's device, which family() leaves out.
  core::Bytes context_of(std::size_t program) const {
    return plan.programs[program].persistent[hw::MemCategory::reserved];
  }
  // The hashes of program pi's effects and templates: the digest's (filled on first use) or
  // made here.
  const PlanDigest::Program& program_hashes(std::size_t pi) {
    PlanDigest::Program* d = &local_digest;
    if (opt.plan_digest) {
      auto& programs = opt.plan_digest->programs;
      if (programs.size() != plan.programs.size()) programs.assign(plan.programs.size(), {});
      d = &programs[pi];
      if (d->filled) return *d;
    }
    const Program& P = plan.programs[pi];
    auto& effects = d->effects;
    effects.resize(P.effects.size() + 1);
    effects[0] = 0;
    for (std::size_t e = 0; e < P.effects.size(); ++e) effects[e + 1] = fold(effects[e], P.effects[e], P.first_layer);
    d->templates.resize(P.macros.size());
    d->requests.resize(P.macros.size());
    for (std::size_t t = 0; t < P.macros.size(); ++t) {
      std::uint64_t h = mix(0, P.macros[t].end - P.macros[t].begin);
      auto& q = d->requests[t];
      q.assign(1, 0);
      for (auto k = P.macros[t].begin; k < P.macros[t].end; ++k) {
        const Op& op = P.macro_ops[k];
        h = mix(h, op.alloc_end - op.alloc_begin);
        for (auto e = op.alloc_begin; e < op.alloc_end; ++e) h = fold(h, P.effects[e], P.first_layer);
        h = mix(h, op.free_end - op.free_begin);
        for (auto e = op.free_begin; e < op.free_end; ++e) h = fold(h, P.effects[e], P.first_layer);
        const std::uint32_t freed = k > P.macros[t].begin ? P.macro_ops[k - 1].free_end - P.macro_ops[k - 1].free_begin : 0;
        q.push_back(q.back() + freed + (op.alloc_end - op.alloc_begin));
      }
      d->templates[t] = h;
    }
    d->filled = opt.plan_digest != nullptr;
    return *d;
  }
  // prefix[k]: records [0, k) of the program's log. A record of allocations or frees is named by
  // its effect range and a hash of every effect up to the range's end (equal hashes: equal
  // effects, the range's included), a macro's points by the hash of its template's effects.
  // work[k]: the requests records [0, k) make of the allocator (what replaying them costs: a
  // record of a macro's points stands for hundreds, one of a reduction's buffer for one).
  void prefix_hashes(std::size_t pi, const std::vector<MemRecord>& log, std::vector<std::uint64_t>& prefix,
                     std::vector<std::uint64_t>& work) {
    const Program& P = plan.programs[pi];
    const PlanDigest::Program& d = program_hashes(pi);
    const auto& effects = d.effects;
    const auto& templates = d.templates;
    const auto& requests = d.requests;
    prefix.resize(log.size() + 1);
    prefix[0] = 0;
    work.resize(log.size() + 1);
    work[0] = 0;
    auto step = [&](std::size_t k) {  // record k: prefix[k + 1] and work[k + 1]
      const MemRecord& r = log[k];
      const Op& op = P.ops[r.index];
      const bool effects_range = r.kind == MemRecord::Kind::allocs || r.kind == MemRecord::Kind::frees;
      std::uint64_t w = 1;  // a tail: the last op's frees
      if (effects_range) {
        w = r.b - r.a;
      } else if (r.kind == MemRecord::Kind::points) {
        const auto& q = requests[static_cast<std::size_t>(op.macro)];
        w = q[r.b] - q[r.a - 1];
      }
      work[k + 1] = work[k] + w;
      const std::uint64_t w1 = static_cast<std::uint64_t>(r.kind) ^
                               (static_cast<std::uint64_t>(static_cast<std::uint32_t>(op.macro)) << 8) ^
                               (static_cast<std::uint64_t>(static_cast<std::uint32_t>(op.microbatch)) << 32);
      const std::uint64_t w2 = static_cast<std::uint64_t>(r.a) | (static_cast<std::uint64_t>(r.b) << 32);
      // The record's own hash does not wait for the chain; the chain takes it in with one
      // multiply-add (modulo 2^64 by an odd number: two logs that differ in one record differ in
      // every prefix from there on).
      const std::uint64_t h =
          mix(mix(w1, w2), effects_range ? effects[r.b] : templates[static_cast<std::size_t>(op.macro)]);
      prefix[k + 1] = prefix[k] * 0x9E3779B97F4A7C15ULL + h;
    };
    // The records logged before the snapshot this play went on from are that snapshot's, whose
    // play kept their hashes (the last of them is checked against this log).
    std::size_t from = 0;
    if (resumed_from && pi < resumed_from->log_prefix.size() &&
        !resumed_from->log_prefix[pi].empty()) {
      const auto& kept_prefix = resumed_from->log_prefix[pi];
      const auto& kept_work = resumed_from->log_work[pi];
      from = kept_prefix.size() - 1;
      TRAINSIM_CHECK(from <= log.size(),
                     "a snapshot's log is longer than the log that went on from it");
      std::copy(kept_prefix.begin(), kept_prefix.end(), prefix.begin());
      std::copy(kept_work.begin(), kept_work.end(), work.begin());
      if (from > 0) {
        step(from - 1);
        TRAINSIM_CHECK(prefix[from] == kept_prefix[from] && work[from] == kept_work[from],
                       "a snapshot's log hashes do not match the log that went on from it");
      }
    }
    for (std::size_t k = from; k < log.size(); ++k) step(k);
    // Kept with this play's loop snapshot for the plays that go on from it.
    if (snapshot && !snapshot->at_end) {
      const std::size_t logged = snapshot->memlog[pi].size();
      snapshot->log_prefix.resize(plan.programs.size());
      snapshot->log_work.resize(plan.programs.size());
      snapshot->log_prefix[pi].assign(prefix.begin(),
                                      prefix.begin() + static_cast<std::ptrdiff_t>(logged) + 1);
      snapshot->log_work[pi].assign(work.begin(),
                                    work.begin() + static_cast<std::ptrdiff_t>(logged) + 1);
    }
  }
  // What make() returns, made with the allocator's fingerprint bookkeeping set aside: a copy kept
  // for later (a paused replay, a state to jump to) does not use it, and copying it costs.
  template <typename Make>
  static auto without_fingerprint(hw::CachingAllocator& alloc, Make&& make) {
    auto fingerprint = alloc.detach_fingerprint();
    auto copy = make();
    alloc.attach_fingerprint(std::move(fingerprint));
    return copy;
  }
  // Where this play's replay of one device meets the memo: the replays it pauses (copies) at
  // `targets` for later plays.
  struct Sharing {
    std::vector<std::size_t> targets;  // records before which to pause a copy, ascending
    std::size_t next = 0;
    std::vector<std::shared_ptr<const AllocatorReplay>> paused;
    void offer(AllocatorReplay& run, std::size_t r) {
      while (next < targets.size() && targets[next] <= r) ++next;
      run.record = r;
      paused.push_back(
          without_fingerprint(run.model.allocator(), [&] { return std::make_shared<const AllocatorReplay>(run); }));
    }
  };

  // The log through the allocator, from record run.record. In a pipeline's steady state the
  // units repeat: when the allocator's state at the start of a unit is the state at the start of
  // an earlier unit of the same template with micro-batches shifted and the log repeats with the
  // same shift, whole periods are skipped — they would end in the same state, shifted, reaching
  // no new peak and no OOM. A fingerprint finds candidate periods; an exact (canonical)
  // comparison decides: against the state kept at the latest unit of a template not seen before
  // (a 1F1B stage's steady state usually begins with its second backward template, the first
  // booking the parameter gradients) when the period starts there, else one period later.
  // The part period after the skipped ones is jumped too when the allocator was kept that far
  // into the first period: one period later, the length is known when the confirmation starts;
  // from the kept state, it is foreseen — the period is as many micro-batches as the state's
  // live tensors span, up to the next unit of the template — and the copy serves only if the
  // period found is that one. The expanded plan has no macro ops and replays every record: the
  // reference of the fast-play tests. The state before a record therefore depends on the
  // records before it alone (the skip looks ahead to decide, but what it skips changes only
  // micro-batch indices, which it relabels): a replay paused there and resumed with another log
  // goes on exactly.
  void replay_log(std::int32_t prog, AllocatorReplay& run, Sharing* share) {
    const Program& P = plan.programs[prog];
    const std::vector<MemRecord>& log = memlog[prog];
    hw::CachingAllocator& alloc = run.model.allocator();
    const bool skipping = plan.compressed && plan.steady_state;
    constexpr std::size_t kNever = ~std::size_t{0};
    auto anchor_at = [&](std::size_t x) {  // the start of a unit of a macro for one micro-batch
      const MemRecord& rec = log[x];
      return skipping && rec.kind == MemRecord::Kind::points && rec.a == 1 && P.ops[rec.index].microbatch >= 0;
    };
    struct Anchor {
      std::size_t record;
      std::int32_t microbatch;
    };
    std::unordered_map<std::uint64_t, Anchor> anchors;
    // A state kept exactly at an anchor: the canonical blocks relative to its micro-batch, the
    // next segment's address and the failed requests so far.
    struct Kept {
      std::size_t record = kNever;
      std::vector<hw::CachingAllocator::CanonicalBlock> blocks;
      std::int64_t next_address = 0, failures = 0;
    };
    auto keep = [&](std::size_t r, std::int32_t mb) {
      return Kept{r, alloc.canonical(mb + 1), alloc.next_address(), run.failures};
    };
    auto same_state = [&](const Kept& k, std::int32_t mb) {  // the state now is k's, shifted
      return run.failures == k.failures && alloc.next_address() == k.next_address &&
             alloc.canonical(mb + 1) == k.blocks;
    };
    // How the log goes on repeating from `from` (`period` records, micro-batches `shift` apart):
    // whole periods that repeat the one before, then the records of a part period that still do.
    struct Repeat {
      std::size_t periods = 0, part = 0;
    };
    auto repeats = [&](std::size_t from, std::size_t period, std::int32_t shift) {
      Repeat out;
      for (std::size_t x = from;; x += period) {
        while (out.part < period && x + out.part < log.size() &&
               same_record(P, log[x + out.part - period], log[x + out.part], shift))
          ++out.part;
        if (out.part < period) return out;
        ++out.periods;
        out.part = 0;
      }
    };
    // The allocator to keep before record `at`, some records into a period, for a skip of
    // `period` records and `shift` micro-batches confirmed where that period ends (`model` once
    // kept).
    struct Ahead {
      std::size_t at = kNever, period = 0;
      std::int32_t shift = 0;
      std::optional<AllocatorModel> model;
    };
    Ahead ahead;
    // From r, a period of `period` records (micro-batches `shift` apart) is confirmed: skip the
    // whole periods that repeat and, when the allocator was kept as far into the first period as
    // the repetition goes past them, that part too.
    auto skip = [&](std::size_t& r, std::size_t period, std::int32_t shift) {
      const Repeat rep = repeats(r, period, shift);
      if (ahead.model && ahead.period == period && ahead.shift == shift &&
          ahead.at + period == r + rep.part) {  // the state after them is the kept one, shifted
        const std::int64_t peak_allocated = alloc.peak_allocated(), peak_reserved = alloc.peak_reserved();
        run.model = std::move(*ahead.model);
        alloc.raise_peaks(peak_allocated, peak_reserved);
        alloc.shift(static_cast<std::int64_t>(rep.periods + 1) * shift);
        alloc.keep_fingerprint();
        r += rep.periods * period + rep.part;
      } else if (rep.periods > 0) {
        alloc.shift(static_cast<std::int64_t>(rep.periods) * shift);
        r += rep.periods * period;
      } else {
        return false;
      }
      ahead = Ahead{};
      anchors.clear();
      return true;
    };
    // Where to keep the allocator for a skip from the probe at r0: one period on, at the unit of
    // the same template as many micro-batches later as the live tensors span.
    auto foresee = [&](std::size_t r0, std::int32_t mb, std::int32_t macro) {
      const std::int64_t span = alloc.index_span();
      if (span <= 0) return Ahead{};
      const std::int64_t target = mb + span;
      for (std::size_t x = r0 + 1; x < log.size(); ++x) {
        if (!anchor_at(x) || P.ops[log[x].index].macro != macro) continue;
        const std::int32_t m = P.ops[log[x].index].microbatch;
        if (m > target) break;
        if (m < target) continue;
        const Repeat rep = repeats(x, x - r0, static_cast<std::int32_t>(span));
        if (rep.periods == 0 || rep.part == 0) break;
        Ahead a;
        a.at = r0 + rep.part;
        a.period = x - r0;
        a.shift = static_cast<std::int32_t>(span);
        return a;
      }
      return Ahead{};
    };
    Kept probe;  // at the latest anchor of a template not seen before (not the first anchor)
    std::unordered_set<std::int32_t> seen;
    // A candidate period under confirmation: from `start`, `period` records, micro-batches
    // `shift` apart, and the state at `start`.
    bool confirming = false;
    std::size_t start = 0, period = 0;
    std::int32_t shift = 0;
    Kept at_start;
    for (std::size_t r = run.record; r < log.size();) {
      if (share && share->next < share->targets.size() && r >= share->targets[share->next]) share->offer(run, r);
      if (r == ahead.at && !ahead.model) ahead.model = without_fingerprint(alloc, [&] { return run.model; });
      if (anchor_at(r)) {
        const Op& op = P.ops[log[r].index];
        const std::int32_t mb = op.microbatch;
        if (confirming && r == start + period) {
          confirming = false;
          if (same_state(at_start, mb) && skip(r, period, shift)) continue;
          ahead = Ahead{};
        }
        if (!confirming) {
          if (seen.insert(op.macro).second && r > run.record) {
            probe = keep(r, mb);
            ahead = foresee(r, mb, op.macro);
          }
          const std::uint64_t h =
              alloc.fingerprint(mb + 1) ^ (static_cast<std::uint64_t>(op.macro) * 0x9E3779B97F4A7C15ULL);
          auto [it, fresh] = anchors.try_emplace(h, Anchor{r, mb});
          if (!fresh) {
            const bool from_probe = it->second.record == probe.record;
            period = r - it->second.record;
            shift = mb - it->second.microbatch;
            it->second = Anchor{r, mb};
            if (shift > 0 && repeats(r, period, shift).periods > 0) {
              // The period from the probe to here repeats: skip now.
              if (from_probe && same_state(probe, mb) && skip(r, period, shift)) continue;
              confirming = true;
              start = r;
              at_start = keep(r, mb);
              const Repeat rep = repeats(start + period, period, shift);
              ahead = Ahead{};
              if (rep.part > 0) {
                ahead.at = start + rep.part;
                ahead.period = period;
                ahead.shift = shift;
              }
            }
          }
        }
      }
      replay_record(prog, run, r);
      ++r;
    }
    if (share && share->next < share->targets.size()) share->offer(run, log.size());
  }

  // Stages holding equal layers (a pipeline's middle stages) log alike until their schedules part
  // — under 1F1B where the later stage's shorter warm-up ends, under GPipe often never — and a
  // replay depends only on the start state and the records it read. So before replaying, each
  // program compares its log with that of the first program of its family and capacity (which
  // replays from the start: every later one shares its records with it, and under 1F1B none
  // shares more with another) and, when they share records making at least kWorthACopy
  // allocations (a copy of a warm-up's state costs about what a few dozen requests do), that one
  // pauses a copy where they part and this one goes on from it. The expanded plan replays every
  // program in full: the reference of the tests.
  static constexpr std::uint64_t kWorthACopy = 128;  // allocations
  struct StageSource {
    std::int32_t program = -1;
    std::size_t record = 0;
  };
  // Whether programs a and b have the same effects throughout, by content (layers counted from
  // each program's first): by the hashes of their whole effect lists, which a sweep's plan digest
  // keeps (the allocator memo trusts them as far). Without a digest, false: shared_log compares
  // effect by effect.
  bool effects_alike(std::size_t a, std::size_t b) {
    if (!opt.plan_digest || plan.programs[a].effects.size() != plan.programs[b].effects.size())
      return false;
    const std::uint64_t ha = program_hashes(a).effects.back();
    return ha == program_hashes(b).effects.back();
  }
  // How many records program b's log shares with program a's — the same kinds, ops' micro-batches
  // and macro templates, ranges and effects (by content, layers counted from each program's
  // first) — and how many allocations they make, counted up to kWorthACopy. `alike`: the two
  // programs' effects are the same throughout (equal ranges name equal effects).
  std::pair<std::size_t, std::uint64_t> shared_log(std::size_t a, std::size_t b, bool alike) const {
    const Program& A = plan.programs[a];
    const Program& B = plan.programs[b];
    auto same_effects = [&](std::uint32_t a0, std::uint32_t a1, std::uint32_t b0, std::uint32_t b1) {
      if (a1 - a0 != b1 - b0) return false;
      if (alike && a0 == b0) return true;
      for (std::uint32_t k = 0; k < a1 - a0; ++k) {
        const parallel::MemEffect& x = A.effects[a0 + k];
        const parallel::MemEffect& y = B.effects[b0 + k];
        if (x.category != y.category || x.bytes != y.bytes || x.tensor != y.tensor ||
            x.per_microbatch != y.per_microbatch ||
            AllocatorModel::relative_layer(x, A.first_layer) != AllocatorModel::relative_layer(y, B.first_layer))
          return false;
      }
      return true;
    };
    std::vector<std::int8_t> same_template(std::min(A.macros.size(), B.macros.size()), -1);
    auto same_macro = [&](std::int32_t m) {
      auto& known = same_template[static_cast<std::size_t>(m)];
      if (known < 0) {
        const parallel::MacroTemplate& x = A.macros[static_cast<std::size_t>(m)];
        const parallel::MacroTemplate& y = B.macros[static_cast<std::size_t>(m)];
        bool same = x.end - x.begin == y.end - y.begin;
        for (std::uint32_t k = 0; same && k < x.end - x.begin; ++k) {
          const Op& u = A.macro_ops[x.begin + k];
          const Op& v = B.macro_ops[y.begin + k];
          same = same_effects(u.alloc_begin, u.alloc_end, v.alloc_begin, v.alloc_end) &&
                 same_effects(u.free_begin, u.free_end, v.free_begin, v.free_end);
        }
        known = same;
      }
      return known == 1;
    };
    const std::vector<MemRecord>& la = memlog[a];
    const std::vector<MemRecord>& lb = memlog[b];
    std::size_t k = 0;
    std::uint64_t allocations = 0;
    for (; k < std::min(la.size(), lb.size()); ++k) {
      const MemRecord& x = la[k];
      const MemRecord& y = lb[k];
      const Op& u = A.ops[x.index];
      const Op& v = B.ops[y.index];
      if (x.kind != y.kind || x.a != y.a || x.b != y.b || u.microbatch != v.microbatch || u.macro != v.macro) break;
      if (x.kind == MemRecord::Kind::allocs || x.kind == MemRecord::Kind::frees) {
        if (!same_effects(x.a, x.b, y.a, y.b)) break;
        if (x.kind == MemRecord::Kind::allocs) allocations += x.b - x.a;
      } else {
        if (u.macro < 0 || static_cast<std::size_t>(u.macro) >= same_template.size() || !same_macro(u.macro)) break;
        if (x.kind == MemRecord::Kind::points && allocations < kWorthACopy) {
          const parallel::MacroTemplate& t = A.macros[static_cast<std::size_t>(u.macro)];
          for (std::uint32_t j = x.a; j <= x.b && j >= 1 && t.begin + j - 1 < t.end; ++j)
            allocations += A.macro_ops[t.begin + j - 1].alloc_end - A.macro_ops[t.begin + j - 1].alloc_begin;
        }
      }
    }
    return {k, allocations};
  }

  void model_allocator() {
    std::vector<OomPoint> kept;
    for (const auto& o : tl.ooms)
      if (o.cause == OomCause::host_memory) kept.push_back(o);
    const std::size_t n = plan.programs.size();
    std::vector<std::uint64_t> fams(n);
    for (std::size_t pi = 0; pi < n; ++pi) fams[pi] = family(pi);
    std::vector<StageSource> source(n);
    std::vector<std::vector<std::size_t>> wanted(n);  // records where later programs go on
    if (plan.compressed && opt.share_stages) {
      for (std::size_t i = 1; i < n; ++i) {
        const std::int64_t capacity = AllocatorModel::capacity(plan.programs[i]).value;
        std::size_t j = 0;
        while (j < i && (fams[j] != fams[i] || AllocatorModel::capacity(plan.programs[j]).value != capacity ||
                         !(context_of(j) == context_of(i))))
          ++j;
        if (j == i) continue;
        const auto [k, allocations] = shared_log(j, i, effects_alike(j, i));
        if (allocations < kWorthACopy) continue;
        source[i] = {static_cast<std::int32_t>(j), k};
        wanted[j].push_back(k);
      }
    }
    std::vector<std::vector<std::shared_ptr<const AllocatorReplay>>> paused(n);
    for (std::size_t pi = 0; pi < n; ++pi) {
      const auto prog = static_cast<std::int32_t>(pi);
      const Program& P = plan.programs[pi];
      AllocatorReplay run(P);
      bool resumed = false;
      const std::size_t records = memlog[pi].size();
      const std::int64_t capacity = AllocatorModel::capacity(P).value;
      // A stored replay that read this whole log (its source's, or the memo's for another device):
      // its outcome is this program's, read without copying the allocator's state.
      std::shared_ptr<const AllocatorReplay> whole;
      if (source[pi].program >= 0) {  // the latest copy its source paused within the shared records
        std::shared_ptr<const AllocatorReplay> from;
        for (const auto& r : paused[static_cast<std::size_t>(source[pi].program)])
          if (r->record <= source[pi].record && (!from || r->record > from->record)) from = r;
        if (from) {
          if (from->record == records) whole = from;
          else run = *from;
          resumed = true;
          tl.devices[pi].replay_source = source[pi].program;
          tl.devices[pi].replay_shared = from->record;
        }
      }
      std::size_t at = whole ? records : run.record;  // where this program's replay goes on
      // Whether a later program of this play goes on from this log's end.
      const bool end_wanted = std::find(wanted[pi].begin(), wanted[pi].end(), records) != wanted[pi].end();
      std::optional<Sharing> share;
      std::shared_ptr<AllocatorMemo::Prefix> prefix;
      // In the memo, by stage too: a stage's log is most like the same stage's at the point before
      // (and the memo keeps a few logs per family).
      const std::uint64_t fam = mix(fams[pi], pi);
      if (opt.allocator_memo && !opt.all_ooms && opt.allocator_memo->worth_looking()) {
        prefix = std::make_shared<AllocatorMemo::Prefix>();
        std::vector<std::uint64_t>& work = spare_work;
        prefix_hashes(pi, memlog[pi], *prefix, work);
        // Fractions of the log are fractions of its requests: the record where they reach w.
        const std::uint64_t total = work.back();
        auto record_at = [&](std::uint64_t w) {
          return static_cast<std::size_t>(std::lower_bound(work.begin(), work.end(), w) - work.begin());
        };
        const AllocatorMemo::Match m =
            opt.allocator_memo->find(fam, context_of(pi).value, *prefix, capacity, record_at(total / 2));
        // A copy costs about what replaying a sixteenth of a log does: resume and pause only
        // where that saves more.
        if (m.replay && work[m.replay->record] >= total / 8 && (!resumed || m.replay->record > at)) {
          // (Later programs that go on from the end need a replay of this device: a copy.)
          if (m.replay->record == records && !end_wanted) {
            whole = m.replay;
          } else {
            run = *m.replay;
            run.set_device(core::Bytes{capacity}, context_of(pi));
          }
          at = m.replay->record;
          resumed = true;
          tl.devices[pi].replay_source = -1;
          tl.devices[pi].replay_shared = 0;
        }
        // Pause a copy where this log parts from the closest stored one (the next point of the
        // same kind is likely to part there too) and before its first record of an op off the
        // compute stream: the records before it come from compute ops alone, in program order,
        // so points that differ only in timing (links, all-reduce algorithm, another device's
        // speed) log the same up to there — the first data-parallel reduction, in the last
        // backward (pipeline transfers book nothing: their receivers' compute does). When no log
        // is close and that record comes early, at 15/16 of its requests instead (a pause at 3/4
        // as well cost more in copies than it saved: a GPipe stage's state holds every
        // micro-batch's blocks).
        share.emplace();
        const std::vector<MemRecord>& log = memlog[pi];
        const auto timed = static_cast<std::size_t>(
            std::find_if(log.begin(), log.end(),
                         [&](const MemRecord& r) { return P.ops[r.index].stream != parallel::StreamKind::compute; }) -
            log.begin());
        const bool timed_late = timed < log.size() && work[timed] >= total / 2;
        // Before the last micro-batch's first record: a point with a larger global batch logs the
        // same up to there (more forwards follow instead of the cooldown's backwards).
        const auto last = static_cast<std::size_t>(
            std::find_if(log.begin(), log.end(),
                         [&](const MemRecord& r) { return P.ops[r.index].microbatch == plan.microbatches - 1; }) -
            log.begin());
        if (work[m.shared] >= total / 2) {
          if (work[m.shared] >= work[at] + total / 8) share->targets = {m.shared};
          if (last < log.size() && last > m.shared && work[last] >= std::max(work[m.shared], work[at]) + total / 8)
            share->targets.push_back(last);
          if (timed_late && timed > m.shared && work[timed] >= work[at] + total / 8)
            share->targets.push_back(timed);
        } else if (m.promising) {
          share->targets = {timed_late ? timed : record_at(total - total / 16)};
          if (last < share->targets[0] && work[last] >= work[at] + total / 8)
            share->targets.insert(share->targets.begin(), last);
        }
        // A log whose records all come from compute ops (no bucket buffers: parallel.bucket_buffers
        // in_place or persistent) is the same for every link and all-reduce algorithm: its end
        // state, paused, is the whole outcome of this point's timing variants.
        if (timed == log.size()) share->targets.push_back(log.size());
        std::sort(share->targets.begin(), share->targets.end());
        share->targets.erase(std::unique(share->targets.begin(), share->targets.end()), share->targets.end());
        std::erase_if(share->targets, [&](std::size_t t) { return t <= at; });
      }
      if (!wanted[pi].empty()) {  // and where later programs of this play go on
        if (!share) share.emplace();
        auto& t = share->targets;
        for (const std::size_t r : wanted[pi])
          if (r >= at) t.push_back(r);
        std::sort(t.begin(), t.end());
        t.erase(std::unique(t.begin(), t.end()), t.end());
      }
      if (whole) {
        // Nothing to replay; a later program that goes on from the end takes the same replay
        // (a source's is of this device; the memo's was taken only when none does).
        if (share && end_wanted) share->paused = {whole};
      } else {
        if (resumed) {
          run.model.rebase(P);
        } else {
          for (const auto& e : AllocatorModel::state_buffers(P))
            allocator_book(run, e, -1, AllocatorReplay::kBeforeStep, 0, 0);
        }
        if (plan.compressed && plan.steady_state) run.model.allocator().keep_fingerprint();
        replay_log(prog, run, share ? &*share : nullptr);
      }
      if (share) {
        if (!wanted[pi].empty()) paused[pi] = share->paused;
        if (prefix) opt.allocator_memo->add(fam, context_of(pi).value, std::move(prefix), std::move(share->paused));
      }
      const AllocatorReplay::Outcome o = (whole ? *whole : run).outcome(core::Bytes{capacity}, context_of(pi));
      TRAINSIM_CHECK(o.tensors == P.persistent.total(),
                     "stage " + std::to_string(prog) + " ends the step with tensors the allocator still holds");
      DeviceTimeline& d = tl.devices[pi];
      d.peak = o.peak;
      d.at_peak = o.at_peak;
      d.fits = o.failures == 0;
      d.allocated_peak = o.allocated_peak;
      d.reserved_peak = o.reserved_peak;
      for (const auto& f : o.failed) kept.push_back(failure_point(prog, f));
    }
    tl.ooms = std::move(kept);
  }

  void check_end_state() {
    for (std::size_t p = 0; p < plan.programs.size(); ++p) {
      const hw::MemBreakdown& now = ledgers[p].current();
      const hw::MemBreakdown& start = plan.programs[p].persistent;
      for (std::size_t c = 0; c < hw::kMemCategories; ++c)
        TRAINSIM_CHECK(now.bytes[c] == start.bytes[c],
                       "device " + std::to_string(p) + " ends the step holding " +
                           std::to_string(now.bytes[c].value) + " bytes of " +
                           std::string(hw::to_string(static_cast<hw::MemCategory>(c))) +
                           " instead of " + std::to_string(start.bytes[c].value));
      TRAINSIM_CHECK(now.total() == ledgers[p].in_use(), "per-category bytes do not sum to the total");
    }
  }

  // --- Plays of one plan paused and resumed (PlanDigest::snapshots) ---------------------------
  static constexpr std::size_t kSnapshots = 2;
  std::shared_ptr<PlaySnapshot> snapshot;  // this play's, handed to the digest when it ends
  std::shared_ptr<const PlaySnapshot> resumed_from;  // the loop snapshot this play went on from
  // The costing this play's profiles are (reused) or will be once kept (keep_profiles).
  std::uint64_t profiles_generation() const {
    const auto& k = opt.plan_digest->profiles;
    return (k ? k->generation : 0) + (profiles_reused ? 0 : 1);
  }
  void keep_snapshot(bool at_end) {
    auto s = std::make_shared<PlaySnapshot>();
    s->at_end = at_end;
    s->max_oom_points = opt.max_oom_points;
    s->events_run = queue.events_run();
    s->profiles_generation = profiles_generation();
    for (std::size_t p = 0; p < plan.programs.size(); ++p) {
      s->capacity.push_back(ledgers[p].capacity());
      s->persistent.push_back(plan.programs[p].persistent);
    }
    s->host_capacity = plan.host_capacity;
    s->host_per_node = plan.host_per_node;
    s->class_time = class_time;
    s->transfer_class_time = transfer_time;
    // The classes of the ops started by now (all of them at the end).
    std::vector<char> seen(class_time.size() + transfer_time.size(), 0);
    for (std::uint32_t id = 0; id < waiting.size(); ++id) {
      if (!at_end && waiting[id] != 0) continue;
      if (!seen[work_class[id]]) {
        seen[work_class[id]] = 1;
        s->started_classes.push_back(work_class[id]);
      }
      const std::uint32_t t = transfer_class[id];
      if (t != kNone && !seen[class_time.size() + t]) {
        seen[class_time.size() + t] = 1;
        s->started_transfers.push_back(t);
      }
    }
    if (at_end) {  // its timeline once the play ends
      snapshot = std::move(s);
      return;
    }
    s->at = queue.next().time;
    s->tl = tl;
    s->ledgers = ledgers;
    s->waiting = waiting;
    s->done = done;
    s->oom_seen = oom_seen;
    s->arrival_start = arrival_start;
    s->queue = queue;
    s->inflight = inflight;
    s->memlog = memlog;
    snapshot = std::move(s);
  }
  // Whether this play's events up to snapshot s are s's: the same profiles (this play's are the
  // digest's, costed as s's were), capacities, states before the step and host memory, and every
  // op s had started lasting as long here.
  bool same_start(const PlaySnapshot& s) const {
    if (s.transfer_class_time.size() != transfer_time.size() ||
        s.class_time.size() != class_time.size() ||
        s.profiles_generation != profiles_generation() || s.max_oom_points != opt.max_oom_points ||
        !(s.host_capacity == plan.host_capacity) || !(s.host_per_node == plan.host_per_node))
      return false;
    for (std::size_t p = 0; p < plan.programs.size(); ++p) {
      if (!(s.capacity[p] == ledgers[p].capacity())) return false;
      for (std::size_t c = 0; c < hw::kMemCategories; ++c)
        if (!(s.persistent[p].bytes[c] == plan.programs[p].persistent.bytes[c])) return false;
    }
    for (const std::uint32_t c : s.started_classes)
      if (!(s.class_time[c] == class_time[c])) return false;
    for (const std::uint32_t t : s.started_transfers)
      if (!(s.transfer_class_time[t] == transfer_time[t])) return false;
    return true;
  }
  // Goes on from a kept snapshot this play starts alike, if any (the most recently used is
  // tried first and kept longest).
  enum class Resumed { no, loop, whole };
  Resumed resume() {
    if (!opt.plan_digest || opt.all_ooms || !profiles_reused) return Resumed::no;
    auto& kept = opt.plan_digest->snapshots;
    for (std::size_t i = kept.size(); i-- > 0;) {
      const PlaySnapshot& s = *kept[i];
      if (!same_start(s)) continue;
      if (i + 1 != kept.size())
        std::rotate(kept.begin() + static_cast<std::ptrdiff_t>(i), kept.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                    kept.end());
      tl = s.tl;
      tl.events_resumed = s.events_run;
      if (s.at_end) return Resumed::whole;
      resumed_from = kept.back();
      ledgers = s.ledgers;
      waiting.assign(s.waiting.begin(), s.waiting.end());
      done.assign(s.done.begin(), s.done.end());
      oom_seen = s.oom_seen;
      arrival_start.assign(s.arrival_start.begin(), s.arrival_start.end());
      queue = s.queue;
      inflight = s.inflight;
      for (std::size_t p = 0; p < memlog.size(); ++p) memlog[p].assign(s.memlog[p].begin(), s.memlog[p].end());
      return Resumed::loop;
    }
    return Resumed::no;
  }

  Timeline run() {
    const auto& progs = plan.programs;
    tl.devices.resize(progs.size());
    oom_seen.assign(progs.size(), 0);
    inflight.assign(progs.size(), InFlight{});
    // Logs reuse the buffers of this thread's last play (a sweep's points log similar amounts:
    // growing them anew reallocated and faulted in megabytes per point).
    memlog = std::move(spare_logs);
    memlog.resize(progs.size());
    for (auto& log : memlog) log.clear();
    for (const auto& P : progs) {
      ledgers.emplace_back(P.device.memory);
      auto& d = tl.devices[ledgers.size() - 1];
      d.start.assign(P.ops.size(), core::TimePoint{});
      d.finish.assign(P.ops.size(), core::TimePoint{});
    }
    // Model states and reserved memory are in place before the step starts.
    for (std::size_t p = 0; p < progs.size(); ++p)
      for (std::size_t c = 0; c < hw::kMemCategories; ++c)
        book(static_cast<std::int32_t>(p), -1, nullptr, static_cast<hw::MemCategory>(c),
             progs[p].persistent.bytes[c], core::TimePoint{}, 0);
    check_host_memory();
    build_graph();
    compute_durations();
    const Resumed resumed = resume();
    if (resumed != Resumed::whole) play_on(resumed == Resumed::no);
    spare_logs = std::move(memlog);
    spare_arrays = {std::move(waiting), std::move(done), std::move(arrival_start)};
    keep_profiles();
    if (snapshot) {
      if (snapshot->at_end) snapshot->tl = tl;
      auto& kept = opt.plan_digest->snapshots;
      if (kept.size() == kSnapshots) kept.erase(kept.begin());
      kept.push_back(std::move(snapshot));
    }
    return std::move(tl);
  }

  // The events from the start or from a snapshot taken up, then the accounts and the allocator.
  void play_on(bool from_start) {
    const auto& progs = plan.programs;
    start_steady(from_start);
    if (from_start)
      for (std::uint32_t id = 0; id < waiting.size(); ++id)
        if (waiting[id] == 0) {
          if (steady) touch(id);
          start(id, core::TimePoint{}, 0);
        }
    bool pause = from_start && opt.plan_digest && !opt.all_ooms;
    const std::uint32_t first_program_end = offset.size() > 1 ? offset[1] : 0;
    while (!queue.empty()) {
      if (pause) {
        const std::uint32_t next = queue.next().payload;
        if (!(next & kTapEvent) && layout->feeds_data_reduction[next]) {
          keep_snapshot(false);
          pause = false;
        }
      }
      const auto ev = queue.pop();
      if (ev.payload & kTapEvent) {
        tapped(ev.payload & ~kTapEvent, ev.time, ev.key);
        continue;
      }
      finish(ev.payload, ev.time);
      if (steady && ev.payload < first_program_end && plan.programs[0].ops[ev.payload].macro >= 0)
        steady_anchor(ev.payload, ev.time);
    }
    // No op feeds a data-parallel all-reduce (ZeRO reduce-scatters instead, one data-parallel
    // rank): the all-reduce algorithm changes nothing, and a later play may take the whole step.
    if (pause) keep_snapshot(true);
    for (std::uint32_t id = 0; id < done.size(); ++id)
      TRAINSIM_CHECK(done[id], "op " + std::to_string(id) + " never ran: the schedule deadlocks");
    // A tap's event ends no op (the expanded plan starts its op from the end of the op it
    // waits for).
    tl.events = queue.events_run() - taps.size() + layout->extra_events;
    check_end_state();
    account();
    if (plan.caching_allocator) {
      model_allocator();
    } else {
      for (std::size_t p = 0; p < progs.size(); ++p) {
        DeviceTimeline& d = tl.devices[p];
        d.allocated_peak = d.reserved_peak = d.peak - progs[p].persistent[hw::MemCategory::reserved];
      }
    }
    // A macro op books its points late (when something else touches the device), so points are
    // put in time order here and the cap keeps the earliest.
    std::stable_sort(tl.ooms.begin(), tl.ooms.end(), [](const OomPoint& a, const OomPoint& b) {
      return a.time != b.time ? a.time < b.time : a.order < b.order;
    });
    if (tl.ooms.size() > opt.max_oom_points) {
      tl.ooms_dropped = static_cast<std::int64_t>(tl.ooms.size() - opt.max_oom_points);
      tl.ooms.resize(opt.max_oom_points);
    }
  }
};

}  // namespace

Timeline play(const Plan& plan, const PlayOptions& options) {
  Player p(plan, options);
  return p.run();
}

}  // namespace trainsim::exec
