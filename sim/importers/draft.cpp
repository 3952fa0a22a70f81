#include "sim/importers/draft.hpp"

#include <algorithm>
#include <filesystem>
#include <type_traits>
#include <variant>

#include "models/presets.hpp"
#include "sim/hw/device.hpp"
#include "sim/scenario/precision.hpp"

namespace trainsim::importers {

namespace fs = std::filesystem;

Draft Draft::of(const std::string& kind, const std::string& path) {
  Draft d;
  d.kind = kind;
  d.source = path;
  d.name = fs::path(path).stem().string();
  return d;
}

void Draft::set(Section& section, const std::string& key, const std::string& value) {
  for (auto& [k, v] : section)
    if (k == key) {
      v = value;
      return;
    }
  section.emplace_back(key, value);
}

const std::string* Draft::get(const Section& section, const std::string& key) {
  for (const auto& [k, v] : section)
    if (k == key) return &v;
  return nullptr;
}

void Draft::ignore(const std::string& option, const core::SourceLocation& at) {
  std::string where = at.file;
  if (at.line > 0) where += ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
  ignored.push_back(option + " (" + where + ")");
}

void unsupported(const core::SourceLocation& at, const std::string& option, const std::string& what) {
  throw core::ConfigError(at, option, what + " is not supported by trainsim yet");
}

void require_fsdp_optimizer(const Draft& d, const core::SourceLocation& at, const std::string& option) {
  const std::string* opt = Draft::get(d.training, "optimizer");
  if (!Draft::get(d.parallel, "fsdp") || !opt) return;
  // The scenario loader's rule (sim/scenario/optimizer_read.cpp): states kept per parameter
  // tensor, or paged, are not sharded by parallel.fsdp.
  const auto& names = scenario::optimizer_names();
  const auto it = std::find(names.begin(), names.end(), *opt);
  if (it == names.end()) return;  // the loader names it at the key
  const auto o = static_cast<scenario::Optimizer>(it - names.begin());
  if (scenario::per_tensor_states(o) || scenario::paged(o)) unsupported(at, option, "optimizer " + *opt + " with FSDP");
}

namespace {
constexpr std::int64_t kMaxDevices = std::int64_t{1} << 24;  // the scenario's limit
// Command-line options have no file position.
core::SourceLocation command_line() { return {"trainsim import", 0, 0}; }
}  // namespace

std::int64_t data_degree(const ImportOptions& o, std::int64_t model_parallel, Draft& d) {
  if (!o.gpus) {
    d.notes.push_back("no --gpus: data parallel degree 1 (" + std::to_string(model_parallel) +
                      " GPUs)");
    return 1;
  }
  if (*o.gpus < 1 || *o.gpus > kMaxDevices || *o.gpus % model_parallel != 0)
    throw core::ConfigError(command_line(), "--gpus",
                            "expected a multiple of the config's model-parallel size " +
                                std::to_string(model_parallel) + " in 1..16777216, got " + std::to_string(*o.gpus));
  return *o.gpus / model_parallel;
}

void apply_common(const ImportOptions& o, std::int64_t devices, Draft& d) {
  if (o.device) {
    if (!hw::find_device(*o.device)) {
      std::string names;
      for (const auto& p : hw::device_presets()) names += (names.empty() ? "" : ", ") + p.name;
      throw core::ConfigError(command_line(), "--device",
                              "unknown device preset '" + *o.device + "'; expected one of: " + names);
    }
    d.device = *o.device;
  } else {
    d.device = "h100-80gb";
    d.notes.push_back("no --device: h100-80gb");
  }
  if (o.seq_len) {
    if (*o.seq_len < 1)
      throw core::ConfigError(command_line(), "--seq-len",
                              "expected a positive integer, got " + std::to_string(*o.seq_len));
    Draft::set(d.training, "seq_len", std::to_string(*o.seq_len));
  }
  if (d.sequence_model && !Draft::get(d.training, "seq_len"))
    throw core::ConfigError(command_line(), "--seq-len",
                            "the " + d.kind + " config does not give the sequence length: give --seq-len");
  if (o.gpus_per_node) {
    const std::int64_t g = *o.gpus_per_node;
    if (g < 1 || (devices % g != 0 && g < devices))
      throw core::ConfigError(command_line(), "--gpus-per-node",
                              "expected a positive divisor of the " + std::to_string(devices) +
                                  " GPUs, got " + std::to_string(g));
    const std::int64_t per_node = std::min(g, devices);
    Draft::set(d.cluster, "nodes", std::to_string(devices / per_node));
    Draft::set(d.cluster, "gpus_per_node", std::to_string(per_node));
  }
}

std::optional<std::string> model_from_option(const ImportOptions& o, Draft& d) {
  if (!o.model) return std::nullopt;
  const std::string& m = *o.model;
  if (const models::Preset* p = models::find_preset(m)) {
    d.sequence_model = std::holds_alternative<models::TransformerConfig>(p->config);
    return m;
  }
  const fs::path path(m);
  std::error_code ec;
  if (path.extension() != ".json" || !fs::is_regular_file(path, ec))
    throw core::ConfigError(command_line(), "--model",
                            "expected a model preset name or a Hugging Face config.json file, got '" +
                                m + "' (presets: " + models::preset_names() + ")");
  d.sequence_model = true;
  // The scenario reads hf_config relative to its own folder: relative to -o's folder, or
  // absolute when the scenario goes to standard output (it may be saved anywhere).
  std::string written = m;
  if (path.is_relative()) {
    const fs::path file = fs::absolute(path).lexically_normal();
    written = o.output.empty()
                  ? file.string()
                  : file.lexically_relative(fs::absolute(fs::path(o.output)).parent_path()).string();
  }
  return "{hf_config: " + quote(written) + "}";
}

void require_model(const ImportOptions& o, const std::string& path, const std::string& why, Draft& d) {
  auto model = model_from_option(o, d);
  if (!model) throw core::ConfigError({"trainsim import", 0, 0}, "--model", why);
  d.model = *model;
  d.name = fs::path(path).stem().string();
}

std::optional<std::int64_t> product(std::initializer_list<std::int64_t> factors) {
  std::int64_t p = 1;
  for (const std::int64_t f : factors)
    if (__builtin_mul_overflow(p, f, &p)) return std::nullopt;
  return p;
}

namespace {
// `s` with control characters written as \xHH (YAML's escape), so a name or an option read
// from a file cannot end a comment line or a quoted scalar.
std::string escaped(const std::string& s, bool quotes) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += std::string("\\x") + hex[u >> 4] + hex[u & 15];
      continue;
    }
    if (quotes && (c == '"' || c == '\\')) out += '\\';
    out += c;
  }
  return out;
}
}  // namespace

std::string quote(const std::string& s) { return "\"" + escaped(s, true) + "\""; }

std::string flow_mapping(const Section& s) {
  std::string out = "{";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + s[i].first + ": " + s[i].second;
  return out + "}";
}

std::string flow_sequence(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}

namespace {
// Keys in the order docs/scenarios.md lists them; others after, as set.
std::size_t rank(const std::string& key) {
  static const std::vector<std::string> order = {
      "micro_batch", "gradient_accumulation", "global_batch", "seq_len", "precision", "optimizer",
      "recompute", "recompute_layers", "attention", "offload", "data", "tensor", "pipeline", "zero",
      "schedule", "pipeline_engine", "microbatches_per_schedule", "virtual_stages", "microbatch_group_size", "first_stage_blocks", "last_stage_blocks", "embedding_in_split", "loss_in_split", "sequence_parallel", "tp_comm_overlap", "param_gather", "bucket_size", "bucket_buffers", "nodes",
      "gpus_per_node"};
  return static_cast<std::size_t>(std::find(order.begin(), order.end(), key) - order.begin());
}

std::string flow(Section s) {
  std::stable_sort(s.begin(), s.end(), [](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
  return flow_mapping(s);
}

// Comment lines of at most ~100 columns listing `items` after `title`.
void wrapped(std::string& out, const std::string& title, const std::vector<std::string>& items) {
  std::string line = "# " + title;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = escaped(items[i], false) + (i + 1 < items.size() ? "," : "");
    if (line.size() + 1 + item.size() > 100) {
      out += line + "\n";
      line = "#  ";
    }
    line += " " + item;
  }
  out += line + "\n";
}
}  // namespace

std::string to_yaml(const Draft& d) {
  std::string out = "# Imported by trainsim import " + d.kind + " from " + escaped(d.source, false) + "\n";
  for (const auto& n : d.notes) out += "# note: " + escaped(n, false) + "\n";
  if (!d.ignored.empty()) wrapped(out, "ignored:", d.ignored);
  out += "name: " + quote(d.name) + "\n";
  out += "model: " + d.model + "\n";
  out += "device: " + d.device + "\n";
  out += "training: " + flow(d.training) + "\n";
  if (!d.parallel.empty()) out += "parallel: " + flow(d.parallel) + "\n";
  if (!d.cluster.empty()) out += "cluster: " + flow(d.cluster) + "\n";
  return out;
}

}  // namespace trainsim::importers
