#pragma once
// Sweep shards: `trainsim sweep --shard K/N` starts its CSV or JSON Lines file with a tag that
// says which sweep it belongs to (a fingerprint of the sweep file, the base scenario and
// trainsim's version), which part it is and how many points the whole sweep has; `merge` checks
// the tags before joining, so a truncated shard, a missing or repeated part or a part of another
// sweep is refused with what is wrong, never merged into a short or mixed result.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "sim/sweep/spec.hpp"

namespace trainsim::sweep {

struct ShardTag {
  std::size_t k = 1, n = 1;  // part K of N (1-based)
  std::size_t points = 0;    // points of the whole sweep
  std::string fingerprint;   // 16 hex digits (FNV-1a 64 of the sweep's texts and version)
  std::string version;       // trainsim's version that wrote it
  // How many of the sweep's points part k holds (sweep::in_shard).
  std::size_t expected_points() const;
};

// The fingerprint of a sweep: its file's text, the base scenario's text and trainsim's version.
std::string sweep_fingerprint(const SweepSpec& spec);

// The tag as the first line of a shard file, with '\n':
//   CSV:   # trainsim-shard 2/4 points=33 fingerprint=0123456789abcdef trainsim=0.1.0
//   JSONL: {"shard":{"k":2,"n":4,"points":33,"fingerprint":"0123456789abcdef","trainsim":"0.1.0"}}
std::string shard_line(const ShardTag& tag, bool jsonl);
// Whether a line is a shard tag (of either format); parse_shard_line reads one (nullopt when
// the line is not a well-formed tag).
bool is_shard_line(const std::string& line);
std::optional<ShardTag> parse_shard_line(const std::string& line);

// One input of a merge: its name, tag and the point indices of its records in file order.
struct ShardInput {
  std::string file;
  ShardTag tag;
  std::vector<std::size_t> points;
  int first_line = 2;  // the file's line (1-based) of points[0]
};
// Checks that `inputs` are every part of one sweep, each whole: the same fingerprint, N and
// point count; each K once and none missing; each part holding exactly its points, once each.
// A located ConfigError says what is wrong (which parts or points are missing, which file
// repeats or belongs elsewhere).
void check_shards(const std::vector<ShardInput>& inputs);

}  // namespace trainsim::sweep
