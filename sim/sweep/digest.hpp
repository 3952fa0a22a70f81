#pragma once
// The terminal summary of a sweep: counts by status, the fastest point that fits (its
// overrides), and per axis where OOM begins. The rule (docs/sweeps.md): hold every other axis
// at the fastest fitting point's values; among those points, OOM begins at the smallest value
// of the axis (numeric order, or list order for words) whose point is out of memory.
#include <ostream>
#include <vector>

#include "sim/sweep/output.hpp"

namespace trainsim::sweep {

// `briefs` are the finished points (any order); `points` all points of the run.
void write_digest(std::ostream& out, const SweepSpec& spec, const std::vector<Point>& points,
                  const std::vector<Brief>& briefs);

}  // namespace trainsim::sweep
