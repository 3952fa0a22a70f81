#pragma once
// Checking predictions against measured runs: read a table of measured step times, turn each
// row into `--set` overrides of a base scenario, simulate it, and summarise the error per row
// and per subset (model size, tensor group inside or across nodes, pipeline depth).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/validation/measured_unit.hpp"

namespace trainsim::validation {

// A CSV table: header names and rows of cells (UTF-8 BOM and quoted cells handled), with where
// each cell starts in the file so that a bad cell is reported as file:line:column.
struct Table {
  std::string file;
  int header_line = 1;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> lines;                     // 1-based line of each row (blank lines are skipped)
  std::vector<std::vector<int>> columns;      // 1-based character column where each cell starts
  int column(const std::string& name) const;  // -1 when absent
  core::SourceLocation at(std::size_t row, int col) const;

  // Strict cell readers (table.cpp): a bad cell is a core::ConfigError located at the cell and
  // naming its column header, e.g. "m.csv:12:34: column 'us': expected a positive finite time,
  // got '-3'". `unit` is printed after "time" ("in ms").
  double positive_time(std::size_t row, int col, const std::string& unit = "") const;
  double positive_number(std::size_t row, int col, const std::string& unit = "") const;  // finite, > 0
  // whole and > 0; `expected` words the message when it is not
  std::int64_t positive_integer(std::size_t row, int col,
                                const char* expected = "expected a positive whole number") const;
  // Throws the located error: "column 'NAME': `expected`, got 'TEXT'" (without ", got" when
  // `expected` says it already).
  [[noreturn]] void fail(std::size_t row, int col, const std::string& expected,
                         bool show_got = true) const;
};
// Throws core::ConfigError naming file:line:column when the file is missing or empty, has no
// data row, a row is ragged or a quoted cell is not closed.
Table read_csv(const std::string& path);

// Which column holds each quantity. Defaults match vTrain's ground_truth_*.csv; the keys
// mapped to "" (model, vocab, zero, fsdp, expert, context, precision, recompute, device, nodes,
// gpus_per_node, virtual_stages, lora, lora_targets, grad_reduce, sequence_parallel) are read only
// when --map names their column. `gpus` is read only when the table has no data column:
// data = gpus / (tensor x pipeline x context).
struct ColumnMap {
  std::map<std::string, std::string> columns = {
      {"layers", "# layers"},           {"hidden", "hidden size"},
      {"heads", "attention heads"},     {"seq_len", "sequence length"},
      {"micro_batch", "micro batch"},   {"global_batch", "global batch"},
      {"tensor", "tensor parallelism"}, {"data", "data parallelism"},
      {"pipeline", "pipeline parallelism"}, {"gpus", "# GPUs"},
      {"measured", "iteration time (ms)"},  {"label", "Parameters (billion)"},
      {"model", ""},     {"vocab", ""},     {"zero", ""},      {"fsdp", ""},
      {"expert", ""},    {"context", ""},   {"precision", ""}, {"recompute", ""},
      {"device", ""},    {"nodes", ""},     {"gpus_per_node", ""},
      {"virtual_stages", ""}, {"lora", ""},  {"lora_targets", ""},
      {"grad_reduce", ""}, {"sequence_parallel", ""},
  };
  MeasuredUnit unit = MeasuredUnit::ms;  // what the measured column holds
  std::vector<std::string> subset_by;    // keys whose cell values name extra subsets
};
// Applies "key=column name" overrides; throws ConfigError on an unknown key.
void apply_mapping(ColumnMap& map, const std::string& assignment);

struct RowResult {
  std::size_t row = 0;          // 1-based data row
  std::string label;            // model-size label (e.g. "175")
  std::int64_t tensor = 1, pipeline = 1, data = 1;
  std::int64_t hidden = 0, micro_batch = 0;  // the row's model width and micro-batch
  bool tensor_across_nodes = false;
  double measured = 0;          // the measured cell, in the table's unit (ColumnMap::unit)
  double measured_s = 0;        // as a step time (0 while a rate's row is not simulated)
  double predicted_s = 0;
  double error = 0;             // (predicted - measured) / measured
  bool fits = true;
  std::string skipped;          // non-empty when the row could not be simulated
  std::vector<std::string> sets;
  std::vector<std::string> groups;  // "KEY=CELL" of each --subset-by key
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

// Subsets by name ("all", "params=175", "tensor=across-nodes", "pipeline=16", "tensor=2",
// "hidden=1024", "micro_batch=4", ..., and each row's RowResult::groups, e.g. "device=h100-80gb").
std::map<std::string, ErrorStats> subsets(const std::vector<RowResult>& results);

// The base scenario of vTrain's tables, a file of the source tree.
inline constexpr const char* kDefaultBase = "scenarios/validation/megatron_a100_vtrain.yaml";

// Finds `relative`, a file shipped in the source tree, from where trainsim is, not from the
// working folder: in `roots` in order (shipped_roots(): the folders above the running
// executable, then the source tree recorded at build time). Throws core::ConfigError naming
// the folders tried and then `hint` (e.g. "pass --base SCENARIO") when none has it.
std::string find_shipped_file(const std::string& relative, const std::vector<std::string>& roots,
                              const std::string& hint);
std::vector<std::string> shipped_roots();

// Simulates every row against `base_scenario` (a scenario file; rows override model, batch,
// parallel and cluster keys). gpus_per_node comes from the base scenario's cluster unless
// mapped.
// `on_progress` is told of each row simulated (a progress display).
std::vector<RowResult> compare(const Table& table, const ColumnMap& map,
                               const std::string& base_scenario,
                               const std::function<void(int rows)>& on_progress = {});

}  // namespace trainsim::validation
