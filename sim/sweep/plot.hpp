#pragma once
// `trainsim sweep --plot FILE.svg`: a hand-written SVG fit/OOM map of a finished sweep over two
// of its axes. One cell per (x value, y value) in sweep order; a cell that fits is coloured by
// step time (sequential scale, legend with min/max seconds), OOM cells are hatched by cause
// (activations / model_states), invalid cells grey, cells without a result blank. The staircase
// edge between adjacent fitting and OOM cells is drawn as one boundary path. When other axes
// vary, a cell stands for all points sharing its (x, y): the fastest that fits, else OOM, else
// invalid (docs/sweeps.md). Output depends only on the inputs (deterministic).
#include <cstddef>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "sim/sweep/output.hpp"

namespace trainsim::sweep {

// What the map needs of one finished point.
struct PlotPoint {
  std::size_t point = 0;
  Status status = Status::invalid;
  double step_time_s = 0;
  std::string oom_cause;  // "activations" | "model_states" for oom points, else ""
};

inline constexpr std::size_t kNoAxis = static_cast<std::size_t>(-1);

struct MapAxes {
  std::size_t x = kNoAxis, y = kNoAxis;  // indices into SweepSpec::axes (kNoAxis: a single row/column)
};

// The axes to plot: `keys` "KEY1,KEY2" (axis key paths of the sweep, distinct), or when empty the
// first two axes in file order (the first alone for a one-axis sweep). A bad key is a
// ConfigError naming `flag`.
MapAxes map_axes(const SweepSpec& spec, const std::string& keys, const std::string& flag = "--plot-axes");

// Writes one standalone <svg> document. `points` are the sweep's points (all of them, or a
// shard's); `results` the finished ones in any order (a point without a result is drawn blank).
void write_sweep_map_svg(std::ostream& out, const SweepSpec& spec, const std::vector<Point>& points,
                         const std::vector<PlotPoint>& results, const MapAxes& axes);

// The PlotPoint of a finished result / brief (the cause is not in a Brief: pass it).
PlotPoint plot_point_of(const Brief& b, std::string oom_cause);

// OOM causes by point index read back from a sweep CSV (its `oom_cause` column) or JSON Lines
// file (the first "cause" of the report's "oom" list), for points finished by an earlier run
// that --resume kept. A missing file is an empty map.
std::map<std::size_t, std::string> read_oom_causes(const std::string& path);

}  // namespace trainsim::sweep
