#pragma once
// Checking predictions against measured runs: read a table of measured step times, turn each
// row into `--set` overrides of a base scenario, simulate it, and summarise the error per row
// and per subset (model size, tensor group inside or across nodes, pipeline depth).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainsim::validation {

// A CSV table: header names and rows of cells (UTF-8 BOM and quoted cells handled).
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int column(const std::string& name) const;  // -1 when absent
};
// Throws core::ConfigError naming file:line when the file is missing or a row is ragged.
Table read_csv(const std::string& path);

// Which column holds each quantity. Defaults match vTrain's ground_truth_*.csv.
struct ColumnMap {
  std::map<std::string, std::string> columns = {
      {"layers", "# layers"},           {"hidden", "hidden size"},
      {"heads", "attention heads"},     {"seq_len", "sequence length"},
      {"micro_batch", "micro batch"},   {"global_batch", "global batch"},
      {"tensor", "tensor parallelism"}, {"data", "data parallelism"},
      {"pipeline", "pipeline parallelism"}, {"gpus", "# GPUs"},
      {"measured", "iteration time (ms)"},  {"label", "Parameters (billion)"},
  };
  double measured_scale = 1e-3;  // measured column unit -> seconds (ms by default)
};
// Applies "key=column name" overrides; throws ConfigError on an unknown key.
void apply_mapping(ColumnMap& map, const std::string& assignment);

struct RowResult {
  std::size_t row = 0;          // 1-based data row
  std::string label;            // model-size label (e.g. "175")
  std::int64_t tensor = 1, pipeline = 1, data = 1;
  bool tensor_across_nodes = false;
  double measured_s = 0;
  double predicted_s = 0;
  double error = 0;             // (predicted - measured) / measured
  bool fits = true;
  std::string skipped;          // non-empty when the row could not be simulated
  std::vector<std::string> sets;
};

struct ErrorStats {
  std::size_t n = 0;
  double mape = 0;        // mean |error|
  double median = 0;      // median |error|
  double worst = 0;       // max |error|
  double bias = 0;        // mean signed error (> 0: trainsim predicts slower)
  std::size_t worst_row = 0;
};
ErrorStats stats(const std::vector<const RowResult*>& rows);

// Subsets by name ("all", "params=175", "tensor=across-nodes", "pipeline=16", ...).
std::map<std::string, ErrorStats> subsets(const std::vector<RowResult>& results);

// Simulates every row against `base_scenario` (a scenario file; rows override model, batch,
// parallel and cluster keys). gpus_per_node comes from the base scenario's cluster.
std::vector<RowResult> compare(const Table& table, const ColumnMap& map,
                               const std::string& base_scenario);

}  // namespace trainsim::validation
