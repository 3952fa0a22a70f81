// Communication accounting after the loop: busy time per stream, communication time by purpose
// and how much of it compute did not hide.
#include <array>

#include "sim/exec/player_internal.hpp"

namespace trainsim::exec {

inline std::size_t Player::first_ending_after(core::TimePoint a, const std::vector<Busy>& busy,
                                              std::size_t& hint) {
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

inline core::Duration Player::uncovered(core::TimePoint a, core::TimePoint b,
                                        const std::vector<Busy>& busy,
                                        const std::vector<MacroProfile>& profiles,
                                        std::size_t& hint) {
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

void Player::account() {
  core::TimePoint end{}, pipe_end{};
  // Per-purpose sums kept in an array and moved into tl.comm at the end: a map lookup per op
  // cost more than the rest of this loop. (Sums of non-negative durations: any order is exact.)
  constexpr std::size_t kPurposes = parallel::kCommPurposes;
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
    return s && s->state.waiting[id] == 0 && end <= s->at;
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
    // Tensor-parallel part of each compute op, costed once per duration class (the ops of a
    // class have one duration, tensor-parallel part included: exec::work_key, work_key.hpp).
    std::vector<core::Duration>& tp_of = spare_memos().class_tp;
    tp_of.assign(class_time.size(), core::Duration{-1});
    auto tp_time = [&](const Op& op, std::uint32_t id) -> core::Duration {
      if (op.macro >= 0) return profiles[p][op.macro].tp;
      if (op.tp_collectives == 0) return {};
      core::Duration& d = tp_of[work_class[id]];
      if (d.ns < 0) d = tensor_parallel_time(plan, P, op);
      return d;
    };
    for (std::size_t i = 0; i < P.ops.size(); ++i) {
      const Op& op = P.ops[i];
      d.end = std::max(d.end, d.finish[i]);
      if (op.stream == StreamKind::compute) {
        const core::Duration span = d.finish[i] - d.start[i];
        d.compute_busy += span;
        if (!class_beside.empty())
          d.contention += span - duration(offset[p] + static_cast<std::uint32_t>(i));
        if (op.kind != OpKind::optimizer) {
          d.pipeline_busy += span;
          pipe_end = std::max(pipe_end, d.finish[i]);
        }
        // Compute hides other traffic only while its kernels run, not during its own
        // tensor-parallel collectives.
        const core::Duration tp = tp_time(op, offset[p] + static_cast<std::uint32_t>(i));
        if (op.macro >= 0)
          busy.push_back({d.start[i], d.finish[i], op.macro});
        else if (op.purpose == parallel::CommPurpose::none)
          busy.push_back({d.start[i], d.finish[i] - tp, -1});
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
        if (d.arrival_start.empty()) {
          d.arrival_start.assign(P.ops.size(), core::TimePoint{});
          d.arrival_end.assign(P.ops.size(), core::TimePoint{});
        }
        d.arrival_start[i] = a;
        d.arrival_end[i] = b;
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
      c.exposed += op.stream == StreamKind::compute
                       ? span
                       : uncovered(d.start[i], d.finish[i], busy, profiles[p], hint);
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

}  // namespace trainsim::exec
