#pragma once
// Sweep result files: CSV (one row per point) and JSON Lines (one record per point with the full
// report). Rows are written in point order, so a file is always a prefix of the finished sweep:
// `--resume` keeps the complete prefix and continues, and shard files merge by point index.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/sweep/runner.hpp"

namespace trainsim::sweep {

// What the terminal summary needs of a finished point (also read back from files on resume).
struct Brief {
  std::size_t point = 0;
  Status status = Status::invalid;
  double step_time_s = 0;
  double throughput = 0;  // tokens/s for sequence models, else samples/s
  bool tokens = false;    // throughput counts tokens
  std::int64_t peak_bytes = 0;
};
Brief brief_of(std::size_t point, const PointResult& r);

// The CSV header line (with '\n'): point, every axis, status, fits, oom_cause, peak_bytes,
// step_time_s, samples_per_s, tokens_per_s, mfu, bubble_fraction, reason.
std::string csv_header(const SweepSpec& spec);
std::string csv_row(const SweepSpec& spec, const Point& p, const PointResult& r);
// {"point": i, "set": {...}, "status": ..., "reason": ..., "report": {...} | null} and '\n'.
std::string jsonl_line(const SweepSpec& spec, const Point& p, const PointResult& r);

// Resume: reads the complete records of an existing CSV (`header` must match) or JSONL file,
// which must be the first points of `expected` (point indices in run order). Truncates the file
// after the last good record (a record cut by a kill is dropped) and returns their briefs.
// A missing file is an empty result; a file from another sweep is a ConfigError. `tag`: a
// shard's first line (sim/sweep/shard.hpp, with '\n'), which the file must start with; "" when
// the sweep is not sharded.
std::vector<Brief> resume_csv(const std::string& path, const std::string& header,
                              const std::vector<std::size_t>& expected,
                              const std::string& tag = "");
std::vector<Brief> resume_jsonl(const std::string& path, const std::vector<std::size_t>& expected,
                                const std::string& tag = "");
// Keeps the first `n` records of a file that resume_* read (when the other file had fewer),
// after its `lead` lines (shard tag, CSV header).
void truncate_records(const std::string& path, std::size_t lead, std::size_t n);

// Joins the shard files of one sweep (all CSV with one header, or all JSONL; each starting
// with its shard tag) into `out` in point order, without the tags: byte for byte the unsharded
// sweep's file. Every part must be there, whole and once (sweep::check_shards); a directory,
// a file without a tag or one whose last line is cut is refused. Returns the number of records.
std::size_t merge_files(const std::string& out, const std::vector<std::string>& inputs);

// Splits one CSV record into its cells (quoted cells with doubled quotes, as written here).
std::vector<std::string> csv_split(const std::string& line);

}  // namespace trainsim::sweep
