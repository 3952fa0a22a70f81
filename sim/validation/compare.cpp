#include "sim/validation/compare.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/core/text_file.hpp"
#include "sim/core/units.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::validation {

namespace {

// One CSV line's cells, trimmed, with the 1-based character column where each cell starts
// (its first non-blank character). `open_quote` is the column of a quote never closed, else 0.
struct CsvLine {
  std::vector<std::string> cells;
  std::vector<int> columns;
  int open_quote = 0;
};

CsvLine split_csv_line(const std::string& line) {
  CsvLine out;
  std::string cur;
  bool quoted = false;
  int start = 0;  // column of the current cell's first non-blank character (0: none yet)
  auto end_cell = [&](std::size_t at) {
    out.cells.push_back(cur);
    out.columns.push_back(start ? start : static_cast<int>(at) + 1);
    cur.clear();
    start = 0;
  };
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    const bool blank = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (!start && !blank && !quoted && c != ',') start = static_cast<int>(i) + 1;
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
      out.open_quote = static_cast<int>(i) + 1;
    } else if (c == ',') {
      end_cell(i);
    } else if (c != '\r') {
      cur += c;
    }
  }
  end_cell(line.size());
  if (!quoted) out.open_quote = 0;
  for (auto& s : out.cells) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    std::size_t b = 0;
    while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    s = s.substr(b);
  }
  return out;
}

}  // namespace

int Table::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

Table read_csv(const std::string& path) {
  std::istringstream in(core::read_text_file(path, {path, 0, 0}, ""));
  Table t;
  t.file = path;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (n == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line = line.substr(3);  // UTF-8 BOM
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto cells = split_csv_line(line);
    if (cells.open_quote)
      throw core::ConfigError({path, n, cells.open_quote}, "",
                              "this quoted cell is not closed (a cell may not span lines)");
    if (t.header.empty()) {
      t.header = std::move(cells.cells);
      t.header_line = n;
      continue;
    }
    if (cells.cells.size() != t.header.size())
      throw core::ConfigError(
          {path, n, cells.columns[std::min(cells.cells.size() - 1, t.header.size())]}, "",
          "expected " + std::to_string(t.header.size()) + " cells as in the header, got " +
              std::to_string(cells.cells.size()));
    t.rows.push_back(std::move(cells.cells));
    t.columns.push_back(std::move(cells.columns));
    t.lines.push_back(n);
  }
  if (t.header.empty())
    throw core::ConfigError({path, 1, 1}, "", "expected a header row, got an empty file");
  if (t.rows.empty())
    throw core::ConfigError({path, t.header_line, 1}, "",
                            "expected at least one data row after the header");
  return t;
}

void apply_mapping(ColumnMap& map, const std::string& assignment) {
  const auto eq = assignment.find('=');
  const std::string key = assignment.substr(0, eq);
  if (eq == std::string::npos || !map.columns.count(key)) {
    std::string keys;
    for (const auto& [k, v] : map.columns) keys += (keys.empty() ? "" : ", ") + k;
    throw core::ConfigError({"--map " + assignment, 1, 1}, key,
                            "expected KEY=COLUMN with KEY one of: " + keys);
  }
  map.columns[key] = assignment.substr(eq + 1);
}

ErrorStats stats(const std::vector<const RowResult*>& rows) {
  ErrorStats s;
  std::vector<double> abs_err;
  for (const RowResult* r : rows) {
    if (!r->skipped.empty()) continue;
    const double a = std::fabs(r->error);
    abs_err.push_back(a);
    s.mape += a;
    s.bias += r->error;
    if (a >= s.worst) {
      s.worst = a;
      s.worst_row = r->row;
    }
  }
  s.n = abs_err.size();
  if (s.n == 0) return s;
  s.mape /= static_cast<double>(s.n);
  s.bias /= static_cast<double>(s.n);
  std::sort(abs_err.begin(), abs_err.end());
  s.median = s.n % 2 ? abs_err[s.n / 2] : (abs_err[s.n / 2 - 1] + abs_err[s.n / 2]) / 2;
  return s;
}

std::map<std::string, ErrorStats> subsets(const std::vector<RowResult>& results) {
  std::map<std::string, std::vector<const RowResult*>> groups;
  for (const auto& r : results) {
    groups["all"].push_back(&r);
    if (!r.label.empty()) groups["params=" + r.label].push_back(&r);
    groups[std::string("tensor=") + (r.tensor_across_nodes ? "across-nodes" : "inside-node")].push_back(&r);
    groups["pipeline=" + std::to_string(r.pipeline)].push_back(&r);
    groups["tensor=" + std::to_string(r.tensor)].push_back(&r);
    if (r.hidden > 0) groups["hidden=" + std::to_string(r.hidden)].push_back(&r);
    if (r.micro_batch > 0) groups["micro_batch=" + std::to_string(r.micro_batch)].push_back(&r);
  }
  std::map<std::string, ErrorStats> out;
  for (const auto& [name, rows] : groups) out[name] = stats(rows);
  return out;
}

std::vector<RowResult> compare(const Table& table, const ColumnMap& map,
                               const std::string& base_scenario,
                               const std::function<void(int)>& on_progress) {
  auto col = [&](const std::string& key) {
    const auto it = map.columns.find(key);
    const int c = it == map.columns.end() ? -1 : table.column(it->second);
    return c;
  };
  for (const char* required : {"layers", "hidden", "heads", "seq_len", "micro_batch", "global_batch",
                               "tensor", "data", "pipeline", "measured"})
    if (col(required) < 0)
      throw core::ConfigError({table.file, table.header_line, 1}, "",
                              "the table has no column '" + map.columns.at(required) +
                                  "'; name the column that holds " + required + " with --map " +
                                  required + "=COLUMN");
  // Every cell is checked before anything is simulated, so a bad cell in the last row is
  // reported at once rather than after simulating the others.
  const char* const shape_keys[] = {"layers",  "hidden",      "heads",
                                    "seq_len", "micro_batch", "global_batch"};
  const std::string unit = map.measured_scale == 1.0 ? "in seconds" : "in ms";
  std::vector<RowResult> out;
  std::vector<std::map<std::string, std::int64_t>> shapes;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    RowResult r;
    r.row = i + 1;
    r.label = col("label") >= 0 ? table.rows[i][col("label")] : "";
    r.tensor = table.positive_integer(i, col("tensor"));
    r.pipeline = table.positive_integer(i, col("pipeline"));
    r.data = table.positive_integer(i, col("data"));
    r.measured_s = table.positive_time(i, col("measured"), unit) * map.measured_scale;
    if (!(r.measured_s > 0 && std::isfinite(r.measured_s)))
      table.fail(i, col("measured"), "expected a positive finite time " + unit);
    std::int64_t devices = 0;
    if (__builtin_mul_overflow(r.tensor, r.pipeline, &devices) ||
        __builtin_mul_overflow(devices, r.data, &devices))
      table.fail(i, col("data"), "expected tensor x pipeline x data to fit in 64 bits");
    auto& shape = shapes.emplace_back();
    for (const char* key : shape_keys) shape[key] = table.positive_integer(i, col(key));
    out.push_back(std::move(r));
  }

  const scenario::Scenario base = scenario::load_scenario(base_scenario);
  const std::int64_t gpn = base.cluster.gpus_per_node;
  for (std::size_t i = 0; i < out.size(); ++i) {
    RowResult& r = out[i];
    const auto& shape = shapes[i];
    auto set = [&](const std::string& key, std::int64_t v) {
      return key + "=" + std::to_string(v);
    };
    r.tensor_across_nodes = r.tensor > gpn;
    r.hidden = shape.at("hidden");
    r.micro_batch = shape.at("micro_batch");
    const std::int64_t devices = r.tensor * r.pipeline * r.data;
    const std::int64_t per_node = std::min(gpn, devices);
    r.sets = {
        set("model.layers", shape.at("layers")),
        set("model.hidden", shape.at("hidden")),
        set("model.heads", shape.at("heads")),
        set("model.max_positions", shape.at("seq_len")),
        set("training.seq_len", shape.at("seq_len")),
        set("training.micro_batch", shape.at("micro_batch")),
        set("training.global_batch", shape.at("global_batch")),
        set("parallel.tensor", r.tensor),
        set("parallel.pipeline", r.pipeline),
        set("parallel.data", r.data),
        set("cluster.gpus_per_node", per_node),
        set("cluster.nodes", (devices - 1) / per_node + 1),
    };
    try {
      const auto s = scenario::load_scenario(base_scenario, r.sets);
      const auto plan = parallel::lower(s, {.compress = true});
      const auto tl = exec::play(plan);
      r.predicted_s = core::to_seconds(tl.step_time);
      r.fits = std::all_of(tl.devices.begin(), tl.devices.end(), [](const auto& d) { return d.fits; });
      r.error = (r.predicted_s - r.measured_s) / r.measured_s;
    } catch (const core::ConfigError& e) {
      r.skipped = e.what();
    } catch (const core::OverflowError& e) {
      r.skipped = std::string("sizes beyond 64 bits: ") + e.what();
    }
    if (on_progress) on_progress(1);
  }
  return out;
}

}  // namespace trainsim::validation
