#include "sim/validation/compare.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/core/text_file.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::validation {

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
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
    } else if (c == ',') {
      cells.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  cells.push_back(cur);
  for (auto& s : cells) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    std::size_t b = 0;
    while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    s = s.substr(b);
  }
  return cells;
}

double number(const std::string& file, std::size_t line, const std::string& column,
              const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (...) {
  }
  throw core::ConfigError({file, static_cast<int>(line), 1}, column,
                          "expected a number, got '" + text + "'");
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
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (n == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line = line.substr(3);  // UTF-8 BOM
    if (line.empty() || line == "\r") continue;
    auto cells = split_csv_line(line);
    if (t.header.empty()) {
      t.header = std::move(cells);
      continue;
    }
    if (cells.size() != t.header.size())
      throw core::ConfigError({path, static_cast<int>(n), 1}, "",
                              "expected " + std::to_string(t.header.size()) + " cells, got " +
                                  std::to_string(cells.size()));
    t.rows.push_back(std::move(cells));
  }
  if (t.header.empty()) throw core::ConfigError({path, 1, 1}, "", "expected a header row");
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
  }
  std::map<std::string, ErrorStats> out;
  for (const auto& [name, rows] : groups) out[name] = stats(rows);
  return out;
}

std::vector<RowResult> compare(const Table& table, const ColumnMap& map,
                               const std::string& base_scenario) {
  const scenario::Scenario base = scenario::load_scenario(base_scenario);
  const std::int64_t gpn = base.cluster.gpus_per_node;
  auto col = [&](const std::string& key) {
    const auto it = map.columns.find(key);
    const int c = it == map.columns.end() ? -1 : table.column(it->second);
    return c;
  };
  for (const char* required : {"layers", "hidden", "heads", "seq_len", "micro_batch", "global_batch",
                               "tensor", "data", "pipeline", "measured"})
    if (col(required) < 0)
      throw core::ConfigError({"--map", 0, 0}, required,
                              "the table has no column '" + map.columns.at(required) +
                                  "'; name it with --map " + required + "=COLUMN");
  std::vector<RowResult> out;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const auto& row = table.rows[i];
    const std::size_t line = i + 2;
    auto get = [&](const std::string& key) { return number("measurements", line, map.columns.at(key), row[col(key)]); };
    auto integer = [&](const std::string& key) { return static_cast<std::int64_t>(std::llround(get(key))); };
    RowResult r;
    r.row = i + 1;
    r.label = col("label") >= 0 ? row[col("label")] : "";
    r.tensor = integer("tensor");
    r.pipeline = integer("pipeline");
    r.data = integer("data");
    r.tensor_across_nodes = r.tensor > gpn;
    r.measured_s = get("measured") * map.measured_scale;
    const std::int64_t devices = r.tensor * r.pipeline * r.data;
    const std::int64_t per_node = std::min(gpn, devices);
    r.sets = {
        "model.layers=" + std::to_string(integer("layers")),
        "model.hidden=" + std::to_string(integer("hidden")),
        "model.heads=" + std::to_string(integer("heads")),
        "model.max_positions=" + std::to_string(integer("seq_len")),
        "training.seq_len=" + std::to_string(integer("seq_len")),
        "training.micro_batch=" + std::to_string(integer("micro_batch")),
        "training.global_batch=" + std::to_string(integer("global_batch")),
        "parallel.tensor=" + std::to_string(r.tensor),
        "parallel.pipeline=" + std::to_string(r.pipeline),
        "parallel.data=" + std::to_string(r.data),
        "cluster.gpus_per_node=" + std::to_string(per_node),
        "cluster.nodes=" + std::to_string((devices + per_node - 1) / per_node),
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
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace trainsim::validation
