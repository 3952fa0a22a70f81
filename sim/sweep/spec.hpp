#pragma once
// A sweep file: a base scenario, axes (scenario key path -> values), zip groups of axes that
// move together and `where` rules that drop points. Expanded into points in a deterministic
// order: the first axis (or zip group) is the outermost loop, the last the innermost. Each point
// is the base plus `--set key=value` overrides, so `trainsim run BASE --set ...` reproduces it.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/sweep/expr.hpp"

namespace trainsim::sweep {

// A scenario parsed once per point from text held in memory, so each point owns its YAML tree
// (nothing shared between threads) and errors keep the file's lines and columns.
struct BaseScenario {
  std::string path;    // names the file in errors and anchors relative model files
  std::string text;    // the file's contents
  std::string subkey;  // "base" when the scenario is a mapping inside the file, else ""

  scenario::Scenario load(const std::vector<std::string>& sets) const;
  // Hands back a point's scenario when the caller is done with it: its model serves the next
  // point this thread loads, when that point's model is the same (scenario::ModelCache).
  void give_back(scenario::Scenario&& s) const;
  // A scalar of the base at a dotted key path ("training.global_batch"); false when none.
  bool scalar_at(const std::string& key_path, std::string& out) const;
  // Reads `path` (a located ConfigError when it cannot be opened).
  static BaseScenario from_file(const std::string& path);
};

struct Axis {
  std::string key;                  // scenario key path, e.g. "training.micro_batch"
  std::vector<std::string> values;  // each value as YAML text, as given to --set
  core::SourceLocation where;       // the axis key in the sweep file
  // Per value, where it is written: its list element, or the range that made it.
  std::vector<core::SourceLocation> value_where;
  bool written_as_text = false;     // every value is a plain scalar, its text as in the file
};

struct SweepSpec {
  std::string file;  // the sweep file
  BaseScenario base;
  std::vector<Axis> axes;  // in file order
  // Dimensions of the product, outermost first: each lists the axes that move together (one
  // axis, or a zip group in the position of its first member).
  std::vector<std::vector<std::size_t>> dims;
  std::vector<Expr> where;
  std::map<std::string, Value> base_values;  // base-scenario keys the rules name
  std::size_t max_points = 1000000;  // before `where`; more is a ConfigError
};

struct Point {
  std::size_t index = 0;            // position among the kept points (0-based)
  std::vector<std::size_t> choice;  // value index per axis
};

// Parses and checks a sweep file; every problem is a located ConfigError.
SweepSpec load_sweep(const std::string& path);
// The same for a sweep held in memory: `path` names it in errors and anchors relative files.
SweepSpec load_sweep_text(const std::string& text, const std::string& path);

// The kept points in order (after `where`).
std::vector<Point> expand(const SweepSpec& spec);

// Whether the point at `index` belongs to part k (1-based) of n (`--shard k/n`): points go to
// the parts in blocks of kShardBlock consecutive ones, dealt round-robin. Neighbouring points
// differ in the innermost axes only, and a worker playing them in turn reuses their model, plan
// and allocator replays; dealing single points would give every part points that share
// nothing, while blocks dealt in turn still spread heavy regions of the grid over all parts.
inline constexpr std::size_t kShardBlock = 32;
inline bool in_shard(std::size_t index, std::size_t k, std::size_t n) { return (index / kShardBlock) % n == k - 1; }

// "key=value" overrides of one point, in axis order.
std::vector<std::string> point_sets(const SweepSpec& spec, const Point& p);

// A misspelt axis key makes every point invalid the same way: loads the first point and, when
// it fails on an unknown key under an axis, throws the error at that axis in the sweep file.
void check_axis_keys(const SweepSpec& spec, const Point& first);

// Values of the integers lo, lo*f, lo*f^2, ... (or lo, lo+n, ...) up to hi: `step` is "xF"
// (multiplicative, F >= 2) or "N" (additive, N >= 1). Throws std::invalid_argument with the
// reason on a malformed step or range.
std::vector<long long> range_values(long long lo, long long hi, const std::string& step);

}  // namespace trainsim::sweep
