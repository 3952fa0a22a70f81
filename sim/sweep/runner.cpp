#include "sim/sweep/runner.hpp"

#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

namespace trainsim::sweep {

std::string_view to_string(Status s) {
  switch (s) {
    case Status::fits: return "fits";
    case Status::oom: return "oom";
    case Status::invalid: return "invalid";
  }
  return "?";
}

PointResult run_point(const BaseScenario& base, const std::vector<std::string>& sets, exec::AllocatorMemo* memo) {
  PointResult r;
  try {
    scenario::Scenario s = base.load(sets);
    {
      const parallel::Plan plan = parallel::lower(s, {.compress = true});
      const exec::Timeline tl = exec::play(plan, {.allocator_memo = memo});
      r.summary = report::summarize(s, plan, tl, false);
    }
    r.status = r.summary->fits ? Status::fits : Status::oom;
    base.give_back(std::move(s));
  } catch (const core::ConfigError& e) {
    r.status = Status::invalid;
    r.reason = e.what();
  } catch (const core::OverflowError& e) {
    r.status = Status::invalid;
    r.reason = std::string("sizes exceed 64-bit counters (") + e.what() + ")";
  }
  return r;
}

int default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace trainsim::sweep
