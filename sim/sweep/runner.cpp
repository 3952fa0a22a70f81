#include "sim/sweep/runner.hpp"

#include <algorithm>

#include "sim/exec/player.hpp"
#include "sim/scenario/yaml_read.hpp"
#include "sim/sweep/kept_plans.hpp"

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
      KeptPlan& kept = plan_for(base, sets, s);
      const exec::Timeline tl = exec::play(kept.plan, {.allocator_memo = memo, .plan_digest = &kept.digest});
      r.summary = report::summarize(s, kept.plan, tl, false);
    }
    r.status = r.summary->fits ? Status::fits : Status::oom;
    base.give_back(std::move(s));
  } catch (const core::ConfigError& e) {
    r.status = Status::invalid;
    r.reason = e.what();
    r.error = e;
  } catch (const core::OverflowError& e) {
    r.status = Status::invalid;
    r.reason = std::string("sizes exceed 64-bit counters (") + e.what() + ")";
  }
  return r;
}

PointResult run_point(const SweepSpec& spec, const Point& p, exec::AllocatorMemo* memo) {
  const std::vector<std::string> sets = point_sets(spec, p);
  PointResult r = run_point(spec.base, sets, memo);
  if (!r.error) return r;
  const core::SourceLocation& at = r.error->where();
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    const Axis& axis = spec.axes[a];
    if (at.file != scenario::set_argument_file(sets[a])) continue;
    // Columns past the value's first character carry over when the file holds the same text.
    const int value_column = scenario::set_value_column(sets[a]);
    core::SourceLocation in_file = axis.value_where[p.choice[a]];
    if (axis.written_as_text && at.column > value_column) in_file.column += at.column - value_column;
    r.error = core::ConfigError(in_file, r.error->key_path(), r.error->detail());
    r.reason = r.error->what();
    break;
  }
  return r;
}

int default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

int max_jobs() {
  return std::clamp(4 * default_jobs(), 4, 256);
}

int worker_threads(int requested, std::size_t items, std::string* note, const char* what) {
  const int want = requested == 0 ? default_jobs() : requested;
  const auto cap = static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(max_jobs()), std::max<std::size_t>(items, 1)));
  if (want <= cap) return std::max(want, 1);
  if (note && requested > 0)
    *note = "-j " + std::to_string(requested) + " lowered to " + std::to_string(cap) +
            " worker threads (" +
            (cap == max_jobs() ? std::string("at most 4 per hardware thread, 256 in all")
                               : std::to_string(items) + " " + what + " to run") +
            ")";
  return cap;
}

}  // namespace trainsim::sweep
