#pragma once
// The player (exec::play) as one object over its loop's state (PlayState). Its parts live in
// files of their own: player.cpp (the event loop and memory booking), op_durations.cpp,
// layout.cpp, steady_state.cpp, comm_accounting.cpp, allocator_replay.cpp, plan_digest.cpp and
// snapshot.cpp. Private to sim/exec.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/flat_table.hpp"
#include "sim/exec/allocator_memo.hpp"
#include "sim/exec/allocator_model.hpp"
#include "sim/exec/dependency_graph.hpp"
#include "sim/exec/play_state.hpp"
#include "sim/exec/player.hpp"
#include "sim/exec/work_key.hpp"

namespace trainsim::exec {

using parallel::Op;
using parallel::OpKind;
using parallel::Plan;
using parallel::Program;
using parallel::StreamKind;

// Kernels on the compute stream (forward, backward, recompute, optimizer), and the NCCL
// collectives, whose kernels hold SMs while they run (pipeline transfers, a few channels per
// peer and folded into macro ops in compressed plans, are not charged): op_durations.cpp.
bool is_compute(OpKind k);
bool takes_sms(OpKind k);

// Per op of program P, its steady-state anchor key where P has no macro ops (-1: none); `keys`
// is set to the number of keys (expanded_anchors.cpp).
std::vector<std::int32_t> expanded_anchor_keys(const Program& P, std::size_t& keys);

// Functions declared inline here are defined in the one file that calls them, so that they inline
// into their callers (the event loop's in player.cpp).
struct Player : PlayState {
  const Plan& plan;
  const PlayOptions& opt;
  PlanDigest::Program local_digest;  // program_hashes without a PlanDigest
  // The plan's dependency graph, read-only (the digest's when there is one); the waiting counts
  // that run down are this play's copy.
  std::shared_ptr<const DependencyGraph> graph;
  std::span<const std::uint32_t> offset;            // first global id of each program
  std::span<const std::int32_t> program_of;         // global id -> program
  std::span<const std::uint32_t> succ_begin, succ;  // CSR successor lists
  std::span<const std::uint32_t> tap_begin;  // ops waiting inside macro ops (DependencyGraph)
  std::span<const DependencyGraph::Tap> taps;
  // Durations by class (PlayLayout::work_class), costed once per play.
  std::vector<core::Duration> class_time;
  std::span<const std::uint32_t> work_class;
  core::Duration duration(std::uint32_t id) const { return class_time[work_class[id]]; }
  // Per class: its duration with a collective beside it the whole time (contended_op_duration),
  // and whether its ops hold SMs (takes_sms) when off the compute stream. Empty without
  // contention (Plan::collective_sms 0; a plan with it has no macro ops, pass_devices.cpp).
  std::vector<core::Duration> class_beside;
  std::vector<char> class_takes_sms;
  // Op `id` of program `prog`, on the compute stream, starting at `now`: its duration with the
  // collectives in flight on its device by then (player.cpp).
  inline core::Duration compute_time(std::uint32_t id, std::int32_t prog, core::TimePoint now) const;
  // Op idx of program prog started at `now` for `d`: where it holds SMs off the compute stream, its device's
  // compute kernels share them until it ends.
  inline void hold_sms(std::int32_t prog, std::int32_t idx, core::TimePoint now, core::Duration d);
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
  std::vector<std::vector<MacroProfile>> profiles;  // [program][template]
  bool profiles_reused = false;                     // taken from opt.plan_digest (keep_profiles)
  void log(std::int32_t prog, MemRecord r) {
    if (plan.caching_allocator) memlog[prog].push_back(r);
  }

  Player(const Plan& p, const PlayOptions& o) : plan(p), opt(o) {}

  const Op& op_at(std::uint32_t id, std::int32_t& prog, std::int32_t& idx) const {
    prog = program_of[id];
    idx = static_cast<std::int32_t>(id - offset[prog]);
    return plan.programs[prog].ops[idx];
  }
  // What the event loop reads of op `id` (event_ops.hpp): the layout's record, or with the
  // switch off (the oracle) the op itself.
  std::span<const EventOp> event_ops;
  bool records = true;
  EventOp event_op(std::uint32_t id, std::int32_t& prog, std::int32_t& idx) const {
    prog = program_of[id];
    idx = static_cast<std::int32_t>(id - offset[prog]);
    return records ? event_ops[id] : EventOp::of(plan.programs[prog].ops[idx]);
  }
  EventOp event_op(std::uint32_t id) const {
    std::int32_t prog, idx;
    return event_op(id, prog, idx);
  }
  std::uint64_t finish_key(std::uint32_t id) const { return end_key[id]; }

  // `order`: the request's place among those of one instant (see OomPoint::order).
  inline void book(std::int32_t prog, std::int32_t idx, const Op* op, hw::MemCategory cat,
                   core::Bytes b, core::TimePoint now, std::uint64_t order);

  // An allocation on device `prog` that did not fit: what asked, how much, what was held.
  OomPoint gpu_oom(std::int32_t prog, std::int32_t idx, const Op* op, std::int32_t microbatch,
                   hw::MemCategory cat, core::Bytes requested, const hw::MemBreakdown& in_use,
                   core::TimePoint at, std::uint64_t order) const;

  // Offloaded states sit in host memory before the step, like the model states on the GPU
  // (plan.host_per_node is the fullest node's demand). Recorded apart from the GPU ledgers: a
  // node can run out of host memory while every GPU fits.
  void check_host_memory();

  inline void release(std::int32_t prog, std::int32_t idx, const Op& op, std::uint32_t begin,
                      std::uint32_t end);

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
  inline void apply_points(std::int32_t prog, InFlight& f, std::uint32_t upto);

  // Points [a, b] of template `macro` op by op: point j >= 2 first releases op j-2's frees
  // (ended(op)), then every point j books op j-1's allocations (started(op, j)).
  template <typename Ended, typename Started>
  void for_points(const Program& P, std::int32_t macro, std::uint32_t a, std::uint32_t b,
                  Ended&& ended, Started&& started) const {
    const parallel::MacroTemplate& t = P.macros[macro];
    for (std::uint32_t j = a; j <= b; ++j) {
      if (j >= 2) ended(P.macro_ops[t.begin + j - 2]);
      started(P.macro_ops[t.begin + j - 1], j);
    }
  }

  inline void replay_points(std::int32_t prog, InFlight& f, std::uint32_t upto);

  // Before anything else touches `prog`'s memory at (t, key): the points of its macro in flight
  // that come first.
  inline void catch_up(std::int32_t prog, core::TimePoint t, std::uint64_t key);

  // --- Playing -------------------------------------------------------------------------------
  inline void start(std::uint32_t id, core::TimePoint now, std::uint64_t trigger);

  inline void finish(std::uint32_t id, core::TimePoint now);

  // A macro op starts at (at, key) — now, or at its transfer's end when that comes after
  // everything else it waits for: its times are known either way, and a later start's first
  // memory point is booked lazily in (time, key) order like the others (no event needed).
  inline void start_macro(std::uint32_t id, core::TimePoint at, std::uint64_t key);

  // Template op `after` of the macro in flight on s's program ended (Op::tap): as in the expanded
  // plan, where that op's end frees its tensors and starts the next op (point after + 2 of the
  // macro) before s, which it also releases.
  inline void tapped(std::uint32_t s, core::TimePoint now, std::uint64_t key);

  // A folded transfer starts when the op it waits for ends. (It books no memory: the receive
  // buffer is the receiving op's first allocation, see sim/parallel/lower.cpp.)
  void begin_arrival(std::uint32_t id, core::TimePoint now) { arrival_start[id] = now; }

  // --- Steady state --------------------------------------------------------------------------
  // A pipeline in its steady state repeats itself: one micro-batch later (an interleaved group of
  // micro-batches later) every stage runs the same units with the same lags between stages and
  // the same events, all `period` later, and its memory moves by the same change. A play of a
  // compressed plan looks for that with the period detector (period_detector.hpp) at the ends of
  // the first program's macro ops. It keeps a light mark there (per program the first op not yet
  // done and one past the last op touched — started, or waited for by an op that ended); when
  // the end of a macro op of the same template `Steady::lag` ends later finds every program as
  // far on with as many touched, it keeps a full mark (the projection of PlayState a period can
  // change, SteadyMark), and as many ends later compares a full mark of the state then with it
  // moved by one period: each program `shift[p]` ops on, its fine ids `fine_shift[p]` on, every
  // time `period` later. If they agree, no OOM point was recorded in the period, and the plan
  // from the mark's ops on repeats with the same shifts for k more periods (the same work,
  // transfers, effects, waits and successors, each successor shifted by its own program's
  // shift), the next k periods would repeat the last one exactly: the player writes them down
  // (the ops' times, the memory log's records, the ledgers moved by k changes) instead of
  // playing them, and goes on from the state k periods on. Where memory grows, k stops short of
  // a new OOM point (skip_periods).
  std::optional<Steady> steady;
  static constexpr std::uint32_t kMaxSteadyGap = 4;

  void start_steady(bool from_start);

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
  inline std::size_t program_of_fine(std::uint64_t fine) const;
  static bool pending_before(const core::EventQueue<std::uint32_t>::Event& a,
                             const core::EventQueue<std::uint32_t>::Event& b) {
    return a.time != b.time ? a.time < b.time : a.key < b.key;
  }

  // The projection of PlayState a steady-state check compares (SteadyMark): a light mark keeps
  // what changes when the state cannot repeat (the ops done and touched); a full one everything a
  // period can change, taken once a light one was seen to repeat.
  inline void mark_steady(SteadyMark& m, core::TimePoint now, bool full);

  // The anchor key of op `id` of the first program: its macro template, or where the plan has
  // no macro ops, its place among the expanded compute ops (expanded_anchors.cpp); -1: none.
  std::int32_t steady_key(std::uint32_t id) const {
    if (!steady->anchor_of.empty()) return steady->anchor_of[id];
    return records ? event_ops[id].macro() : plan.programs[0].ops[id].macro;
  }
  // At the end of an op of the first program with anchor key `key`.
  void steady_anchor(std::size_t key, core::TimePoint now);

  // Whether `now` may be `then` a period on: no OOM point since, and every program some ops on
  // with as many touched (light marks suffice). (Memory may have moved: a GPipe phase books or
  // frees a micro-batch's tensors every period.)
  inline bool moved_on(const SteadyMark& then, const SteadyMark& now) const;

  // Whether full mark `now` is full mark `then` moved by `s`: the macro ops in flight, the
  // window's ops and the events waiting (the ledgers, which may move, skip_periods compares).
  inline bool moved_by(const SteadyMark& then, const SteadyMark& now, const PeriodShift& s) const;

  // Whether op j + shift of program p repeats op j (the plan's side of a period).
  inline bool repeats(std::size_t p, std::uint32_t j, const std::vector<std::uint32_t>& shift,
                      std::uint64_t fine_shift) const;

  // Per program, the first op j >= from[p] that op j + shift[p] does not repeat (or the last
  // that has such a pair), from the plan digest when a play of the plan found it.
  inline std::vector<std::uint32_t> repeat_until(
      const std::vector<std::uint32_t>& from, const std::vector<std::uint32_t>& shift,
      const std::vector<std::uint64_t>& fine_shift) const;

  // Compares the loop's state now with mark m one period on and, when they agree, writes down
  // as many more periods as the plan repeats. False when nothing was skipped.
  inline bool skip_periods(const SteadyMark& m, core::TimePoint now);

  // Plays k periods like the one since mark m by writing them down: the ops they end take the
  // times of the ops a period back, the window of ops in progress and the events waiting move k
  // periods on, the memory log repeats the period's records.
  inline void write_down(const SteadyMark& m, std::uint64_t k, const PeriodShift& s);

  void build_graph();

  // Durations by WorkKey (work_key.hpp: an op's duration class), costed once per distinct key;
  // the tables' slots stay allocated across programs and plays (one pair per thread:
  // spare_memos).
  using DurationTable = core::FlatTable<WorkKey, core::Duration, WorkHash>;
  struct DurationTables {
    DurationTable memo, tp_memo;
    std::vector<core::Duration> class_tp;  // comm_accounting.cpp: by duration class
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

  inline MacroProfile profile(const Program& P, const parallel::MacroTemplate& t,
                              DurationTable& memo, DurationTable& tp_memo) const;

  static bool same_transfer(const parallel::CommWork& a, const parallel::CommWork& b) {
    return a.bytes == b.bytes && a.ranks == b.ranks && a.inter_node == b.inter_node &&
           a.ranks_per_node == b.ranks_per_node && a.gather_ranks == b.gather_ranks &&
           a.pod_members == b.pod_members;
  }

  // Whether the digest holds profiles costed as this play would cost them.
  inline bool kept_profiles_fit() const;
  // Hands the profiles to the digest for the plan's next play.
  void keep_profiles();

  // The plan's op numbering and work classes (the digest's when there is one).
  static PlayLayout make_layout(const Plan& plan, const DependencyGraph& g, std::size_t ops);

  void compute_durations();

  // Compute stream busy with kernels: [a, b) of one op, or a macro op's span (macro >= 0) whose
  // kernel time inside it its profile gives.
  struct Busy {
    core::TimePoint a, b;
    std::int32_t macro;
  };
  // The first of the sorted, disjoint busy intervals that ends after `a`, searched outward from
  // `hint` (the previous answer: queries come in nearly increasing order), which it updates.
  static inline std::size_t first_ending_after(core::TimePoint a, const std::vector<Busy>& busy,
                                               std::size_t& hint);

  // Part of [a, b) not covered by the sorted, disjoint busy intervals.
  static inline core::Duration uncovered(core::TimePoint a, core::TimePoint b,
                                         const std::vector<Busy>& busy,
                                         const std::vector<MacroProfile>& profiles,
                                         std::size_t& hint);

  void account();

  // --- Caching allocator -------------------------------------------------------------------
  // The program's memory effects, in the order its ledger took them, through the allocator
  // model: its peak becomes the context plus the peak reserved, its OOM points those of the
  // allocator (a request that finds no cached block and no room for a new segment, even after
  // the cache is given back).
  // `where`: the request's place in the log (see AllocatorReplay::Failure).
  inline void allocator_book(AllocatorReplay& run, const parallel::MemEffect& e,
                             std::int32_t microbatch, std::size_t record, std::uint32_t point,
                             std::uint32_t effect);

  // A failed request's OOM point, named and timed from this play's log.
  inline OomPoint failure_point(std::int32_t prog, const AllocatorReplay::Failure& f) const;

  inline void allocator_free(std::int32_t prog, AllocatorReplay& run, const Op& op,
                             const parallel::MemEffect& e, std::int32_t microbatch);

  inline void replay_record(std::int32_t prog, AllocatorReplay& run, std::size_t record);

  // Two log records do the same to the allocator with micro-batches `shift` apart.
  inline bool same_record(const Program& P, const MemRecord& x, const MemRecord& y,
                          std::int32_t shift) const;

  // --- Replays shared across plays (PlayOptions::allocator_memo) -----------------------------
  // A replay depends on the start state (the family) and on the records it read: each record's
  // kind, op micro-batch and macro, range, and the effects it books and frees (by content).
  static std::uint64_t mix(std::uint64_t h, std::uint64_t v) { return core::hash_mix(h, v); }
  // An effect by content, its layer counted from the program's first (as the allocator names it).
  static std::uint64_t fold(std::uint64_t h, const parallel::MemEffect& e,
                            std::int32_t first_layer) {
    const auto layer = static_cast<std::uint32_t>(AllocatorModel::relative_layer(e, first_layer));
    const std::uint64_t what = static_cast<std::uint64_t>(e.category) |
                               (static_cast<std::uint64_t>(e.tensor) << 8) |
                               (static_cast<std::uint64_t>(e.per_microbatch) << 16) |
                               (static_cast<std::uint64_t>(layer) << 32);
    return mix(h ^ what, static_cast<std::uint64_t>(e.bytes.value));
  }
  // The start state: what the program holds before the step. Not which program it is — stages
  // holding equal layers share replays (see model_allocator).
  std::uint64_t family(std::size_t program) const;
  // The CUDA context of a program's device, which family() leaves out.
  core::Bytes context_of(std::size_t program) const {
    return plan.programs[program].persistent[hw::MemCategory::reserved];
  }
  // The hashes of program pi's effects and templates: the digest's (filled on first use) or
  // made here.
  const PlanDigest::Program& program_hashes(std::size_t pi);
  // PlanDigest::Program::log_ops of program pi: the digest's (filled on first use) or made here.
  std::span<const PlanDigest::Program::LogOp> log_ops(std::size_t pi);
  std::vector<PlanDigest::Program::LogOp> local_log_ops;  // log_ops without a PlanDigest
  // prefix[k]: records [0, k) of the program's log. A record of allocations or frees is named by
  // its effect range and a hash of every effect up to the range's end (equal hashes: equal
  // effects, the range's included), a macro's points by the hash of its template's effects.
  // work[k]: the requests records [0, k) make of the allocator (what replaying them costs: a
  // record of a macro's points stands for hundreds, one of a reduction's buffer for one).
  void prefix_hashes(std::size_t pi, const std::vector<MemRecord>& log,
                     std::vector<std::uint64_t>& prefix, std::vector<std::uint64_t>& work);
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
      paused.push_back(without_fingerprint(
          run.model.allocator(), [&] { return std::make_shared<const AllocatorReplay>(run); }));
    }
  };

  // The log through the allocator, from record run.record. In a pipeline's steady state the
  // units repeat: when the allocator's state at the start of a unit is the state at the start of
  // an earlier unit of the same template with micro-batches shifted and the log repeats with the
  // same shift, whole periods are skipped — they would end in the same state, shifted, reaching
  // no new peak and no OOM. A fingerprint finds candidate periods (PeriodDetector, keyed by it
  // and the template); an exact (canonical) comparison decides: against the state kept at the
  // latest unit of a template not seen before (a 1F1B stage's steady state usually begins with
  // its second backward template, the first booking the parameter gradients) when the period
  // starts there, else one period later; `repetition` counts the periods the log repeats.
  // The part period after the skipped ones is jumped too when the allocator was kept that far
  // into the first period: one period later, the length is known when the confirmation starts;
  // from the kept state, it is foreseen — the period is as many micro-batches as the state's
  // live tensors span, up to the next unit of the template — and the copy serves only if the
  // period found is that one. The expanded plan has no macro ops and replays every record: the
  // reference of the fast-play tests. The state before a record therefore depends on the
  // records before it alone (the skip looks ahead to decide, but what it skips changes only
  // micro-batch indices, which it relabels): a replay paused there and resumed with another log
  // goes on exactly.
  inline void replay_log(std::int32_t prog, AllocatorReplay& run, Sharing* share);
  inline void replay_first_step(std::int32_t prog, AllocatorReplay& run);

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
  inline bool effects_alike(std::size_t a, std::size_t b);
  // How many records program b's log shares with program a's — the same kinds, ops' micro-batches
  // and macro templates, ranges and effects (by content, layers counted from each program's
  // first) — and how many allocations they make, counted up to kWorthACopy. `alike`: the two
  // programs' effects are the same throughout (equal ranges name equal effects).
  inline std::pair<std::size_t, std::uint64_t> shared_log(std::size_t a, std::size_t b,
                                                          bool alike) const;

  void stage_sources(const std::vector<std::uint64_t>& fams, std::vector<StageSource>& source,
                     std::vector<std::vector<std::size_t>>& wanted);
  // Where a program's replay pauses copies for the memo's later points (after record `at`).
  std::vector<std::size_t> memo_targets(std::size_t pi, const std::vector<std::uint64_t>& work,
                                        const AllocatorMemo::Match& m, std::size_t at);
  void model_allocator();

  void check_end_state();

  // --- Plays of one plan paused and resumed (PlanDigest::snapshots) ---------------------------
  static constexpr std::size_t kSnapshots = 2;
  std::shared_ptr<PlaySnapshot> snapshot;  // this play's, handed to the digest when it ends
  std::shared_ptr<const PlaySnapshot> resumed_from;  // the loop snapshot this play went on from
  // The costing this play's profiles are (reused) or will be once kept (keep_profiles).
  inline std::uint64_t profiles_generation() const;
  void keep_snapshot(bool at_end);
  // Whether this play's events up to snapshot s are s's: the same profiles (this play's are the
  // digest's, costed as s's were), capacities, states before the step and host memory, and every
  // op s had started lasting as long here.
  inline bool same_start(const PlaySnapshot& s) const;
  // Goes on from a kept snapshot this play starts alike, if any (the most recently used is
  // tried first and kept longest).
  enum class Resumed { no, loop, whole };
  Resumed resume();

  Timeline run();

  // The events from the start or from a snapshot taken up, then the accounts and the allocator.
  void play_on(bool from_start);
};

}  // namespace trainsim::exec
