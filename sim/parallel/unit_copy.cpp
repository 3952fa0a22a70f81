// Expanded units lowered once and copied (unit_copy.hpp).
#include "sim/parallel/unit_copy.hpp"

#include <algorithm>

namespace trainsim::parallel {

UnitCopier::UnitCopier(const LowerContext& L,
                       std::span<const std::unique_ptr<LoweringPass>> passes) {
  enabled_ = L.copy_units;
  for (const auto& pass : passes) enabled_ = enabled_ && pass->copies_units(L);
}

UnitCopier::Slots UnitCopier::slots(const StageContext& c, const UnitStep& u) {
  return {u.transfer, c.recent[0], c.recent[1], c.last_comm,
          c.param_ready, c.layer_end, c.update_op};
}

std::array<std::int8_t, UnitCopier::kSlots> UnitCopier::pattern(const Slots& s) {
  std::array<std::int8_t, kSlots> p{};
  for (std::size_t i = 0; i < kSlots; ++i) {
    p[i] = -1;
    if (s[i] < 0) continue;
    for (std::size_t j = 0; j <= i; ++j)
      if (s[j] == s[i]) {
        p[i] = static_cast<std::int8_t>(j);
        break;
      }
  }
  return p;
}

UnitCopier::Unit* UnitCopier::kind_of(const UnitStep& u, const std::array<std::int8_t, kSlots>& p) {
  for (Unit& k : kinds_)
    if (k.g == u.g && k.forward == u.forward() && k.first == u.first_microbatch &&
        k.last_mb == u.last_microbatch && k.pattern == p)
      return &k;
  return nullptr;
}

UnitCopier::Mark UnitCopier::mark(const StageContext& c, const UnitStep& u) const {
  if (!enabled_) return {};
  return {slots(c, u),         c.P.ops.size(),          c.P.effects.size(),
          c.P.deps.size(),     c.P.gemm_shapes.size(),  c.P.macros.size(),
          c.held_grads.size()};
}

std::int32_t UnitCopier::moved(const Unit& from, std::size_t to_first, const Slots& start,
                               std::int32_t x) {
  if (x < 0) return x;
  const auto i = static_cast<std::size_t>(x);
  if (i >= from.op_first && i < from.op_first + from.ops)
    return static_cast<std::int32_t>(i - from.op_first + to_first);
  for (std::size_t s = 0; s < kSlots; ++s)
    if (from.start[s] == x) return start[s];
  return -2;
}

// Unit b is unit a moved on: every op equal once its micro-batch and ranges are moved, equal
// effects, every dependency moved (moved()), the slots after it moved.
bool UnitCopier::congruent(const Program& P, const Unit& a, const Unit& b) const {
  if (a.ops != b.ops || a.effects != b.effects || a.deps != b.deps ||
      a.arrival_pending != b.arrival_pending)
    return false;
  const std::int32_t dmb = b.microbatch - a.microbatch;
  const std::uint32_t de = b.eff_first - a.eff_first, dd = b.dep_first - a.dep_first;
  for (std::size_t i = 0; i < a.ops; ++i) {
    Op x = P.ops[a.op_first + i];
    if (x.microbatch >= 0) x.microbatch += dmb;
    x.alloc_begin += de, x.alloc_end += de, x.free_begin += de, x.free_end += de;
    x.dep_begin += dd, x.dep_end += dd;
    if (!(x == P.ops[b.op_first + i])) return false;
  }
  if (!std::equal(P.effects.begin() + a.eff_first, P.effects.begin() + a.eff_first + a.effects,
                  P.effects.begin() + b.eff_first))
    return false;
  for (std::uint32_t k = 0; k < a.deps; ++k) {
    const OpRef x = P.deps[a.dep_first + k], y = P.deps[b.dep_first + k];
    if (x.program != program_ || y.program != program_ ||
        moved(a, b.op_first, b.start, x.index) != y.index)
      return false;
  }
  for (std::size_t s = 0; s < kSlots; ++s)
    if (moved(a, b.op_first, b.start, a.end[s]) != b.end[s]) return false;
  return moved(a, b.op_first, b.start, a.last) == b.last;
}

void UnitCopier::lowered(const StageContext& c, const UnitStep& u, const Mark& m,
                         std::int32_t last) {
  if (!enabled_) return;
  program_ = c.P.stage;
  const Program& P = c.P;
  Unit b;
  b.g = u.g;
  b.forward = u.forward();
  b.first = u.first_microbatch;
  b.last_mb = u.last_microbatch;
  b.pattern = pattern(m.start);
  b.op_first = m.ops;
  b.ops = P.ops.size() - m.ops;
  b.eff_first = static_cast<std::uint32_t>(m.effects);
  b.effects = static_cast<std::uint32_t>(P.effects.size() - m.effects);
  b.dep_first = static_cast<std::uint32_t>(m.deps);
  b.deps = static_cast<std::uint32_t>(P.deps.size() - m.deps);
  b.microbatch = u.microbatch();
  b.start = m.start;
  b.end = slots(c, u);
  b.last = last;
  b.arrival_pending = u.arrival_pending;
  // Only a unit that added nothing but ops, effects and dependencies may be copied.
  const bool pure = P.gemm_shapes.size() == m.gemm_shapes && P.macros.size() == m.macros &&
                    c.held_grads.size() == m.held_grads && b.end[0] == b.start[0];
  Unit* a = kind_of(u, b.pattern);
  b.congruent = pure && a && congruent(P, *a, b);
  if (a)
    *a = b;
  else
    kinds_.push_back(b);
}

bool UnitCopier::copy(StageContext& c, UnitStep& u, std::int32_t& last) {
  if (!enabled_) return false;
  program_ = c.P.stage;
  const Slots start = slots(c, u);
  Unit* a = kind_of(u, pattern(start));
  if (!a || !a->congruent || !c.B.fits(a->ops)) return false;
  Program& P = c.P;
  Unit b = *a;
  b.op_first = P.ops.size();
  b.eff_first = static_cast<std::uint32_t>(P.effects.size());
  b.dep_first = static_cast<std::uint32_t>(P.deps.size());
  b.microbatch = u.microbatch();
  b.start = start;
  // Every reference resolves (a congruent unit's do, against slots of the same pattern).
  for (std::size_t s = 0; s < kSlots; ++s) b.end[s] = moved(*a, b.op_first, start, a->end[s]);
  b.last = moved(*a, b.op_first, start, a->last);
  const std::int32_t dmb = b.microbatch - a->microbatch;
  const std::uint32_t de = b.eff_first - a->eff_first, dd = b.dep_first - a->dep_first;
  // Element by element after one reserve: a range insert from the vector into itself is not
  // allowed by the standard.
  P.effects.reserve(P.effects.size() + a->effects);
  for (std::uint32_t k = 0; k < a->effects; ++k) P.effects.push_back(P.effects[a->eff_first + k]);
  for (std::uint32_t k = 0; k < a->deps; ++k) {
    OpRef d = P.deps[a->dep_first + k];
    d.index = moved(*a, b.op_first, start, d.index);
    P.deps.push_back(d);
  }
  for (std::size_t i = 0; i < a->ops; ++i) {
    Op x = P.ops[a->op_first + i];
    if (x.microbatch >= 0) x.microbatch += dmb;
    x.alloc_begin += de, x.alloc_end += de, x.free_begin += de, x.free_end += de;
    x.dep_begin += dd, x.dep_end += dd;
    P.ops.push_back(x);
  }
  c.recent[0] = b.end[1];
  c.recent[1] = b.end[2];
  c.last_comm = b.end[3];
  c.param_ready = b.end[4];
  c.layer_end = b.end[5];
  c.update_op = b.end[6];
  u.arrival_pending = b.arrival_pending;
  last = b.last;
  *a = b;
  ++copied_;
  return true;
}

}  // namespace trainsim::parallel
