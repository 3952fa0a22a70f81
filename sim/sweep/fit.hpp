#pragma once
// `trainsim fit`: the largest value of one integer key that still fits, by exponential then
// binary search. Assumes memory is monotone in the key (larger never needs less): true for
// micro_batch (activations grow with it), seq_len and model dimensions such as model.layers.
// Values the scenario rejects (e.g. a micro-batch that does not divide the global batch, layers
// not divisible by the pipeline) are skipped: the search moves to the nearest valid value.
// When the first valid value does not fit but a larger one does (memory falls as the key grows:
// parallel.zero, the pipeline depth), the search turns round and finds the smallest value that
// fits (`falls`). A peak that stays the same over kFlatDoublings doublings ends the search
// (`flat`): the key does not reach the fullest device's memory (a global batch once the pipeline
// is full).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/sweep/spec.hpp"

namespace trainsim::sweep {

struct FitOptions {
  std::int64_t from = 1;           // smallest value tried (the first valid one at or above it)
  std::int64_t limit = 1LL << 40;  // the search does not go above this
  std::function<void(int simulations)> on_progress;  // told of each simulation (progress display)
};

// Doublings over which an unchanged peak ends the search as `flat`.
inline constexpr int kFlatDoublings = 3;

struct FitResult {
  std::string key;
  bool found = false;              // some value fits
  bool falls = false;              // memory falls as the key grows: `value` is the smallest
                                   // value that fits, `next_value` the valid one below it
  bool flat = false;               // the peak stayed the same over the last doublings up to
                                   // `value` (which fits): the key does not bound it
  std::int64_t value = 0;          // the largest value that fits (when found)
  std::int64_t peak_bytes = 0;     // fullest device's peak at `value`
  std::optional<std::int64_t> next_value;  // the next valid value above (it does not fit);
                                           // when !found, the smallest value tried
  std::int64_t next_peak_bytes = 0;
  std::int64_t capacity_bytes = 0;
  int simulations = 0;             // points simulated (rejected values not counted)
};

// Throws ConfigError when no valid value is found near `from`.
FitResult fit(const BaseScenario& base, const std::vector<std::string>& sets,
              const std::string& key, const FitOptions& options = {});

}  // namespace trainsim::sweep
