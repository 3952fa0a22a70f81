// Steady-state skipping: periods of a pipeline's steady state that repeat the one before are
// written down instead of played (PlayOptions::steady_skip).
#include <limits>

#include "sim/exec/player_internal.hpp"

namespace trainsim::exec {

void Player::start_steady(bool from_start) {
  if (!from_start || !opt.steady_skip || !plan.compressed || !taps.empty() ||
      plan.programs.empty())
    return;
  std::size_t keys = plan.programs[0].macros.size();
  std::vector<std::int32_t> anchors;
  if (keys == 0) anchors = expanded_anchor_keys(plan.programs[0], keys);
  if (keys == 0) return;
  steady.emplace();
  steady->anchor_of = std::move(anchors);
  steady->lo.assign(plan.programs.size(), 0);
  steady->end.assign(plan.programs.size(), 0);
  steady->lag = plan.steady_lag;
  steady->seen.assign(keys, 0);
}

inline std::size_t Player::program_of_fine(std::uint64_t fine) const {
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

inline void Player::mark_steady(SteadyMark& m, core::TimePoint now, bool full) {
  // Every member of PlayState by name (read-only): a member added there does not compile here
  // until it has its place in the projection.
  const auto& [tl, ledgers, waiting, done, oom_seen, arrival_start, queue, inflight, memlog,
               sms_busy_until] = static_cast<const PlayState&>(*this);
  (void)oom_seen;  // set with its program's first OOM point: follows the OOM points counted
  const std::size_t n = plan.programs.size();
  const Steady& st = *steady;
  m.valid = true;
  m.full = full;
  m.at = now;
  m.lo = st.lo;
  m.end = st.end;
  m.events = queue.events_run();
  m.ooms = tl.ooms.size();
  if (!full) return;
  m.level.resize(n);
  m.peak.resize(n);
  for (std::size_t p = 0; p < n; ++p) {
    m.level[p] = ledgers[p].current();
    m.peak[p] = ledgers[p].peak();
  }
  m.state_begin.resize(n + 1);
  m.states.clear();
  for (std::size_t p = 0; p < n; ++p) {
    m.state_begin[p] = static_cast<std::uint32_t>(m.states.size());
    const DeviceTimeline& d = tl.devices[p];
    for (std::uint32_t i = st.lo[p]; i < st.end[p]; ++i) {
      const std::uint32_t id = offset[p] + i;
      m.states.push_back({d.start[i], d.finish[i], arrival_start[id], waiting[id], done[id]});
    }
  }
  m.state_begin[n] = static_cast<std::uint32_t>(m.states.size());
  m.inflight = inflight;
  // SMs held until a time already past hold nothing from now on: now stands for it.
  m.sms_busy.clear();
  for (const core::TimePoint b : sms_busy_until) m.sms_busy.push_back(std::max(b, now));
  m.pending.clear();
  queue.for_each([&](const auto& e) { m.pending.push_back(e); });
  std::sort(m.pending.begin(), m.pending.end(), pending_before);
  m.logged.resize(n);
  for (std::size_t p = 0; p < n; ++p) m.logged[p] = memlog[p].size();
}

void Player::steady_anchor(std::size_t t, core::TimePoint now) {
  Steady& st = *steady;
  SteadyMark& m = st.marks.at(t * st.lag + st.seen[t]++ % st.lag);
  if (m.valid) {
    if (!m.full) {
      mark_steady(st.now, now, false);
      if (moved_on(m, st.now)) {
        mark_steady(m, now, true);
        return;
      }
    } else if (skip_periods(m, now)) {
      st.marks.for_each([](SteadyMark& k) { k.valid = false; });
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

inline bool Player::moved_on(const SteadyMark& then, const SteadyMark& now) const {
  if (now.at <= then.at || now.ooms != then.ooms) return false;
  for (std::size_t p = 0; p < plan.programs.size(); ++p) {
    const auto ops = static_cast<std::uint32_t>(plan.programs[p].ops.size());
    if (now.lo[p] <= then.lo[p] || now.lo[p] >= ops || now.end[p] < now.lo[p] ||
        then.end[p] < then.lo[p] || now.end[p] - then.end[p] != now.lo[p] - then.lo[p])
      return false;
  }
  return true;
}

inline bool Player::moved_by(const SteadyMark& then, const SteadyMark& now,
                             const PeriodShift& s) const {
  const std::size_t n = plan.programs.size();
  auto moved = [&](core::TimePoint was, core::TimePoint is) { return is == later(was, s.period); };
  if (now.pending.size() != then.pending.size()) return false;
  // The macro ops in flight.
  for (std::size_t p = 0; p < n; ++p) {
    const InFlight& a = then.inflight[p];
    const InFlight& b = now.inflight[p];
    if ((a.id == kNone) != (b.id == kNone)) return false;
    if (a.id == kNone) continue;
    if (b.id != a.id + s.shift[p] || b.macro != a.macro || b.applied != a.applied ||
        b.t0 != a.t0 + s.period || b.key0 != a.key0 + s.fine_shift[p] ||
        b.start_key != a.start_key + s.fine_shift[program_of_fine(a.start_key)])
      return false;
  }
  for (std::size_t p = 0; p < now.sms_busy.size(); ++p)
    if (now.sms_busy[p] != then.sms_busy[p] + s.period) return false;
  // The ops between the first not done and the last touched (windows as wide: moved_on).
  for (std::size_t p = 0; p < n; ++p)
    for (std::uint32_t i = 0; i < then.end[p] - then.lo[p]; ++i) {
      const OpState& a = then.states[then.state_begin[p] + i];
      const OpState& b = now.states[now.state_begin[p] + i];
      if (a.done != b.done || a.waiting != b.waiting || !moved(a.start, b.start) ||
          !moved(a.finish, b.finish) || !moved(a.arrival, b.arrival))
        return false;
    }
  // The events waiting.
  for (std::size_t i = 0; i < now.pending.size(); ++i) {
    const auto& a = then.pending[i];
    const auto& b = now.pending[i];
    const auto q = program_of[a.payload];
    if (b.payload != a.payload + s.shift[q] || b.time != a.time + s.period ||
        b.key != a.key + s.fine_shift[q])
      return false;
  }
  return true;
}

inline bool Player::repeats(std::size_t p, std::uint32_t j, const std::vector<std::uint32_t>& shift,
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

inline std::vector<std::uint32_t> Player::repeat_until(
    const std::vector<std::uint32_t>& from, const std::vector<std::uint32_t>& shift,
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
    // Up to a known run (its pairs repeat), or to the first pair that does not: ops x from
    // j + shift on that repeat op x - shift.
    const std::uint32_t stop = known && j < known->from[p] ? known->from[p] : ops;
    const std::uint32_t d = shift[p];
    const Repetition rep =
        repetition(j + d, d, std::min<std::size_t>(std::size_t{stop} + d, ops),
                   [&](std::size_t a, std::size_t) {
                     return repeats(p, static_cast<std::uint32_t>(a), shift, fine_shift[p]);
                   });
    j += static_cast<std::uint32_t>(rep.items(d));
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

inline bool Player::skip_periods(const SteadyMark& m, core::TimePoint now) {
  Steady& st = *steady;
  const std::size_t n = plan.programs.size();
  SteadyMark& state = st.now;
  mark_steady(state, now, false);
  if (!moved_on(m, state)) return false;
  PeriodShift s{now - m.at, std::vector<std::uint32_t>(n), std::vector<std::uint64_t>(n)};
  for (std::size_t p = 0; p < n; ++p) {
    s.shift[p] = st.lo[p] - m.lo[p];
    s.fine_shift[p] = fine_first[offset[p] + st.lo[p]] - fine_first[offset[p] + m.lo[p]];
  }
  if (queue.size() != m.pending.size()) return false;
  mark_steady(state, now, true);
  if (!moved_by(m, state, s)) return false;
  // How many more periods the plan repeats: pairs (j, j + shift) from the mark's first op on,
  // up to the last op touched k periods on. Another play of the plan may have found where.
  const std::vector<std::uint32_t> until = repeat_until(m.lo, s.shift, s.fine_shift);
  std::uint64_t k = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t p = 0; p < n; ++p) {
    // Pairs from m.lo up to until - 1 repeat; k periods need them up to end - 1 + (k - 1) shift.
    if (until[p] < st.end[p]) return false;
    k = std::min<std::uint64_t>(k, (until[p] - st.end[p]) / s.shift[p] + 1);
  }
  // Memory: each period books the same effects, so every state of period r + 1 is the state of
  // the last period moved by r times its change. A change that frees (or none) makes no new
  // peak. One that books must have made the peak in the last period (so its highest state is
  // the ledger's at_peak, and each later period's is that moved on), and no program may pass
  // its capacity where that would record an OOM point.
  for (std::size_t p = 0; p < n; ++p) {
    const std::int64_t grows = (state.level[p].total() - m.level[p].total()).value;
    if (grows <= 0) continue;
    if (!(state.peak[p] > m.peak[p])) return false;
    if (oom_seen[p] && !opt.all_ooms) continue;
    const std::int64_t room = (ledgers[p].capacity() - state.peak[p]).value;
    if (room < grows) return false;
    k = std::min<std::uint64_t>(k, static_cast<std::uint64_t>(room / grows));
  }
  write_down(m, k, s);
  return true;
}

inline void Player::write_down(const SteadyMark& m, std::uint64_t k, const PeriodShift& s) {
  Steady& st = *steady;
  const core::Duration period = s.period;
  const std::vector<std::uint32_t>& shift = s.shift;
  const std::vector<std::uint64_t>& fine_shift = s.fine_shift;
  const std::size_t n = plan.programs.size();
  const auto kk = static_cast<std::uint32_t>(k);
  const core::Duration span{period.ns * static_cast<std::int64_t>(k)};
  std::vector<OpState> window;
  for (std::size_t p = 0; p < n; ++p) {
    const Program& P = plan.programs[p];
    const std::uint32_t d = shift[p], lo = st.lo[p], end = st.end[p], base = offset[p];
    window.clear();
    for (std::uint32_t i = lo; i < end; ++i) window.push_back(op_state(base + i));
    // Ended within the k periods: as the op a period back, a period later (op_state and
    // set_op_state, array by array within the program).
    DeviceTimeline& dev = tl.devices[p];
    for (std::uint32_t i = lo; i < lo + kk * d; ++i) {
      const std::uint32_t g = base + i;
      dev.start[i] = dev.start[i - d] + period;
      dev.finish[i] = dev.finish[i - d] + period;
      arrival_start[g] =
          arrival_from[g] != kNone ? arrival_start[g - d] + period : arrival_start[g - d];
      waiting[g] = waiting[g - d];
      done[g] = done[g - d];
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
    sms_busy_until[p] = sms_busy_until[p] + span;
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
        const EventOp op = event_op(g);  // (an allocs or frees record never names a macro op)
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
            rec.key = fine_first[g] + (op.arrival() ? 1 : 0);
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

}  // namespace trainsim::exec
