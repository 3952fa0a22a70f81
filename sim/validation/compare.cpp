#include "sim/validation/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/core/text_file.hpp"
#include "sim/core/units.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/summary.hpp"
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
    std::vector<std::string> named = r.groups;  // --subset-by's, then the shape's own
    named.push_back("tensor=" + std::to_string(r.tensor));
    if (r.hidden > 0) named.push_back("hidden=" + std::to_string(r.hidden));
    if (r.micro_batch > 0) named.push_back("micro_batch=" + std::to_string(r.micro_batch));
    std::sort(named.begin(), named.end());
    named.erase(std::unique(named.begin(), named.end()), named.end());
    for (const auto& g : named) groups[g].push_back(&r);
  }
  std::map<std::string, ErrorStats> out;
  for (const auto& [name, rows] : groups) out[name] = stats(rows);
  return out;
}

namespace {

// Integer cells and the scenario key each sets (seq_len also sets model.max_positions when the
// model is given by its shape, as vTrain's GPT rows are).
constexpr std::pair<const char*, const char*> kIntegerKeys[] = {
    {"layers", "model.layers"},         {"hidden", "model.hidden"},
    {"heads", "model.heads"},           {"vocab", "model.vocab"},
    {"seq_len", "training.seq_len"},    {"micro_batch", "training.micro_batch"},
    {"global_batch", "training.global_batch"}, {"expert", "parallel.expert"},
};

// PyTorch FSDP's ShardingStrategy names, as tables print them (llm-foundry's "Sharding Strategy"
// column), and the fsdp cell each stands for (RowCells): SHARD_GRAD_OP keeps the gathered
// parameters from forward to backward, HYBRID_SHARD shards within a node.
struct FsdpStrategy {
  const char *upper, *lower, *fsdp, *reshard;
};
constexpr FsdpStrategy kFsdpStrategies[] = {{"FULL_SHARD", "full_shard", "yes", "true"},
                                            {"SHARD_GRAD_OP", "shard_grad_op", "yes", "false"},
                                            {"HYBRID_SHARD", "hybrid_shard", "node", "true"},
                                            {"NO_SHARD", "no_shard", "no", ""}};

// A preset name or a file path: letters, digits and . _ - / + only, so a cell cannot carry
// YAML into the override.
bool plain_name(const std::string& text) {
  if (text.empty()) return false;
  for (const char c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr("._-/+", c)) return false;
  return true;
}

bool one_of(const std::string& text, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (text == w) return true;
  return false;
}

// One data row's checked cells.
struct RowCells {
  std::vector<std::string> sets;                 // overrides other than the cluster's
  std::int64_t context = 1;
  std::int64_t nodes = 0, gpus_per_node = 0;     // 0: not mapped
  std::int64_t virtual_stages = 0;               // 0: not mapped
  bool lora_none = false;                        // the lora cell says none
  std::string fsdp;                              // "", "yes", "no", "node" or a shard size (fsdp_sets)
  std::string reshard;                           // "", "true" or "false": a sharding strategy's word
};

using ColumnOf = std::function<int(const std::string&)>;

// The pipeline schedule and LoRA cells of row `i` (Megatron-Bridge's VP column, NeMo's
// fine-tuning tasks) as overrides.
// - virtual_stages V > 1: the interleaved schedule with V model chunks per stage; 1: no
//   interleaving (1F1B where the base interleaves, else the base's schedule: base_sets).
// - lora: a rank trains adapters of that rank (training.lora.rank), their targets from the
//   lora_targets cell when mapped (words such as `q v` or `all-linear`, separated by blanks or
//   `;`), else from the base's training.lora; `none` trains every parameter, which a base that
//   gives training.lora cannot (an override adds keys, it does not remove them: base_sets).
void read_layout_cells(const Table& t, std::size_t i, const ColumnOf& col, RowCells& c) {
  if (col("virtual_stages") >= 0) {
    c.virtual_stages = t.positive_integer(i, col("virtual_stages"));
    if (c.virtual_stages > 1) c.sets.push_back("parallel.schedule=interleaved");
    c.sets.push_back("parallel.virtual_stages=" + std::to_string(c.virtual_stages));
  }
  if (col("lora") < 0) return;
  const std::string& rank = t.rows[i][col("lora")];
  c.lora_none = one_of(rank, {"none", "no"});
  if (c.lora_none) return;
  const auto r = t.positive_integer(i, col("lora"), "expected a LoRA rank (a positive whole number) or none");
  c.sets.push_back("training.lora.rank=" + std::to_string(r));
  if (col("lora_targets") < 0) return;
  const char* expected = "expected LoRA targets (q, k, v, o, gate, up, down or all-linear) separated by blanks or ';'";
  std::string words, part;
  std::istringstream in(t.rows[i][col("lora_targets")]);
  while (std::getline(in, part, ';')) {
    std::istringstream blanks(part);
    for (std::string w; blanks >> w;) {
      if (!plain_name(w)) t.fail(i, col("lora_targets"), expected);
      words += (words.empty() ? "" : ", ") + w;
    }
  }
  if (words.empty()) t.fail(i, col("lora_targets"), expected);
  c.sets.push_back(words == "all-linear" ? "training.lora.targets=all-linear" : "training.lora.targets=[" + words + "]");
}

// Checks row `i`'s optional cells and turns them into overrides; a bad cell is a located error.
RowCells read_cells(const Table& t, std::size_t i, const ColumnOf& col) {
  RowCells c;
  const bool by_model = col("model") >= 0;
  for (const auto& [key, path] : kIntegerKeys)
    if (col(key) >= 0) c.sets.push_back(std::string(path) + "=" + std::to_string(t.positive_integer(i, col(key))));
  if (!by_model && col("layers") >= 0 && col("seq_len") >= 0)
    c.sets.push_back("model.max_positions=" + std::to_string(t.positive_integer(i, col("seq_len"))));
  auto text = [&](const char* key) -> const std::string& { return t.rows[i][col(key)]; };
  if (by_model) {
    const std::string& m = text("model");
    if (!plain_name(m)) t.fail(i, col("model"), "expected a model preset name or a config.json path");
    const bool json = m.size() > 5 && m.compare(m.size() - 5, 5, ".json") == 0;
    c.sets.insert(c.sets.begin(), json ? "model={hf_config: " + m + "}" : "model=" + m);
  }
  if (col("device") >= 0) {
    if (!plain_name(text("device"))) t.fail(i, col("device"), "expected a device preset name");
    c.sets.push_back("device=" + text("device"));
  }
  if (col("precision") >= 0) {
    if (!one_of(text("precision"), {"fp32", "fp16", "bf16", "fp16-true", "bf16-true", "amp-fp16", "amp-bf16", "fp8"}))
      t.fail(i, col("precision"), "expected fp32, fp16, bf16, fp16-true, bf16-true, amp-fp16, amp-bf16 or fp8");
    c.sets.push_back("training.precision=" + text("precision"));
  }
  if (col("recompute") >= 0) {
    if (!one_of(text("recompute"), {"none", "selective", "full", "selective-op"}))
      t.fail(i, col("recompute"), "expected none, selective, full or selective-op");
    c.sets.push_back("training.recompute=" + text("recompute"));
  }
  if (col("zero") >= 0) {
    if (!one_of(text("zero"), {"0", "1", "2", "3"})) t.fail(i, col("zero"), "expected a ZeRO stage 0, 1, 2 or 3");
    c.sets.push_back("parallel.zero=" + text("zero"));
  }
  if (col("grad_reduce") >= 0) {
    if (!one_of(text("grad_reduce"), {"overlapped", "after_backward", "after_backward_in_place"}))
      t.fail(i, col("grad_reduce"), "expected overlapped, after_backward or after_backward_in_place");
    c.sets.push_back("parallel.grad_reduce=" + text("grad_reduce"));
  }
  if (col("sequence_parallel") >= 0) {
    const std::string& sp = text("sequence_parallel");
    if (!one_of(sp, {"yes", "no", "true", "false"})) t.fail(i, col("sequence_parallel"), "expected yes, no, true or false");
    c.sets.push_back(std::string("parallel.sequence_parallel=") + (one_of(sp, {"yes", "true"}) ? "true" : "false"));
  }
  if (col("fsdp") >= 0) {
    const std::string& f = text("fsdp");
    const FsdpStrategy* named = nullptr;
    for (const auto& s : kFsdpStrategies)
      if (one_of(f, {s.upper, s.lower})) named = &s;
    if (named) {
      c.fsdp = named->fsdp;
      c.reshard = named->reshard;
    } else if (one_of(f, {"yes", "true"})) c.fsdp = "yes";
    else if (one_of(f, {"no", "false"})) c.fsdp = "no";
    else if (f.find_first_not_of("0123456789") == std::string::npos && !f.empty() && f != "0" && f.size() < 10)
      c.fsdp = f;
    else t.fail(i, col("fsdp"), "expected yes, no, true, false or a shard size (a positive whole number), "
                                "or FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD or NO_SHARD");
  }
  if (col("context") >= 0) {
    c.context = t.positive_integer(i, col("context"));
    c.sets.push_back("parallel.context=" + std::to_string(c.context));
  }
  read_layout_cells(t, i, col, c);
  if (col("nodes") >= 0) c.nodes = t.positive_integer(i, col("nodes"));
  if (col("gpus_per_node") >= 0) c.gpus_per_node = t.positive_integer(i, col("gpus_per_node"));
  return c;
}

// What the rows' cells depend on in the base scenario.
struct BaseFacts {
  std::int64_t gpus_per_node = 1;
  bool interleaved = false;  // parallel.schedule: interleaved
  bool lora = false;         // training.lora given
  bool fsdp = false;         // parallel.fsdp enabled
};

// The fsdp cell as overrides that keep the base's other FSDP keys (its dtypes, FSDP1's flat
// parameters, offload): `yes` shards over all `data` ranks, a size N is HSDP of N (`node`: of
// the row's GPUs per node, HYBRID_SHARD), `no` turns FSDP off. A base without FSDP gets it with
// every default. A strategy's word also sets reshard_after_forward.
void fsdp_sets(const RowCells& c, const BaseFacts& base, std::int64_t data, std::vector<std::string>& sets) {
  if (c.fsdp.empty()) return;
  if (c.fsdp == "no") {
    sets.push_back("parallel.fsdp=false");
    return;
  }
  const std::int64_t per_node = c.gpus_per_node > 0 ? c.gpus_per_node : base.gpus_per_node;
  const std::string size = c.fsdp == "yes" ? std::to_string(data)
                           : c.fsdp == "node" ? std::to_string(std::min(per_node, data))
                                              : c.fsdp;
  if (base.fsdp) sets.push_back("parallel.fsdp.shard_size=" + size);
  else sets.push_back(c.fsdp == "yes" ? "parallel.fsdp=true" : "parallel.fsdp={shard_size: " + size + "}");
  if (!c.reshard.empty()) sets.push_back("parallel.fsdp.reshard_after_forward=" + c.reshard);
}

// The overrides of row `i` that depend on the base (read_layout_cells).
void base_sets(const Table& t, std::size_t i, const ColumnOf& col, const BaseFacts& base, RowCells& c) {
  if (c.virtual_stages == 1 && base.interleaved) c.sets.push_back("parallel.schedule=1f1b");
  if (c.lora_none && base.lora)
    t.fail(i, col("lora"), "expected a rank: the base scenario gives training.lora, which a row cannot remove");
}

// The overrides of the row's cluster: nodes x gpus_per_node as mapped, else the devices on
// nodes of the base's gpus_per_node. Returns gpus_per_node.
std::int64_t cluster_sets(const Table& t, std::size_t i, int nodes_col, const RowCells& c,
                          std::int64_t devices, std::int64_t base_gpn, std::vector<std::string>& sets) {
  std::int64_t gpn = c.gpus_per_node ? c.gpus_per_node : base_gpn;
  std::int64_t nodes = 0;
  if (c.nodes) {
    if (!c.gpus_per_node) gpn = devices % c.nodes == 0 ? devices / c.nodes : 0;
    std::int64_t product = 0;
    if (gpn == 0 || __builtin_mul_overflow(c.nodes, gpn, &product) || product != devices)
      t.fail(i, nodes_col, "expected nodes x gpus_per_node to equal tensor x pipeline x data x context = " +
                               std::to_string(devices));
    nodes = c.nodes;
  } else {
    gpn = std::min(gpn, devices);
    nodes = (devices - 1) / gpn + 1;
  }
  sets.push_back("cluster.gpus_per_node=" + std::to_string(gpn));
  sets.push_back("cluster.nodes=" + std::to_string(nodes));
  return gpn;
}

// What the simulated step holds for turning a rate into a step time.
StepCounts step_counts(const scenario::Scenario& s, const parallel::Plan& plan, const exec::Timeline& tl) {
  StepCounts c;
  c.tokens = static_cast<double>(plan.tokens);
  c.samples = static_cast<double>(plan.samples);
  c.devices = static_cast<double>(plan.devices_total);
  c.hardware_flops = plan.hardware_flops;
  c.model_flops = plan.model_flops;
  // The peak the report's MFU divides by (every stage's device at the training precision):
  // MFU = model FLOPs / (peak x step time), so peak = model FLOPs / (MFU x step time).
  const auto sum = report::summarize(s, plan, tl, false);
  if (sum.mfu > 0 && sum.step_time_s > 0) c.peak_flops = plan.model_flops / (sum.mfu * sum.step_time_s);
  return c;
}

}  // namespace

std::vector<RowResult> compare(const Table& table, const ColumnMap& map,
                               const std::string& base_scenario,
                               const std::function<void(int)>& on_progress) {
  auto col = [&](const std::string& key) {
    const auto it = map.columns.find(key);
    return it == map.columns.end() || it->second.empty() ? -1 : table.column(it->second);
  };
  std::vector<const char*> required = {"seq_len", "micro_batch", "global_batch", "tensor", "pipeline", "measured"};
  // A model by its shape needs all three; with none of them (and no model column) every row
  // trains the base scenario's model.
  if (col("model") < 0 && (col("layers") >= 0 || col("hidden") >= 0 || col("heads") >= 0))
    required.insert(required.begin(), {"layers", "hidden", "heads"});
  // The data degree may come from the GPU count, as tables of scaling runs give it.
  if (col("gpus") < 0) required.push_back("data");
  for (const char* key : required)
    if (col(key) < 0)
      throw core::ConfigError({table.file, table.header_line, 1}, "",
                              "the table has no column '" + map.columns.at(key) +
                                  "'; name the column that holds " + key + " with --map " + key +
                                  "=COLUMN" +
                                  (std::string(key) == "data" ? " (or the GPU count with --map gpus=COLUMN)" : ""));
  for (const auto& key : map.subset_by)
    if (col(key) < 0) {
      const auto it = map.columns.find(key);
      throw core::ConfigError({"--subset-by " + key, 1, 1}, "",
                              it == map.columns.end() ? "expected a key of --map"
                              : it->second.empty()    ? key + " is not mapped; map it with --map " + key + "=COLUMN"
                                                      : "the table has no column '" + it->second + "' for " + key +
                                                            "; map it with --map " + key + "=COLUMN");
    }
  // Every cell is checked before anything is simulated, so a bad cell in the last row is
  // reported at once rather than after simulating the others.
  const bool time_unit = is_time(map.unit);
  const std::string unit = map.unit == MeasuredUnit::s ? "in seconds" : map.unit == MeasuredUnit::ms ? "in ms" : std::string("in ") + unit_name(map.unit);
  std::vector<RowResult> out;
  std::vector<RowCells> cells;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    RowResult r;
    r.row = i + 1;
    r.label = col("label") >= 0 ? table.rows[i][col("label")] : "";
    r.tensor = table.positive_integer(i, col("tensor"));
    r.pipeline = table.positive_integer(i, col("pipeline"));
    if (time_unit) {
      r.measured = table.positive_time(i, col("measured"), unit);
      r.measured_s = step_seconds(map.unit, r.measured, {});
      if (!(r.measured_s > 0 && std::isfinite(r.measured_s)))
        table.fail(i, col("measured"), "expected a positive finite time " + unit);
    } else {
      r.measured = table.positive_number(i, col("measured"), unit);
      if (map.unit == MeasuredUnit::mfu && r.measured > 1)
        table.fail(i, col("measured"), "expected MFU as a fraction in (0, 1] (42% is 0.42)");
    }
    auto& c = cells.emplace_back(read_cells(table, i, col));
    if (col("hidden") >= 0) r.hidden = table.positive_integer(i, col("hidden"));
    if (col("micro_batch") >= 0) r.micro_batch = table.positive_integer(i, col("micro_batch"));
    if (col("data") >= 0) {
      r.data = table.positive_integer(i, col("data"));
    } else {  // data = GPUs / (tensor x pipeline x context), exactly
      const std::int64_t gpus = table.positive_integer(i, col("gpus"));
      std::int64_t split = 0;
      if (__builtin_mul_overflow(r.tensor, r.pipeline, &split) ||
          __builtin_mul_overflow(split, c.context, &split) || gpus % split != 0)
        table.fail(i, col("gpus"), "expected a multiple of tensor x pipeline x context (the data degree is GPUs / that)");
      r.data = gpus / split;
    }
    std::int64_t devices = 0;
    if (__builtin_mul_overflow(r.tensor, r.pipeline, &devices) ||
        __builtin_mul_overflow(devices, r.data, &devices) ||
        __builtin_mul_overflow(devices, c.context, &devices))
      table.fail(i, col(col("data") >= 0 ? "data" : "gpus"), "expected tensor x pipeline x data x context to fit in 64 bits");
    for (const auto& key : map.subset_by) r.groups.push_back(key + "=" + table.rows[i][col(key)]);
    out.push_back(std::move(r));
  }
  const scenario::Scenario base_read = scenario::load_scenario(base_scenario);
  BaseFacts base;
  base.gpus_per_node = base_read.cluster.gpus_per_node;
  base.interleaved = base_read.parallel.schedule == scenario::Schedule::interleaved;
  base.lora = base_read.training.lora.has_value();
  base.fsdp = base_read.parallel.fsdp.enabled;
  for (std::size_t i = 0; i < out.size(); ++i) base_sets(table, i, col, base, cells[i]);
  for (std::size_t i = 0; i < out.size(); ++i) {
    RowResult& r = out[i];
    const RowCells& c = cells[i];
    r.sets = {"parallel.tensor=" + std::to_string(r.tensor), "parallel.pipeline=" + std::to_string(r.pipeline),
              "parallel.data=" + std::to_string(r.data)};
    r.sets.insert(r.sets.begin(), c.sets.begin(), c.sets.end());
    fsdp_sets(c, base, r.data, r.sets);
    const std::int64_t devices = r.tensor * r.pipeline * r.data * c.context;
    r.tensor_across_nodes = r.tensor > cluster_sets(table, i, col("nodes"), c, devices, base.gpus_per_node, r.sets);
    try {
      const auto s = scenario::load_scenario(base_scenario, r.sets);
      const auto plan = parallel::lower(s, {.compress = true});
      const auto tl = exec::play(plan);
      r.predicted_s = core::to_seconds(tl.step_time);
      r.fits = std::all_of(tl.devices.begin(), tl.devices.end(), [](const auto& d) { return d.fits; });
      if (!time_unit) r.measured_s = step_seconds(map.unit, r.measured, step_counts(s, plan, tl));
      if (r.measured_s > 0 && std::isfinite(r.measured_s)) r.error = (r.predicted_s - r.measured_s) / r.measured_s;
      else r.skipped = std::string("the simulated step has no count to turn ") + unit_name(map.unit) + " into a step time";
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
