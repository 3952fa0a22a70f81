#pragma once
// Expanded units lowered once and copied (LowerOptions::copy_units). A unit that stays expanded
// (ZeRO-3's gathers, FSDP's, expert and context parallelism gate its compute ops) is lowered
// through every pass, op by op; in a pipeline's steady state each such unit is the one before it
// of its kind — same chunk and direction — with the micro-batch moved on. Once two consecutive
// units of a kind, both lowered the plain way, are found congruent (same ops, effects and
// dependencies, the micro-batch moved, each op reference inside the unit moved with it and each
// outside it the same slot of the stage's state: the unit's transfer, the last compute ops, the
// last comm op, ...), later units of the kind are copied from the last one instead of lowered.
// Passes whose own state a unit changes say so (LoweringPass::copies_units); the plain walk is
// the oracle (tests/parallel/unit_copy_test.cpp compares whole plans).
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

class UnitCopier {
 public:
  // The stage's op references a unit may read from before it: its transfer, the last two compute
  // ops, the last comm op, the parameters' op, the layer's last compute op and the update.
  static constexpr std::size_t kSlots = 7;
  using Slots = std::array<std::int32_t, kSlots>;
  // Where a unit lowered the plain way began.
  struct Mark {
    Slots start{};
    std::size_t ops = 0, effects = 0, deps = 0, gemm_shapes = 0, macros = 0, held_grads = 0;
  };

  UnitCopier(const LowerContext& L, std::span<const std::unique_ptr<LoweringPass>> passes);

  // Copies unit `u` from the last unit of its kind when those were found congruent; then
  // `last` is its last compute op. False: lower it the plain way.
  bool copy(StageContext& c, UnitStep& u, std::int32_t& last);
  Mark mark(const StageContext& c, const UnitStep& u) const;
  // Unit `u`, begun at `m`, was lowered the plain way (after end_unit; `last` its last compute op).
  void lowered(const StageContext& c, const UnitStep& u, const Mark& m, std::int32_t last);

  std::int64_t copied() const { return copied_; }

 private:
  struct Unit {
    std::int32_t g = 0;
    bool forward = false, first = false, last_mb = false;
    std::array<std::int8_t, kSlots> pattern{};  // which start slots are equal, or unset
    std::size_t op_first = 0, ops = 0;
    std::uint32_t eff_first = 0, effects = 0, dep_first = 0, deps = 0;
    std::int32_t microbatch = 0;
    Slots start{}, end{};
    std::int32_t last = -1;
    bool arrival_pending = false;
    bool congruent = false;  // with the unit of its kind before it
  };

  static Slots slots(const StageContext& c, const UnitStep& u);
  static std::array<std::int8_t, kSlots> pattern(const Slots& s);
  Unit* kind_of(const UnitStep& u, const std::array<std::int8_t, kSlots>& p);
  // Where unit `to`, begun with slots `start`, has the op `x` of unit `from` refers to; -2 when
  // `x` lies outside `from` and is none of its start slots.
  static std::int32_t moved(const Unit& from, std::size_t to_first, const Slots& start,
                            std::int32_t x);
  bool congruent(const Program& P, const Unit& a, const Unit& b) const;

  bool enabled_ = false;
  std::int32_t program_ = 0;
  std::vector<Unit> kinds_;
  std::int64_t copied_ = 0;
};

}  // namespace trainsim::parallel
