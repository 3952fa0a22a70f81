// The memory log through the caching-allocator model after the loop: replays skipping repeated
// periods, shared between a pipeline's stages and, through the allocator memo, between plays.
#include <unordered_set>

#include "sim/exec/first_step_states.hpp"
#include "sim/exec/player_internal.hpp"

namespace trainsim::exec {

namespace {

thread_local std::vector<std::uint64_t> spare_work;  // see Player::model_allocator

// What Player::replay_log keeps as it looks for repeated periods of the log.
constexpr std::size_t kNever = ~std::size_t{0};
// The start of a unit of a macro for one micro-batch.
struct Anchor {
  std::size_t record = kNever;
  std::int32_t microbatch = 0;
};
// A state kept exactly at an anchor: the canonical blocks relative to its micro-batch, the
// next segment's address and the failed requests so far.
struct Kept {
  std::size_t record = kNever;
  std::vector<hw::CachingAllocator::CanonicalBlock> blocks;
  std::int64_t next_address = 0, failures = 0;
};
// The allocator to keep before record `at`, some records into a period, for a skip of
// `period` records and `shift` micro-batches confirmed where that period ends (`model` once
// kept).
struct Ahead {
  std::size_t at = kNever, period = 0;
  std::int32_t shift = 0;
  std::optional<AllocatorModel> model;
};

}  // namespace

inline void Player::allocator_book(AllocatorReplay& run, const parallel::MemEffect& e,
                                   std::int32_t microbatch, std::size_t record, std::uint32_t point,
                                   std::uint32_t effect) {
  const auto r = run.model.allocate(e, microbatch);
  // The peak is the most the device holds (context + reserved); of the moments it holds that
  // much, the breakdown shows the one whose tensors take the most of it (the earliest if tied).
  const core::Bytes total = run.model.total();
  if (total > run.peak ||
      (total == run.peak &&
       run.model.tensors_total() + run.at_peak[hw::MemCategory::allocator_cache] > run.peak)) {
    run.peak = total;
    run.at_peak = run.model.state();
  }
  if (r.fits) return;
  // What was in use before the request: the tensors without it, the cache without its segment.
  const std::int64_t reserved = run.model.allocator().reserved();  // with the segment booked anyway
  const bool rise = run.rises.empty() || reserved > run.rises.back().reserved;
  const bool recorded =
      ++run.failures == 1 || opt.all_ooms;  // the first, unless every one is asked for
  if (!rise && !recorded) return;
  hw::MemBreakdown before = run.model.state();
  before[e.category] -= e.bytes;
  before[hw::MemCategory::allocator_cache] += e.bytes - core::Bytes{r.new_segment};
  const AllocatorReplay::Failure f{
      record, point, effect, e.category, e.bytes, before, core::Bytes{r.new_segment}};
  if (rise) run.rises.push_back({reserved, f});
  if (recorded) run.failed.push_back(f);
}

inline OomPoint Player::failure_point(std::int32_t prog, const AllocatorReplay::Failure& f) const {
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

inline void Player::allocator_free(std::int32_t prog, AllocatorReplay& run, const Op& op,
                                   const parallel::MemEffect& e, std::int32_t microbatch) {
  TRAINSIM_CHECK(run.model.release(e, microbatch),
                 "stage " + std::to_string(prog) + ": " +
                     std::string(parallel::to_string(op.kind)) + " of layer " +
                     std::to_string(op.layer) + " micro-batch " + std::to_string(microbatch) +
                     " frees a tensor the allocator does not hold");
}

inline void Player::replay_record(std::int32_t prog, AllocatorReplay& run, std::size_t record) {
  const MemRecord& r = memlog[prog][record];
  const Program& P = plan.programs[prog];
  const Op& op = P.ops[r.index];
  switch (r.kind) {
    case MemRecord::Kind::allocs: {
      for (auto e = r.a; e < r.b; ++e)
        allocator_book(run, P.effects[e], op.microbatch, record, 0, e);
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

// training.optimizer_states: lazy. The whole log once, as the first step: the optimizer states
// are created tensor by tensor as its optimizer step begins (FirstStepStates), in the segments
// the step's activations left cached. A state that does not fit is reported as the model
// states' (before the step).
inline void Player::replay_first_step(std::int32_t prog, AllocatorReplay& run) {
  const std::vector<MemRecord>& log = memlog[prog];
  FirstStepStates states(plan.programs[prog]);
  auto create = [&](std::span<const parallel::MemEffect> effects) {
    for (const auto& e : effects) allocator_book(run, e, -1, AllocatorReplay::kBeforeStep, 0, 0);
  };
  for (std::size_t r = 0; r < log.size(); ++r) {
    create(states.before(log[r].index));
    replay_record(prog, run, r);
  }
  create(states.at_end());
}

inline bool Player::same_record(const Program& P, const MemRecord& x, const MemRecord& y,
                                std::int32_t shift) const {
  if (x.kind != y.kind) return false;
  const Op& a = P.ops[x.index];
  const Op& b = P.ops[y.index];
  if (a.microbatch < 0 || b.microbatch != a.microbatch + shift) return false;
  if (x.kind == MemRecord::Kind::points || x.kind == MemRecord::Kind::tail)
    return a.macro == b.macro && x.a == y.a && x.b == y.b;
  if (x.b - x.a != y.b - y.a) return false;
  return std::equal(P.effects.begin() + x.a, P.effects.begin() + x.b, P.effects.begin() + y.a);
}

inline void Player::replay_log(std::int32_t prog, AllocatorReplay& run, Sharing* share) {
  const Program& P = plan.programs[prog];
  const std::vector<MemRecord>& log = memlog[prog];
  hw::CachingAllocator& alloc = run.model.allocator();
  const bool skipping = plan.compressed && plan.steady_state;
  auto anchor_at = [&](std::size_t x) {  // the start of a unit of a macro for one micro-batch
    const MemRecord& rec = log[x];
    return skipping && rec.kind == MemRecord::Kind::points && rec.a == 1 &&
           P.ops[rec.index].microbatch >= 0;
  };
  // Anchors keyed by the allocator's fingerprint and the template (period_detector.hpp).
  PeriodDetector<Anchor> anchors;
  auto keep = [&](std::size_t r, std::int32_t microbatch) {
    return Kept{r, alloc.canonical(microbatch + 1), alloc.next_address(), run.failures};
  };
  auto same_state = [&](const Kept& k, std::int32_t microbatch) {  // the state now is k's, shifted
    return run.failures == k.failures && alloc.next_address() == k.next_address &&
           alloc.canonical(microbatch + 1) == k.blocks;
  };
  // How the log goes on repeating from `from` (`period` records, micro-batches `shift` apart).
  auto repeats = [&](std::size_t from, std::size_t period, std::int32_t shift) {
    return repetition(from, period, log.size(), [&](std::size_t a, std::size_t b) {
      return same_record(P, log[a], log[b], shift);
    });
  };
  Ahead ahead;
  // From r, a period of `period` records (micro-batches `shift` apart) is confirmed: skip the
  // whole periods that repeat and, when the allocator was kept as far into the first period as
  // the repetition goes past them, that part too.
  auto skip = [&](std::size_t& r, std::size_t period, std::int32_t shift) {
    const Repetition rep = repeats(r, period, shift);
    if (ahead.model && ahead.period == period && ahead.shift == shift &&
        ahead.at + period == r + rep.part) {  // the state after them is the kept one, shifted
      const std::int64_t peak_allocated = alloc.peak_allocated(),
                         peak_reserved = alloc.peak_reserved();
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
  auto foresee = [&](std::size_t r0, std::int32_t microbatch, std::int32_t macro) {
    const std::int64_t span = alloc.index_span();
    if (span <= 0) return Ahead{};
    const std::int64_t target = microbatch + span;
    for (std::size_t x = r0 + 1; x < log.size(); ++x) {
      if (!anchor_at(x) || P.ops[log[x].index].macro != macro) continue;
      const std::int32_t m = P.ops[log[x].index].microbatch;
      if (m > target) break;
      if (m < target) continue;
      const Repetition rep = repeats(x, x - r0, static_cast<std::int32_t>(span));
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
    if (share && share->next < share->targets.size() && r >= share->targets[share->next])
      share->offer(run, r);
    if (r == ahead.at && !ahead.model)
      ahead.model = without_fingerprint(alloc, [&] { return run.model; });
    if (anchor_at(r)) {
      const Op& op = P.ops[log[r].index];
      const std::int32_t microbatch = op.microbatch;
      if (confirming && r == start + period) {
        confirming = false;
        if (same_state(at_start, microbatch) && skip(r, period, shift)) continue;
        ahead = Ahead{};
      }
      if (!confirming) {
        if (seen.insert(op.macro).second && r > run.record) {
          probe = keep(r, microbatch);
          ahead = foresee(r, microbatch, op.macro);
        }
        const std::uint64_t h = alloc.fingerprint(microbatch + 1) ^
                                (static_cast<std::uint64_t>(op.macro) * 0x9E3779B97F4A7C15ULL);
        const auto [found, earlier] = anchors.exchange(h, Anchor{r, microbatch});
        if (found) {
          const bool from_probe = earlier.record == probe.record;
          period = r - earlier.record;
          shift = microbatch - earlier.microbatch;
          if (shift > 0 && repeats(r, period, shift).periods > 0) {
            // The period from the probe to here repeats: skip now.
            if (from_probe && same_state(probe, microbatch) && skip(r, period, shift)) continue;
            confirming = true;
            start = r;
            at_start = keep(r, microbatch);
            const Repetition rep = repeats(start + period, period, shift);
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

inline bool Player::effects_alike(std::size_t a, std::size_t b) {
  if (!opt.plan_digest || plan.programs[a].effects.size() != plan.programs[b].effects.size())
    return false;
  const std::uint64_t ha = program_hashes(a).effects.back();
  return ha == program_hashes(b).effects.back();
}

inline std::pair<std::size_t, std::uint64_t> Player::shared_log(std::size_t a, std::size_t b,
                                                                bool alike) const {
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
          AllocatorModel::relative_layer(x, A.first_layer) !=
              AllocatorModel::relative_layer(y, B.first_layer))
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
    if (x.kind != y.kind || x.a != y.a || x.b != y.b || u.microbatch != v.microbatch ||
        u.macro != v.macro)
      break;
    if (x.kind == MemRecord::Kind::allocs || x.kind == MemRecord::Kind::frees) {
      if (!same_effects(x.a, x.b, y.a, y.b)) break;
      if (x.kind == MemRecord::Kind::allocs) allocations += x.b - x.a;
    } else {
      if (u.macro < 0 || static_cast<std::size_t>(u.macro) >= same_template.size() ||
          !same_macro(u.macro))
        break;
      if (x.kind == MemRecord::Kind::points && allocations < kWorthACopy) {
        const parallel::MacroTemplate& t = A.macros[static_cast<std::size_t>(u.macro)];
        for (std::uint32_t j = x.a; j <= x.b && j >= 1 && t.begin + j - 1 < t.end; ++j)
          allocations +=
              A.macro_ops[t.begin + j - 1].alloc_end - A.macro_ops[t.begin + j - 1].alloc_begin;
      }
    }
  }
  return {k, allocations};
}

// For each program, the earlier one of its family and capacity whose log it goes on from, and
// where; per program, the records where later ones go on (`wanted`).
void Player::stage_sources(const std::vector<std::uint64_t>& fams, std::vector<StageSource>& source,
                           std::vector<std::vector<std::size_t>>& wanted) {
  const std::size_t n = plan.programs.size();
  for (std::size_t i = 1; i < n; ++i) {
    if (!plan.programs[i].lazy_states.empty()) continue;  // see model_allocator
    const std::int64_t capacity = AllocatorModel::capacity(plan.programs[i]).value;
    std::size_t j = 0;
    while (j < i &&
           (fams[j] != fams[i] || AllocatorModel::capacity(plan.programs[j]).value != capacity ||
            !(context_of(j) == context_of(i))))
      ++j;
    if (j == i) continue;
    const auto [k, allocations] = shared_log(j, i, effects_alike(j, i));
    if (allocations < kWorthACopy) continue;
    source[i] = {static_cast<std::int32_t>(j), k};
    wanted[j].push_back(k);
  }
}

// Pause a copy where this log parts from the closest stored one (the next point of the
// same kind is likely to part there too) and before its first record of an op off the
// compute stream: the records before it come from compute ops alone, in program order,
// so points that differ only in timing (links, all-reduce algorithm, another device's
// speed) log the same up to there — the first data-parallel reduction, in the last
// backward (pipeline transfers book nothing: their receivers' compute does). When no log
// is close and that record comes early, at 15/16 of its requests instead (docs/performance.md,
// "Where to pause").
std::vector<std::size_t> Player::memo_targets(std::size_t pi,
                                              const std::vector<std::uint64_t>& work,
                                              const AllocatorMemo::Match& m, std::size_t at) {
  const std::uint64_t total = work.back();
  auto record_at = [&](std::uint64_t w) {
    return static_cast<std::size_t>(std::lower_bound(work.begin(), work.end(), w) - work.begin());
  };
  std::vector<std::size_t> targets;
  const std::vector<MemRecord>& log = memlog[pi];
  const std::span<const PlanDigest::Program::LogOp> ops = log_ops(pi);
  auto op_of = [&](const MemRecord& r) { return ops[static_cast<std::size_t>(r.index)]; };
  const auto timed = static_cast<std::size_t>(
      std::find_if(log.begin(), log.end(), [&](const MemRecord& r) { return !op_of(r).compute; }) -
      log.begin());
  const bool timed_late = timed < log.size() && work[timed] >= total / 2;
  // Before the last micro-batch's first record: a point with a larger global batch logs the
  // same up to there (more forwards follow instead of the cooldown's backwards).
  const auto last = static_cast<std::size_t>(std::find_if(log.begin(), log.end(),
                                                          [&](const MemRecord& r) {
                                                            return op_of(r).microbatch ==
                                                                   plan.microbatches - 1;
                                                          }) -
                                             log.begin());
  if (work[m.shared] >= total / 2) {
    if (work[m.shared] >= work[at] + total / 8) targets = {m.shared};
    if (last < log.size() && last > m.shared &&
        work[last] >= std::max(work[m.shared], work[at]) + total / 8)
      targets.push_back(last);
    if (timed_late && timed > m.shared && work[timed] >= work[at] + total / 8)
      targets.push_back(timed);
  } else if (m.promising) {
    targets = {timed_late ? timed : record_at(total - total / 16)};
    if (last < targets[0] && work[last] >= work[at] + total / 8)
      targets.insert(targets.begin(), last);
  }
  // A log whose records all come from compute ops (no bucket buffers: parallel.bucket_buffers
  // in_place or persistent) is the same for every link and all-reduce algorithm: its end
  // state, paused, is the whole outcome of this point's timing variants.
  if (timed == log.size()) targets.push_back(log.size());
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  std::erase_if(targets, [&](std::size_t t) { return t <= at; });
  return targets;
}

void Player::model_allocator() {
  std::vector<OomPoint> kept;
  for (const auto& o : tl.ooms)
    if (o.cause == OomCause::host_memory) kept.push_back(o);
  const std::size_t n = plan.programs.size();
  std::vector<std::uint64_t> fams(n);
  for (std::size_t pi = 0; pi < n; ++pi) fams[pi] = family(pi);
  std::vector<StageSource> source(n);
  std::vector<std::vector<std::size_t>> wanted(n);  // records where later programs go on
  if (plan.compressed && opt.share_stages) stage_sources(fams, source, wanted);
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
        if (from->record == records)
          whole = from;
        else
          run = *from;
        resumed = true;
        tl.devices[pi].replay_source = source[pi].program;
        tl.devices[pi].replay_shared = from->record;
      }
    }
    std::size_t at = whole ? records : run.record;  // where this program's replay goes on
    // Whether a later program of this play goes on from this log's end.
    const bool end_wanted =
        std::find(wanted[pi].begin(), wanted[pi].end(), records) != wanted[pi].end();
    std::optional<Sharing> share;
    std::shared_ptr<AllocatorMemo::Prefix> prefix;
    // In the memo, by stage too: a stage's log is most like the same stage's at the point before
    // (and the memo keeps a few logs per family).
    const std::uint64_t fam = mix(fams[pi], pi);
    // (A first step played before the step (lazy optimizer states) makes the state at each
    // record depend on the whole log: no replay of another log goes on for it.)
    if (opt.allocator_memo && !opt.all_ooms && P.lazy_states.empty() &&
        opt.allocator_memo->worth_looking()) {
      prefix = std::make_shared<AllocatorMemo::Prefix>();
      std::vector<std::uint64_t>& work = spare_work;
      prefix_hashes(pi, memlog[pi], *prefix, work);
      // Fractions of the log are fractions of its requests: the record where they reach w.
      const std::uint64_t total = work.back();
      auto record_at = [&](std::uint64_t w) {
        return static_cast<std::size_t>(std::lower_bound(work.begin(), work.end(), w) -
                                        work.begin());
      };
      const AllocatorMemo::Match m = opt.allocator_memo->find(fam, context_of(pi).value, *prefix,
                                                              capacity, record_at(total / 2));
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
      // Pause copies for later points (memo_targets).
      share.emplace();
      share->targets = memo_targets(pi, work, m, at);
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
        if (!P.load.empty() || !P.lazy_states.empty()) {
          for (const auto& l : P.load) {
            if (l.alloc) allocator_book(run, l.effect, -1, AllocatorReplay::kBeforeStep, 0, 0);
            else TRAINSIM_CHECK(run.model.release(l.effect, -1), "the model's load frees a tensor it does not hold");
          }
          if (!P.lazy_states.empty()) replay_first_step(prog, run);
          run.model.end_load();
          run.peak = run.model.total();
          run.at_peak = run.model.state();
        }
      }
      if (plan.compressed && plan.steady_state) run.model.allocator().keep_fingerprint();
      replay_log(prog, run, share ? &*share : nullptr);
    }
    if (share) {
      if (!wanted[pi].empty()) paused[pi] = share->paused;
      if (prefix)
        opt.allocator_memo->add(fam, context_of(pi).value, std::move(prefix),
                                std::move(share->paused));
    }
    const AllocatorReplay::Outcome o =
        (whole ? *whole : run).outcome(core::Bytes{capacity}, context_of(pi));
    TRAINSIM_CHECK(
        o.tensors == P.persistent.total(),
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

}  // namespace trainsim::exec
