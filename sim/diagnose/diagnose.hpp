#pragma once
// Diagnosis of a step that does not fit: which kind of OOM it is, with the numbers that show
// it, and remedies that were each re-simulated and found to fit, ranked by step time.
#include <functional>
#include <string>
#include <vector>

#include "sim/report/summary.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::diagnose {

struct Options {
  int max_remedies = 8;  // listed remedies (the fastest that fit)
  std::function<void(int simulations)> on_progress;  // told of each remedy tried (progress display)
};

// `file` and `sets` are how `s` was loaded; every remedy is `sets` plus its own overrides, so
// `trainsim run file --set ...` reproduces its figures exactly.
report::Diagnosis diagnose(const std::string& file, const std::vector<std::string>& sets,
                           const scenario::Scenario& s, const report::Summary& summary,
                           const Options& options = {});

// Loads the diagnosed scenario under a list of overrides (a ConfigError when they are invalid).
using Loader = std::function<scenario::Scenario(const std::vector<std::string>& sets)>;
// The same for a scenario that is not a file (the Python module's YAML text): each remedy is
// loaded with `load(sets + remedy)`.
report::Diagnosis diagnose(const Loader& load, const std::vector<std::string>& sets,
                           const scenario::Scenario& s, const report::Summary& summary,
                           const Options& options = {});

}  // namespace trainsim::diagnose
