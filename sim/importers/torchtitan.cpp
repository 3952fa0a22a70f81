// torchtitan job TOML (torchtitan/config/job_config.py; docs/debugging and train_configs/*.toml):
// parsed with toml++ (Debian libtomlplusplus-dev). Every key read changes memory or step time;
// the others are listed as ignored.
#include <filesystem>
#include <array>
#include <charconv>
#include <set>

#include <toml++/toml.h>

#include "models/presets.hpp"
#include "sim/importers/import.hpp"

namespace trainsim::importers {

namespace {

core::SourceLocation at(const toml::source_region& r, const std::string& file) {
  return {file, static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)};
}

// One [section]: typed, located reads that remember which keys were read.
class TomlSection {
 public:
  TomlSection(const toml::table* t, std::string name, std::string file)
      : t_(t), name_(std::move(name)), file_(std::move(file)) {}

  const toml::node* get(const std::string& key) {
    read_.insert(key);
    return t_ ? t_->get(key) : nullptr;
  }
  core::SourceLocation where(const std::string& key) const {
    const toml::node* n = t_ ? t_->get(key) : nullptr;
    return n ? at(n->source(), file_) : core::SourceLocation{file_, 1, 1};
  }
  std::string path(const std::string& key) const { return name_ + "." + key; }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw core::ConfigError(where(key), path(key), what);
  }

  // Degrees, batches and lengths: within 2^30.
  std::optional<std::int64_t> integer(const std::string& key, std::int64_t min) {
    constexpr std::int64_t max = std::int64_t{1} << 30;
    const toml::node* n = get(key);
    if (!n) return std::nullopt;
    const auto v = n->value<std::int64_t>();
    if (!n->is_integer() || !v || *v < min || *v > max)
      fail(key, "expected an integer in " + std::to_string(min) + ".." + std::to_string(max));
    return *v;
  }
  std::optional<std::string> string(const std::string& key) {
    const toml::node* n = get(key);
    if (!n) return std::nullopt;
    if (!n->is_string()) fail(key, "expected a string");
    return *n->value<std::string>();
  }
  std::optional<bool> boolean(const std::string& key) {
    const toml::node* n = get(key);
    if (!n) return std::nullopt;
    if (!n->is_boolean()) fail(key, "expected true or false");
    return *n->value<bool>();
  }
  void ignore_rest(Draft& d) const {
    if (!t_) return;
    for (const auto& [k, v] : *t_)
      if (!read_.count(std::string(k.str()))) d.ignore(path(std::string(k.str())), at(k.source(), file_));
  }

 private:
  const toml::table* t_;
  std::string name_, file_;
  std::set<std::string> read_;
};

// torchtitan's model name and flavor -> the trainsim preset of the same shape.
std::optional<std::string> preset(const std::string& name, const std::string& flavor) {
  static const std::vector<std::array<const char*, 3>> map = {
      {"llama3", "8B", "llama3-8b"},   {"llama3", "70B", "llama3-70b"}, {"llama3", "405B", "llama3-405b"},
      {"llama2", "7B", "llama2-7b"},   {"llama2", "13B", "llama2-13b"}, {"llama2", "70B", "llama2-70b"}};
  for (const auto& m : map)
    if (name == m[0] && flavor == m[1]) return m[2];
  return std::nullopt;
}

void map_model(TomlSection& model, TomlSection& float8, const ImportOptions& o, Draft& d) {
  const std::string name = model.string("name").value_or("llama3");
  const std::string flavor = model.string("flavor").value_or("debugmodel");
  if (const toml::node* conv = model.get("converters")) {
    const toml::array* list = conv->as_array();
    if (!list) model.fail("converters", "expected a list of strings");
    for (const auto& c : *list)
      if (c.value<std::string>() && *c.value<std::string>() != "")
        unsupported(at(c.source(), model.where("converters").file), model.path("converters"),
                    "model converter '" + *c.value<std::string>() + "' (low-precision training)");
  }
  if (float8.boolean("enable_float8_linear").value_or(false))
    unsupported(float8.where("enable_float8_linear"), "float8.enable_float8_linear", "float8 training");
  if (auto m = model_from_option(o, d)) {
    d.model = *m;
    d.notes.push_back("--model replaces model " + name + " " + flavor);
    return;
  }
  const auto p = preset(name, flavor);
  if (!p)
    throw core::ConfigError(model.where("flavor"), "model.flavor",
                            "torchtitan model '" + name + "' flavor '" + flavor +
                                "' has no trainsim preset (llama3 8B/70B/405B, llama2 7B/13B/70B): give --model");
  d.model = *p;
}

// Blocks of a preset model, for "checkpoint every k-th block"; 0 when the model is no preset.
int preset_layers(const std::string& model) {
  const models::Preset* p = models::find_preset(model);
  const auto* t = p ? std::get_if<models::TransformerConfig>(&p->config) : nullptr;
  return t ? t->layers : 0;
}

// activation_checkpoint: torchtitan's defaults are mode "selective", option "2" (every second
// block checkpointed whole).
void map_checkpointing(TomlSection& ac, std::int64_t pipeline, Draft& d) {
  const std::string mode = ac.string("mode").value_or("selective");
  if (mode == "none") return;
  if (mode == "full") {
    Draft::set(d.training, "recompute", "full");
    return;
  }
  if (mode == "memory_budget")
    unsupported(ac.where("mode"), "activation_checkpoint.mode", "checkpointing to a memory budget");
  if (mode != "selective")
    ac.fail("mode", "expected \"none\", \"selective\", \"full\" or \"memory_budget\", got \"" + mode + "\"");
  const std::string option = ac.string("selective_ac_option").value_or("2");
  if (option == "op") {
    Draft::set(d.training, "recompute", "selective-op");
    return;
  }
  std::int64_t every = 0;
  const auto [end, ec] = std::from_chars(option.data(), option.data() + option.size(), every);
  if (ec != std::errc{} || end != option.data() + option.size() || every < 1)
    ac.fail("selective_ac_option", "expected \"op\" or a positive integer, got \"" + option + "\"");
  Draft::set(d.training, "recompute", "full");
  if (every == 1) return;
  const int layers = preset_layers(d.model);
  if (layers == 0)
    unsupported(ac.where("selective_ac_option"), "activation_checkpoint.selective_ac_option",
                "checkpointing every " + option + " blocks of a model that is no preset");
  // One block in `every` of each stage's blocks is checkpointed.
  const std::int64_t per_stage = layers / pipeline / every;
  Draft::set(d.training, "recompute_layers", std::to_string(per_stage));
  d.notes.push_back("selective_ac_option " + option + ": " + std::to_string(per_stage) + " of " +
                    std::to_string(layers / pipeline) + " blocks per stage recomputed");
}

}  // namespace

Draft import_torchtitan(const std::string& text, const std::string& path, const ImportOptions& o) {
  Draft d;
  d.kind = "torchtitan";
  d.source = path;
  d.name = std::filesystem::path(path).stem().string();
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw core::ConfigError(at(e.source(), path), "", "not valid TOML: " + std::string(e.description()));
  }
  std::vector<std::string> names;
  for (const auto& [k, v] : root) {
    names.emplace_back(k.str());
    if (!v.is_table()) d.ignore(std::string(k.str()), at(k.source(), path));
  }
  auto section = [&](const char* name) { return TomlSection(root[name].as_table(), name, path); };
  TomlSection model = section("model"), training = section("training"), par = section("parallelism"),
          ac = section("activation_checkpoint"), float8 = section("float8"), opt = section("optimizer");
  map_model(model, float8, o, d);

  // Parallel degrees; data_parallel_shard_degree -1 takes the GPUs the others leave.
  const std::int64_t tp = par.integer("tensor_parallel_degree", 1).value_or(1);
  const std::int64_t pp = par.integer("pipeline_parallel_degree", 1).value_or(1);
  for (const char* k : {"context_parallel_degree", "expert_parallel_degree"})
    if (par.integer(k, 1).value_or(1) > 1) unsupported(par.where(k), par.path(k), std::string(k) + " above 1");
  const std::int64_t replicate = par.integer("data_parallel_replicate_degree", 1).value_or(1);
  std::int64_t shard = par.integer("data_parallel_shard_degree", -1).value_or(-1);
  if (shard == 0) par.fail("data_parallel_shard_degree", "expected -1 or a positive integer");
  if (shard == -1) shard = data_degree(o, tp * pp * replicate, d);
  else if (o.gpus && product({shard, replicate, tp, pp}) != *o.gpus)
    throw core::ConfigError(par.where("data_parallel_shard_degree"), "--gpus",
                            std::to_string(*o.gpus) + " GPUs disagree with the parallelism degrees");
  if (shard > 1)
    unsupported(par.where("data_parallel_shard_degree"), "parallelism.data_parallel_shard_degree",
                "FSDP (data_parallel_shard_degree " + std::to_string(shard) + ")");
  const std::int64_t data = replicate;
  std::string schedule = "1f1b";
  if (auto s = par.string("pipeline_parallel_schedule")) {
    if (*s == "1F1B") schedule = "1f1b";
    else if (*s == "GPipe") schedule = "gpipe";
    else if (*s == "Interleaved1F1B") schedule = "interleaved";
    else unsupported(par.where("pipeline_parallel_schedule"), "parallelism.pipeline_parallel_schedule",
                     "pipeline schedule '" + *s + "'");
  }

  map_checkpointing(ac, pp, d);

  // Batch: local_batch_size (older: batch_size) samples per data-parallel rank; with a pipeline
  // it is split into micro-batches of pipeline_parallel_microbatch_size.
  std::optional<std::int64_t> local = training.integer("local_batch_size", 1);
  if (!local) local = training.integer("batch_size", 1);
  const std::int64_t local_batch = local.value_or(8);
  std::int64_t micro = local_batch;
  if (pp > 1) {
    const std::int64_t mbs = par.integer("pipeline_parallel_microbatch_size", 1).value_or(1);
    if (auto n = par.integer("pipeline_parallel_microbatches", 1)) micro = local_batch / *n;
    else micro = mbs;
    if (micro < 1 || local_batch % micro != 0)
      par.fail("pipeline_parallel_microbatch_size", "must divide the local batch " + std::to_string(local_batch));
  }
  std::int64_t global = training.integer("global_batch_size", -1).value_or(-1);
  if (global == -1) global = local_batch * data;
  if (global < 1 || global % (local_batch * data) != 0)
    training.fail("global_batch_size", "must be a multiple of local batch x data-parallel degree = " +
                                           std::to_string(local_batch * data));
  Draft::set(d.training, "micro_batch", std::to_string(micro));
  Draft::set(d.training, "global_batch", std::to_string(global));
  const auto seq = training.integer("seq_len", 1);
  if (!seq) d.notes.push_back("no training.seq_len: 2048 (torchtitan's default)");
  Draft::set(d.training, "seq_len", std::to_string(seq.value_or(2048)));
  const std::string mp = training.string("mixed_precision_param").value_or("bfloat16");
  if (mp != "bfloat16" && mp != "float32")
    training.fail("mixed_precision_param", "expected \"bfloat16\" or \"float32\", got \"" + mp + "\"");
  Draft::set(d.training, "precision", mp == "bfloat16" ? "bf16" : "fp32");
  const std::string optimizer = opt.string("name").value_or("AdamW");
  if (optimizer != "AdamW" && optimizer != "Adam")
    unsupported(opt.where("name"), "optimizer.name", "optimizer '" + optimizer + "'");
  Draft::set(d.training, "optimizer", optimizer == "AdamW" ? "adamw" : "adam");
  Draft::set(d.parallel, "data", std::to_string(data));
  Draft::set(d.parallel, "tensor", std::to_string(tp));
  Draft::set(d.parallel, "pipeline", std::to_string(pp));
  if (pp > 1) Draft::set(d.parallel, "schedule", schedule);
  // torchtitan's tensor parallelism shards the norms' activations too (Megatron's sequence parallelism).
  if (tp > 1) Draft::set(d.parallel, "sequence_parallel", "true");
  for (TomlSection* s : {&model, &training, &par, &ac, &float8, &opt}) s->ignore_rest(d);
  for (const auto& n : names) {
    if (n == "model" || n == "training" || n == "parallelism" || n == "activation_checkpoint" ||
        n == "float8" || n == "optimizer" || !root[n].is_table())
      continue;
    section(n.c_str()).ignore_rest(d);
  }
  apply_common(o, data * tp * pp, d);
  return d;
}

}  // namespace trainsim::importers
