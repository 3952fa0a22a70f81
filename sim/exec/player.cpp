#include "sim/exec/player.hpp"

#include <cmath>

#include "sim/cost/contention.hpp"
#include "sim/exec/paging.hpp"
#include "sim/exec/player_internal.hpp"

namespace trainsim::exec {

std::string_view to_string(OomCause c) {
  switch (c) {
    case OomCause::model_states: return "model_states";
    case OomCause::activations: return "activations";
    case OomCause::host_memory: return "host_memory";
  }
  return "?";
}

namespace {

thread_local std::vector<std::vector<MemRecord>> spare_logs;  // see Player::run
// The per-op arrays of this thread's last play, whose buffers the next one reuses (see
// Player::run).
struct SpareArrays {
  std::vector<std::uint32_t> waiting;
  std::vector<char> done;
  std::vector<core::TimePoint> arrival_start;
};
thread_local SpareArrays spare_arrays;

}  // namespace

inline void Player::book(std::int32_t prog, std::int32_t idx, const Op* op, hw::MemCategory cat,
                         core::Bytes b, core::TimePoint now, std::uint64_t order) {
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

OomPoint Player::gpu_oom(std::int32_t prog, std::int32_t idx, const Op* op, std::int32_t microbatch,
                         hw::MemCategory cat, core::Bytes requested, const hw::MemBreakdown& in_use,
                         core::TimePoint at, std::uint64_t order) const {
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
  pt.cause =
      P.model_states.total() > P.device.memory ? OomCause::model_states : OomCause::activations;
  return pt;
}

void Player::check_host_memory() {
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

inline void Player::release(std::int32_t prog, std::int32_t idx, const Op& op, std::uint32_t begin,
                            std::uint32_t end) {
  const Program& P = plan.programs[prog];
  for (auto e = begin; e < end; ++e) {
    const auto cat = P.effects[e].category;
    TRAINSIM_CHECK(ledgers[prog].current()[cat] >= P.effects[e].bytes,
                   "stage " + std::to_string(prog) + " op " + std::to_string(idx) + " (" +
                       std::string(parallel::to_string(op.kind)) + " layer " +
                       std::to_string(op.layer) + " micro-batch " + std::to_string(op.microbatch) +
                       ") frees " + std::to_string(P.effects[e].bytes.value) + " bytes of " +
                       std::string(hw::to_string(cat)) + " but only " +
                       std::to_string(ledgers[prog].current()[cat].value) + " are held");
    ledgers[prog].release(cat, P.effects[e].bytes);
  }
}

inline void Player::apply_points(std::int32_t prog, InFlight& f, std::uint32_t upto) {
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

inline void Player::replay_points(std::int32_t prog, InFlight& f, std::uint32_t upto) {
  const Program& P = plan.programs[prog];
  const MacroProfile& m = profiles[prog][f.macro];
  for_points(
      P, f.macro, f.applied + 1, upto,
      [&](const Op& ended) { release(prog, f.index, ended, ended.free_begin, ended.free_end); },
      [&](const Op& next, std::uint32_t j) {
        Op op = next;
        op.microbatch = P.ops[f.index].microbatch;
        for (auto e = op.alloc_begin; e < op.alloc_end; ++e)
          book(prog, f.index, &op, P.effects[e].category, P.effects[e].bytes,
               f.t0 + m.offset[j - 1], effect_order(f.key0 + j - 1, e - op.alloc_begin));
      });
  f.applied = upto;
}

inline void Player::catch_up(std::int32_t prog, core::TimePoint t, std::uint64_t key) {
  InFlight& f = inflight[prog];
  if (f.id == kNone) return;
  const MacroProfile& m = profiles[prog][f.macro];
  std::uint32_t lo = f.applied, hi = m.ops();  // last point before (t, key) lies in [lo, hi]
  while (lo < hi) {
    const std::uint32_t mid = (lo + hi + 1) / 2;
    if (point_before(f, m, mid, t, key))
      lo = mid;
    else
      hi = mid - 1;
  }
  apply_points(prog, f, lo);
}

// Contention (cluster.collective_sms; docs/collectives.md): the collectives started on a device
// hold their SMs until they end, and a compute op runs on the rest while one is in flight: one
// in flight when it starts sets its duration (compute_time), one started during it postpones
// its end (hold_sms).
inline core::Duration Player::compute_time(std::uint32_t id, std::int32_t prog,
                                           core::TimePoint now) const {
  const std::uint32_t c = work_class[id];
  const core::TimePoint busy = sms_busy_until[prog];
  if (!(now < busy)) return class_time[c];
  return cost::contended(class_time[c], class_beside[c], busy - now);
}

inline void Player::hold_sms(std::int32_t prog, std::int32_t idx, core::TimePoint now,
                             core::Duration d) {
  // (a collective on the compute stream runs between compute kernels, not beside them)
  if (plan.programs[prog].ops[idx].stream == StreamKind::compute) return;
  const core::TimePoint held = sms_busy_until[prog], until = now + d;
  if (!(held < until)) return;
  sms_busy_until[prog] = until;
  // The compute op in flight on the device (the one event of its program whose class a
  // collective slows) runs beside it from `from` on, at full speed until then: what was left of
  // it at `from` becomes contended(left, left x beside / alone, until - from).
  queue.postpone_first([&](const core::EventQueue<std::uint32_t>::Event& e) {
    if (e.payload & kTapEvent || program_of[e.payload] != prog) return e.time;
    const std::uint32_t c = work_class[e.payload];
    if (!(class_time[c] < class_beside[c])) return e.time;
    const core::TimePoint began = tl.devices[prog].start[e.payload - offset[prog]];
    const core::TimePoint from = std::max({now, held, began});
    if (!(from < e.time)) return e.time;
    const core::Duration left = e.time - from;
    const double ratio = static_cast<double>(class_beside[c].ns) / class_time[c].ns;
    const core::Duration slow{std::llround(static_cast<double>(left.ns) * ratio)};
    return from + cost::contended(left, slow, until - from);
  });
}

inline void Player::start(std::uint32_t id, core::TimePoint now, std::uint64_t trigger) {
  std::int32_t prog, idx;
  const EventOp op = event_op(id, prog, idx);
  if (op.is_macro()) {
    start_macro(id, now, trigger);
    // Booked now: ops started by the same event after it (in successor order) come later.
    apply_points(prog, inflight[prog], 1);
    return;
  }
  const Program& P = plan.programs[prog];
  tl.devices[prog].start[idx] = now;
  core::Duration d = duration(id);
  if (!class_beside.empty()) {
    if (class_takes_sms[work_class[id]])
      hold_sms(prog, idx, now, d);
    else
      d = compute_time(id, prog, now);
  }
  queue.schedule(now + d, id, finish_key(id));
  if (op.alloc_begin == op.alloc_end) return;
  catch_up(prog, now, trigger);  // (a macro op returned above: its allocs are its transfer's)
  log(prog, {MemRecord::Kind::allocs, idx, op.alloc_begin, op.alloc_end, now, fine_first[id]});
  const Op* asked = &P.ops[idx];  // read only for an OOM point
  for (auto e = op.alloc_begin; e < op.alloc_end; ++e)
    book(prog, idx, asked, P.effects[e].category, P.effects[e].bytes, now,
         effect_order(fine_first[id], e - op.alloc_begin));
}

inline void Player::finish(std::uint32_t id, core::TimePoint now) {
  std::int32_t prog, idx;
  const EventOp op = event_op(id, prog, idx);
  const std::uint64_t key = finish_key(id);
  if (op.is_macro()) {
    InFlight& f = inflight[prog];
    const MacroProfile& m = profiles[prog][op.macro()];
    apply_points(prog, f, m.ops());
    log(prog, {MemRecord::Kind::tail, idx, 0, 0, now, f.key0});
    ledgers[prog].apply_run(m.level.back(), m.net);
    f = InFlight{};
  } else if (op.free_begin != op.free_end) {
    catch_up(prog, now, key);
    log(prog, {MemRecord::Kind::frees, idx, op.free_begin, op.free_end, now, key});
    release(prog, idx, plan.programs[prog].ops[idx], op.free_begin, op.free_end);
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
    if (ready < now || (ready == now && fine_first[s] < key))
      start(s, now, key);
    else
      start_macro(s, ready, fine_first[s]);
  }
}

inline void Player::start_macro(std::uint32_t id, core::TimePoint at, std::uint64_t key) {
  std::int32_t prog, idx;
  const EventOp op = event_op(id, prog, idx);
  tl.devices[prog].start[idx] = at;
  queue.schedule(at + duration(id), id, finish_key(id));
  InFlight& f = inflight[prog];
  TRAINSIM_CHECK(f.id == kNone, "two macro ops in flight on one compute stream");
  f = InFlight{id, idx, op.macro(), at, fine_first[id] + (op.arrival() ? 1 : 0), key, 0};
  if (tap_begin.empty()) return;
  // Ops waiting inside it: when its template op `after` ends, at the expanded op's end key.
  const MacroProfile& m = profiles[prog][op.macro()];
  for (auto k = tap_begin[id]; k < tap_begin[id + 1]; ++k) {
    const auto after = static_cast<std::uint32_t>(taps[k].after);
    queue.schedule(at + m.offset[after + 1], taps[k].op | kTapEvent, f.key0 + after);
  }
}

inline void Player::tapped(std::uint32_t s, core::TimePoint now, std::uint64_t key) {
  std::int32_t prog, idx;
  const Op& op = op_at(s, prog, idx);
  InFlight& f = inflight[prog];
  TRAINSIM_CHECK(f.id != kNone, "a tap outside its macro op");
  apply_points(prog, f, static_cast<std::uint32_t>(op.tap) + 2);
  TRAINSIM_CHECK(waiting[s] > 0, "op became ready twice");
  if (--waiting[s] == 0) start(s, now, key);
}

void Player::build_graph() {
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
  arrival_start = std::move(spare_arrays.arrival_start);
  arrival_start.assign(waiting.size(), core::TimePoint{});
}

void Player::check_end_state() {
  for (std::size_t p = 0; p < plan.programs.size(); ++p) {
    const hw::MemBreakdown& now = ledgers[p].current();
    const hw::MemBreakdown& start = plan.programs[p].persistent;
    for (std::size_t c = 0; c < hw::kMemCategories; ++c)
      TRAINSIM_CHECK(now.bytes[c] == start.bytes[c],
                     "device " + std::to_string(p) + " ends the step holding " +
                         std::to_string(now.bytes[c].value) + " bytes of " +
                         std::string(hw::to_string(static_cast<hw::MemCategory>(c))) +
                         " instead of " + std::to_string(start.bytes[c].value));
    TRAINSIM_CHECK(now.total() == ledgers[p].in_use(),
                   "per-category bytes do not sum to the total");
  }
}

Timeline Player::run() {
  const auto& progs = plan.programs;
  tl.devices.resize(progs.size());
  oom_seen.assign(progs.size(), 0);
  inflight.assign(progs.size(), InFlight{});
  sms_busy_until.assign(progs.size(), core::TimePoint{});
  // Logs reuse the buffers of this thread's last play (a sweep's points log similar amounts:
  // growing them anew would reallocate and fault in megabytes per point).
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
    if (snapshot->at_end) snapshot->state.tl = tl;
    auto& kept = opt.plan_digest->snapshots;
    if (kept.size() == kSnapshots) kept.erase(kept.begin());
    kept.push_back(std::move(snapshot));
  }
  return std::move(tl);
}

void Player::play_on(bool from_start) {
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
    if (steady && ev.payload < first_program_end)
      if (const std::int32_t key = steady_key(ev.payload); key >= 0) steady_anchor(key, ev.time);
  }
  // No op feeds a data-parallel all-reduce (Op::data_reduction): the all-reduce algorithm changes
  // nothing, and a later play may take the whole step.
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
  page_out_states(plan, tl);
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

Timeline play(const Plan& plan, const PlayOptions& options) {
  Player p(plan, options);
  return p.run();
}

}  // namespace trainsim::exec
