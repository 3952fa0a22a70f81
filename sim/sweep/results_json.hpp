#pragma once
// The JSON documents of `trainsim fit --format json` and `trainsim plan --format json` (keys in
// docs/sweeps.md; a public contract: extend, never rename). The command line and the Python
// module both write them here.
#include <cstddef>
#include <ostream>

#include "sim/sweep/fit.hpp"
#include "sim/sweep/plan.hpp"

namespace trainsim::sweep {

void write_fit_json(std::ostream& out, const FitResult& r);
// The first `top` ranked layouts, best first.
void write_plan_json(std::ostream& out, const PlanResult& r, std::size_t top);

}  // namespace trainsim::sweep
