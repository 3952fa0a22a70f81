#include "sim/sweep/fit.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>

#include "sim/sweep/runner.hpp"

namespace trainsim::sweep {

namespace {

class Prober {
 public:
  Prober(const BaseScenario& base, const std::vector<std::string>& sets, const std::string& key,
         const std::function<void(int)>& on_progress)
      : base_(base), sets_(sets), key_(key), on_progress_(on_progress) {}

  const PointResult& at(std::int64_t v) {
    auto it = cache_.find(v);
    if (it != cache_.end()) return it->second;
    auto sets = sets_;
    sets.push_back(key_ + "=" + std::to_string(v));
    PointResult r = run_point(base_, sets);
    if (r.status != Status::invalid) ++simulations;
    if (on_progress_) on_progress_(1);
    return cache_.emplace(v, std::move(r)).first->second;
  }
  bool valid(std::int64_t v) { return at(v).status != Status::invalid; }
  bool fits(std::int64_t v) { return at(v).status == Status::fits; }
  std::int64_t peak(std::int64_t v) { return at(v).summary ? at(v).summary->peak.value : 0; }
  std::int64_t allocated(std::int64_t v) {
    return at(v).summary ? at(v).summary->allocated_peak.value : 0;
  }

  // A valid value in (lo, hi) near mid, looking up first; nullopt when there is none.
  std::optional<std::int64_t> valid_near(std::int64_t lo, std::int64_t mid, std::int64_t hi) {
    for (std::int64_t m = mid; m < hi; ++m)
      if (valid(m)) return m;
    for (std::int64_t m = mid - 1; m > lo; --m)
      if (valid(m)) return m;
    return std::nullopt;
  }

  // Binary search between a value that fits and one that does not (either order; the one that
  // does not may be rejected or past the limit) down to neighbouring valid values: {fits, not}.
  std::pair<std::int64_t, std::int64_t> boundary(std::int64_t fit, std::int64_t miss) {
    while (std::abs(miss - fit) > 1) {
      const std::int64_t lo = std::min(fit, miss), hi = std::max(fit, miss);
      const auto m = valid_near(lo, lo + (hi - lo) / 2, hi);
      if (!m) break;
      (fits(*m) ? fit : miss) = *m;
    }
    return {fit, miss};
  }

  int simulations = 0;

 private:
  const BaseScenario& base_;
  const std::vector<std::string>& sets_;
  std::string key_;
  const std::function<void(int)>& on_progress_;
  std::map<std::int64_t, PointResult> cache_;
};

}  // namespace

FitResult fit(const BaseScenario& base, const std::vector<std::string>& sets,
              const std::string& key, const FitOptions& options) {
  Prober p(base, sets, key, options.on_progress);
  FitResult r;
  r.key = key;
  std::int64_t start = options.from;
  while (!p.valid(start) && start < options.from + 64 && start < options.limit) ++start;
  if (!p.valid(start)) {
    const PointResult& first = p.at(options.from);
    throw core::ConfigError({"--find " + key, 1, 1}, key,
                            "no valid value from " + std::to_string(options.from) + " to " +
                                std::to_string(start) + "; at " + std::to_string(options.from) +
                                ": " + first.reason);
  }
  r.capacity_bytes = p.at(start).summary->devices.empty() ? 0 : p.at(start).summary->devices.front().capacity.value;
  if (!p.fits(start)) {
    // Memory may fall as the key grows (a ZeRO stage, the pipeline depth): a larger value that
    // fits, within a few doublings, turns the search round to the smallest value that fits.
    std::int64_t lo = start;  // does not fit
    std::optional<std::int64_t> up;
    for (int k = 0; k < 8 && !up && lo <= options.limit / 2; ++k) {
      const auto v = p.valid_near(lo, 2 * lo, std::min(4 * lo, options.limit + 1));
      if (!v) break;
      if (p.fits(*v)) up = v;
      else lo = *v;
    }
    if (!up) {
      r.next_value = start;
      r.next_peak_bytes = p.peak(start);
      r.simulations = p.simulations;
      return r;
    }
    const auto [fit, miss] = p.boundary(*up, lo);
    r.found = true;
    r.falls = true;
    r.value = fit;
    r.peak_bytes = p.peak(fit);
    r.next_value = miss;
    r.next_peak_bytes = p.peak(miss);
    r.simulations = p.simulations;
    return r;
  }
  // Exponential phase: double until a value does not fit or is rejected, or until the peak has
  // stayed the same over kFlatDoublings (the key does not reach the fullest device's memory: a
  // global batch, once the pipeline is full).
  std::int64_t lo = start, hi = -1;
  int same = 0;
  while (hi < 0) {
    if (lo > options.limit / 2) {
      hi = options.limit + 1;
      break;
    }
    const std::int64_t v = lo * 2;
    if (p.fits(v)) {
      // The allocated peak too: segments cached before the step (the model's load) hold the
      // peak still while the tensors grow inside them.
      same = p.peak(v) == p.peak(lo) && p.allocated(v) == p.allocated(lo) ? same + 1 : 0;
      lo = v;
      if (same == kFlatDoublings) {
        r.found = true;
        r.flat = true;
        r.value = lo;
        r.peak_bytes = p.peak(lo);
        r.simulations = p.simulations;
        return r;
      }
    } else {
      hi = v;  // out of memory, or rejected: an upper end for the binary phase
    }
  }
  // Binary phase over (lo, hi): lo fits; hi does not fit, is rejected or is past the limit.
  std::tie(lo, hi) = p.boundary(lo, hi);
  r.found = true;
  r.value = lo;
  r.peak_bytes = p.peak(lo);
  if (hi <= options.limit && p.valid(hi)) {
    r.next_value = hi;
    r.next_peak_bytes = p.peak(hi);
  }
  r.simulations = p.simulations;
  return r;
}

}  // namespace trainsim::sweep
