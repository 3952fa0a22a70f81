#pragma once
// The terminal summary of a sweep: counts by status, the fastest point that fits (its
// overrides), and per axis where OOM begins. The rule (docs/sweeps.md): hold every other axis
// at the fastest fitting point's values and read those points' statuses in the axis' order
// (numeric order, or list order for words).
#include <ostream>
#include <string>
#include <vector>

#include "sim/sweep/output.hpp"

namespace trainsim::sweep {

// Where OOM begins along one axis, from its values in order and whether each point fits or
// runs out of memory (invalid points left out): "OOM from X" when memory grows with the value
// (larger micro-batch), "OOM up to X" when it shrinks (larger pipeline, ZeRO stage), each with
// the neighbouring value that fits; values that alternate are listed.
struct AxisStatus {
  std::string value;
  bool oom = false;
};
std::string oom_boundary(const std::vector<AxisStatus>& along);

// `briefs` are the finished points (any order); `points` all points of the run.
void write_digest(std::ostream& out, const SweepSpec& spec, const std::vector<Point>& points,
                  const std::vector<Brief>& briefs);

}  // namespace trainsim::sweep
