#pragma once
// The scenario an importer builds: the keys it could map, in the order the YAML lists them, and
// what it left out. Importers fill a Draft from a framework's config; `to_yaml` writes it.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"

namespace trainsim::importers {

// What the command line adds to a framework's config (trainsim import --model ... -o ...).
struct ImportOptions {
  std::optional<std::string> model;   // a preset name or a Hugging Face config.json path
  std::optional<std::int64_t> gpus;
  std::optional<std::int64_t> gpus_per_node;
  std::optional<std::string> device;  // a device preset name
  std::optional<std::int64_t> seq_len;
  std::string output;                 // -o path ("" = standard output): where relative paths point from
};

// One mapping of a scenario section: keys and YAML values (numbers, names, flow mappings).
using Section = std::vector<std::pair<std::string, std::string>>;

struct Draft {
  std::string kind;    // "megatron", ...
  std::string source;  // the imported file
  std::string name;
  std::string model;   // a YAML value: a preset name or a flow mapping
  bool sequence_model = true;
  std::string device;
  Section training, parallel, cluster;
  std::vector<std::string> ignored;  // "OPTION (file:line:col)" for each option left out
  std::vector<std::string> notes;    // assumptions and approximations, one line each

  // An empty draft of `kind` imported from `path`, named after the file's stem.
  static Draft of(const std::string& kind, const std::string& path);
  // Sets `key` in `section` (replacing an earlier value).
  static void set(Section& section, const std::string& key, const std::string& value);
  static const std::string* get(const Section& section, const std::string& key);
  void ignore(const std::string& option, const core::SourceLocation& at);
};

// The data-parallel degree a config leaves to the launcher: --gpus / `model_parallel` (the
// config's other degrees), which must divide; 1 (with a note) without --gpus.
std::int64_t data_degree(const ImportOptions& o, std::int64_t model_parallel, Draft& d);

// Device, sequence length and cluster from the command line; the node shape follows
// --gpus-per-node (default: the scenario's own default, min(devices, 8)).
void apply_common(const ImportOptions& o, std::int64_t devices, Draft& d);

// `model:` from --model: a preset name, or a path to a Hugging Face config.json (written
// relative to the output file's folder when -o is given). Empty optional: --model absent.
// Throws ConfigError naming --model for an unknown preset or a missing file.
std::optional<std::string> model_from_option(const ImportOptions& o, Draft& d);
// For formats that do not describe the model (DeepSpeed, TrainingArguments): sets d.model from
// --model and d.name from the file's stem; without --model, a ConfigError at --model saying `why`.
void require_model(const ImportOptions& o, const std::string& path, const std::string& why, Draft& d);

// The product of `factors`, or nullopt when it overflows 64 bits.
std::optional<std::int64_t> product(std::initializer_list<std::int64_t> factors);

// A YAML double-quoted scalar.
std::string quote(const std::string& s);

// A YAML flow mapping of `s` in its own order: "{k1: v1, k2: v2}" ("{}" when empty).
std::string flow_mapping(const Section& s);
// A YAML flow sequence of `items`: "[a, b]".
std::string flow_sequence(const std::vector<std::string>& items);

// The scenario YAML: a comment header (source, notes, ignored options) and the sections.
std::string to_yaml(const Draft& d);

// When the draft shards with parallel.fsdp, its optimizer must be one whose states FSDP shards
// in trainsim (the scenario loader's rule: not per-tensor or paged states): otherwise an
// unsupported error at `at` naming `option` (the config's optimizer key).
void require_fsdp_optimizer(const Draft& d, const core::SourceLocation& at, const std::string& option);

// A ConfigError at `at` naming `option`: "... is not supported by trainsim yet".
[[noreturn]] void unsupported(const core::SourceLocation& at, const std::string& option,
                              const std::string& what);

}  // namespace trainsim::importers
