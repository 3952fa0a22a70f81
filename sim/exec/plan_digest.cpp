// What plays of one plan share (PlanDigest): each program's hashes of its memory effects and
// macro templates, and the memory log's prefix hashes the allocator memo looks replays up by.

#include "sim/exec/player_internal.hpp"

namespace trainsim::exec {

std::uint64_t Player::family(std::size_t program) const {
  const Program& P = plan.programs[program];
  std::uint64_t h = mix(0x7472616E73696D31ULL, plan.compressed && plan.steady_state);
  // Not the CUDA context: it lies outside the allocator (a replay goes on with another, see
  // AllocatorReplay::set_device).
  for (std::size_t c = 0; c < hw::kMemCategories; ++c)
    if (static_cast<hw::MemCategory>(c) != hw::MemCategory::reserved)
      h = mix(h, static_cast<std::uint64_t>(P.persistent.bytes[c].value));
  for (const auto& l : P.load)
    h = mix(mix(h, static_cast<std::uint64_t>(l.effect.bytes.value)),
            (static_cast<std::uint64_t>(l.effect.layer - P.first_layer) << 1) | (l.alloc ? 1 : 0));
  for (const auto& e : P.lazy_states) h = mix(h, static_cast<std::uint64_t>(e.bytes.value));
  return h;
}

const PlanDigest::Program& Player::program_hashes(std::size_t pi) {
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
  for (std::size_t e = 0; e < P.effects.size(); ++e)
    effects[e + 1] = fold(effects[e], P.effects[e], P.first_layer);
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
      const std::uint32_t freed =
          k > P.macros[t].begin ? P.macro_ops[k - 1].free_end - P.macro_ops[k - 1].free_begin : 0;
      q.push_back(q.back() + freed + (op.alloc_end - op.alloc_begin));
    }
    d->templates[t] = h;
  }
  d->filled = opt.plan_digest != nullptr;
  return *d;
}

std::span<const PlanDigest::Program::LogOp> Player::log_ops(std::size_t pi) {
  const Program& P = plan.programs[pi];
  std::vector<PlanDigest::Program::LogOp>* ops = &local_log_ops;
  if (opt.plan_digest) {
    auto& programs = opt.plan_digest->programs;
    if (programs.size() != plan.programs.size()) programs.assign(plan.programs.size(), {});
    ops = &programs[pi].log_ops;
    if (ops->size() == P.ops.size() && !ops->empty()) return *ops;
  }
  ops->resize(P.ops.size());
  for (std::size_t i = 0; i < P.ops.size(); ++i) {
    const Op& op = P.ops[i];
    (*ops)[i] = {(static_cast<std::uint64_t>(static_cast<std::uint32_t>(op.macro)) << 8) ^
                     (static_cast<std::uint64_t>(static_cast<std::uint32_t>(op.microbatch)) << 32),
                 op.microbatch, op.stream == parallel::StreamKind::compute};
  }
  return *ops;
}

void Player::prefix_hashes(std::size_t pi, const std::vector<MemRecord>& log,
                           std::vector<std::uint64_t>& prefix, std::vector<std::uint64_t>& work) {
  const Program& P = plan.programs[pi];
  const PlanDigest::Program& d = program_hashes(pi);
  const auto& effects = d.effects;
  const auto& templates = d.templates;
  const auto& requests = d.requests;
  const std::span<const PlanDigest::Program::LogOp> ops = log_ops(pi);
  prefix.resize(log.size() + 1);
  prefix[0] = 0;
  work.resize(log.size() + 1);
  work[0] = 0;
  auto step = [&](std::size_t k) {  // record k: prefix[k + 1] and work[k + 1]
    const MemRecord& r = log[k];
    const bool effects_range =
        r.kind == MemRecord::Kind::allocs || r.kind == MemRecord::Kind::frees;
    // Records of a macro's points and tails name its template: only they read the op.
    const std::size_t macro =
        effects_range ? 0 : static_cast<std::size_t>(P.ops[static_cast<std::size_t>(r.index)].macro);
    std::uint64_t w = 1;  // a tail: the last op's frees
    if (effects_range) {
      w = r.b - r.a;
    } else if (r.kind == MemRecord::Kind::points) {
      const auto& q = requests[macro];
      w = q[r.b] - q[r.a - 1];
    }
    work[k + 1] = work[k] + w;
    const std::uint64_t w1 =
        static_cast<std::uint64_t>(r.kind) ^ ops[static_cast<std::size_t>(r.index)].word;
    const std::uint64_t w2 =
        static_cast<std::uint64_t>(r.a) | (static_cast<std::uint64_t>(r.b) << 32);
    // The record's own hash does not wait for the chain; the chain takes it in with one
    // multiply-add (modulo 2^64 by an odd number: two logs that differ in one record differ in
    // every prefix from there on).
    const std::uint64_t h = mix(mix(w1, w2), effects_range ? effects[r.b] : templates[macro]);
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
    const std::size_t logged = snapshot->state.memlog[pi].size();
    snapshot->log_prefix.resize(plan.programs.size());
    snapshot->log_work.resize(plan.programs.size());
    snapshot->log_prefix[pi].assign(prefix.begin(),
                                    prefix.begin() + static_cast<std::ptrdiff_t>(logged) + 1);
    snapshot->log_work[pi].assign(work.begin(),
                                  work.begin() + static_cast<std::ptrdiff_t>(logged) + 1);
  }
}

}  // namespace trainsim::exec
