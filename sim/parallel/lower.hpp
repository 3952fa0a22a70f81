#pragma once
// Lowering: (model, training, parallel config) -> one Program per pipeline stage. Chooses the
// stage partition, shards layers over tensor ranks and model states over ZeRO ranks, orders the
// work with the pipeline schedule and attaches every memory effect and cost input.
#include <span>
#include <string_view>
#include <vector>

#include "sim/parallel/program.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::parallel {

struct LowerOptions {
  // Fast play: every pipeline unit that repeats an earlier one exactly (same chunk and direction,
  // compute work only, no first-time gradient allocation or gradient reduction) becomes one
  // macro op over a shared template. Playing it gives the same report as the expanded plan
  // (tests/exec/fast_play_test.cpp) at a fraction of the cost; traces and memory series need
  // every op and use the expanded plan.
  bool compress = false;
  // With compress: an expanded unit (ZeRO-3, FSDP, expert or context parallelism) congruent
  // with the last of its kind is copied from it instead of lowered through the passes
  // (unit_copy.hpp); the plan is the same field by field (tests/parallel/unit_copy_test.cpp).
  bool copy_units = true;
};

// Throws core::ConfigError, located at s.limits.ops_at, once the plan would hold more than
// s.limits.max_ops ops.
Plan lower(const scenario::Scenario& s, const LowerOptions& options = {});

// The scenario keys each lowering pass declares it reads (a key covers its sub-keys): `keys`
// shape the programs; `settings` reach the plan only as fields apply_plan_settings sets.
struct PassKeys {
  std::string_view pass;
  std::span<const std::string_view> keys;
  std::span<const std::string_view> settings;
};
std::vector<PassKeys> lowering_keys();

// Whether `key` (as in --set key=value) is, or lies under, a pass's setting: a plan lowered
// for one value serves every other once apply_plan_settings has set them for it.
bool is_plan_setting(std::string_view key);
// Sets every setting of `plan` from `s` (devices and their reserved memory, links, the
// data-parallel algorithm, the host side of offload), as lower() did.
void apply_plan_settings(Plan& plan, const scenario::Scenario& s);

}  // namespace trainsim::parallel
