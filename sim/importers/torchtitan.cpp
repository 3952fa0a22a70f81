// torchtitan job TOML (torchtitan/config/job_config.py; docs/debugging and train_configs/*.toml):
// parsed with toml++ (Debian libtomlplusplus-dev). Every key read changes memory or step time;
// the others are listed as ignored.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <charconv>
#include <set>

#include <toml++/toml.h>

#include "models/presets.hpp"
#include "sim/importers/import.hpp"
#include "sim/importers/torchtitan_split.hpp"

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
  bool has(const std::string& key) const { return t_ && t_->get(key); }
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

// Low-precision linears: `model.converters` (torchtitan's model converters; "float8" is torchao's
// Float8Linear) or the older `[float8] enable_float8_linear`. MX formats have no model here.
bool map_converters(TomlSection& model, TomlSection& float8) {
  bool fp8 = false;
  if (const toml::node* conv = model.get("converters")) {
    const toml::array* list = conv->as_array();
    if (!list) model.fail("converters", "expected a list of strings");
    for (const auto& c : *list) {
      const auto name = c.value<std::string>();
      if (!name) model.fail("converters", "expected a list of strings");
      if (*name == "float8") fp8 = true;
      else if (!name->empty())
        unsupported(at(c.source(), model.where("converters").file), model.path("converters"),
                    "model converter '" + *name + "' (low-precision training other than float8)");
    }
  }
  return float8.boolean("enable_float8_linear").value_or(false) || fp8;
}

void map_model(TomlSection& model, const ImportOptions& o, Draft& d) {
  const std::string name = model.string("name").value_or("llama3");
  const std::string flavor = model.string("flavor").value_or("debugmodel");
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

// Experts of a preset model (0: none, or not a preset).
std::int64_t preset_experts(const std::string& model) {
  const models::Preset* p = models::find_preset(model);
  const auto* t = p ? std::get_if<models::TransformerConfig>(&p->config) : nullptr;
  return t ? t->experts : 0;
}

// torchtitan's degrees (ParallelDims): world = replicate x shard x context x tensor x pipeline;
// FSDP is on when shard x context > 1 (fully_shard over the (dp_shard, cp) mesh).
struct Degrees {
  std::int64_t tp = 1, pp = 1, cp = 1, ep = 1, replicate = 1, shard = 1;
  bool fsdp() const { return shard * cp > 1; }
};

// Where a parallelism key is: [parallelism] since early 2025; before, the data, tensor and
// compile keys were in [training] and the pipeline and context keys in [experimental].
struct Layout {
  TomlSection &par, &training, &experimental;
  TomlSection& pick(const std::string& key) {
    for (TomlSection* s : {&par, &training, &experimental})
      if (s->has(key)) return *s;
    return par;
  }
};

Degrees map_degrees(Layout& l, const ImportOptions& o, Draft& d) {
  Degrees g;
  auto degree = [&](const char* key) { return l.pick(key).integer(key, 1).value_or(1); };
  g.tp = degree("tensor_parallel_degree");
  g.pp = degree("pipeline_parallel_degree");
  g.cp = degree("context_parallel_degree");
  g.ep = degree("expert_parallel_degree");
  g.replicate = degree("data_parallel_replicate_degree");
  TomlSection& sec = l.pick("data_parallel_shard_degree");
  std::int64_t shard = -1;
  if (const toml::node* n = sec.get("data_parallel_shard_degree")) {
    const auto v = n->value<std::int64_t>();
    if (!n->is_integer() || !v || (*v != -1 && (*v < 1 || *v > (std::int64_t{1} << 30))))
      sec.fail("data_parallel_shard_degree", "expected -1 or an integer in 1..1073741824");
    shard = *v;
  }
  const auto others = product({g.replicate, g.cp, g.tp, g.pp});
  if (!others) sec.fail("data_parallel_shard_degree", "the product of the degrees overflows");
  if (shard == -1) shard = data_degree(o, *others, d);
  else if (o.gpus && product({shard, *others}) != *o.gpus)
    throw core::ConfigError(sec.where("data_parallel_shard_degree"), "--gpus",
                            std::to_string(*o.gpus) + " GPUs disagree with the parallelism degrees");
  g.shard = shard;
  if (g.ep > 1 && preset_experts(d.model) <= 1 && models::find_preset(d.model)) {
    TomlSection& e = l.pick("expert_parallel_degree");
    unsupported(e.where("expert_parallel_degree"), e.path("expert_parallel_degree"),
                "expert parallelism of a model without experts (" + d.model + ")");
  }
  return g;
}

// The schedule written ("" without a pipeline).
std::string map_pipeline(Layout& l, const Degrees& g, Draft& d) {
  if (g.pp == 1) return "";
  TomlSection& par = l.pick("pipeline_parallel_schedule");
  std::string schedule = "1f1b";
  if (auto s = par.string("pipeline_parallel_schedule")) {
    if (*s == "1F1B") schedule = "1f1b";
    else if (*s == "GPipe") schedule = "gpipe";
    else if (*s == "Interleaved1F1B") schedule = "interleaved";
    else unsupported(par.where("pipeline_parallel_schedule"), par.path("pipeline_parallel_schedule"),
                     "pipeline schedule '" + *s + "'");
  }
  Draft::set(d.parallel, "schedule", schedule);
  // torchtitan runs torch.distributed.pipelining, whose schedules order units their own way.
  Draft::set(d.parallel, "pipeline_engine", "pytorch");
  return schedule;
}

// PyTorch's ScheduleInterleaved1F1B (torch/distributed/pipelining/schedules.py) runs the n
// micro-batches of a schedule in max(1, n / pipeline) rounds of n / rounds each, every chunk in
// turn per round (the pytorch engine derives the same rounds); it refuses n not a multiple of
// the rounds. For Interleaved1F1B over a pipeline.
void map_rounds(TomlSection& par, const Degrees& g, std::int64_t n) {
  const std::int64_t rounds = std::max<std::int64_t>(1, n / g.pp);
  const std::string key = par.has("pipeline_parallel_microbatch_size") ? "pipeline_parallel_microbatch_size"
                                                                        : "pipeline_parallel_schedule";
  if (n % rounds != 0)
    par.fail(key,
             std::to_string(n) + " micro-batches per schedule: Interleaved1F1B needs a multiple of its " +
                 std::to_string(rounds) + " rounds");
}

// torchtitan's own pipeline split (torchtitan_split.hpp): 2 parts per rank for Interleaved1F1B,
// else 1, unless `pipeline_parallel_layers_per_stage` sets the parts; explicit
// `pipeline_parallel_split_points` ("layers.N": where a part starts) as given. Written as
// `split_points` where it differs from trainsim's even split.
void map_split(Layout& l, const Degrees& g, bool interleaved, bool legacy, Draft& d) {
  const std::int64_t blocks = preset_layers(d.model);
  TomlSection& sp = l.pick("pipeline_parallel_split_points");
  TomlSection& lps = l.pick("pipeline_parallel_layers_per_stage");
  const std::int64_t in_w = l.pick("pipeline_parallel_first_stage_less_layers")
                                .integer("pipeline_parallel_first_stage_less_layers", 0).value_or(1);
  const std::int64_t out_w = l.pick("pipeline_parallel_last_stage_less_layers")
                                 .integer("pipeline_parallel_last_stage_less_layers", 0).value_or(1);
  std::int64_t parts = g.pp * (interleaved ? 2 : 1);
  if (auto per = lps.integer("pipeline_parallel_layers_per_stage", 1)) {
    parts = (blocks + in_w + out_w + *per - 1) / *per;
    if (blocks == 0 || parts % g.pp != 0 || (!interleaved && parts != g.pp))
      lps.fail("pipeline_parallel_layers_per_stage",
               std::to_string(parts) + " stages for the pipeline degree " + std::to_string(g.pp) +
                   (interleaved ? ": torchtitan needs a multiple of it" : ": a single-stage schedule needs exactly it"));
    if (interleaved && parts != 2 * g.pp) Draft::set(d.parallel, "virtual_stages", std::to_string(parts / g.pp));
  }
  if (blocks == 0) {
    d.notes.push_back("the model is no torchtitan preset: trainsim splits its blocks evenly over the stages");
    return;
  }
  std::vector<std::int64_t> per_part;
  std::string rule;
  if (const toml::node* n = sp.get("pipeline_parallel_split_points")) {
    const toml::array* a = n->as_array();
    if (!a || static_cast<std::int64_t>(a->size()) != parts - 1)
      sp.fail("pipeline_parallel_split_points",
              "expected " + std::to_string(parts - 1) + " strings \"layers.N\" (one per stage after the first)");
    std::int64_t prev = 0;
    for (const toml::node& e : *a) {
      const auto s = e.value<std::string>();
      const std::int64_t at = s && s->rfind("layers.", 0) == 0 ? std::atoll(s->c_str() + 7) : -1;
      if (at <= prev || at >= blocks)
        sp.fail("pipeline_parallel_split_points",
                "expected increasing \"layers.N\" with N in 1.." + std::to_string(blocks - 1));
      per_part.push_back(at - prev);
      prev = at;
    }
    per_part.push_back(blocks - prev);
    rule = "pipeline_parallel_split_points";
  } else if (legacy) {
    if (parts > blocks)
      l.pick("pipeline_parallel_degree").fail("pipeline_parallel_degree", "more pipeline stages than blocks");
    per_part = split_2024(blocks, parts);
    rule = "torchtitan's generate_split_points (2024)";
  } else {
    std::string why;
    per_part = split_fqn(blocks, parts, in_w, out_w, &why);
    if (per_part.empty()) l.pick("pipeline_parallel_degree").fail("pipeline_parallel_degree", why);
    rule = "torchtitan's generate_llm_fqn_per_model_part (2025)";
  }
  const std::vector<std::int64_t> points = preset_split_points(d.model, per_part);
  if (points.empty()) return;  // trainsim's even split is torchtitan's
  std::string list, blocks_per;
  for (std::size_t i = 0; i < points.size(); ++i) list += (i ? ", " : "") + std::to_string(points[i]);
  for (std::size_t i = 0; i < per_part.size(); ++i) blocks_per += (i ? " " : "") + std::to_string(per_part[i]);
  Draft::set(d.parallel, "split_points", "[" + list + "]");
  d.notes.push_back("pipeline split as " + rule + ": blocks per stage " + blocks_per);
}

// The dtypes (torchtitan/distributed/utils.py maybe_enable_amp; job_config.py `training.dtype`):
// `dtype = "bfloat16"` makes the whole model bf16; otherwise fully_shard's MixedPrecisionPolicy
// under FSDP (fp32 shards, bf16 gathers), torch.autocast under DDP or on one GPU, and nothing
// (fp32) with tensor or pipeline parallelism without FSDP.
struct Precision {
  std::string name;          // training.precision
  bool reduce_bf16 = false;  // mixed_precision_reduce = "bfloat16" (older versions allowed it)
};

Precision map_precision(TomlSection& training, const Degrees& g, bool fp8, Draft& d) {
  const std::string dtype = training.string("dtype").value_or("float32");
  if (dtype != "bfloat16" && dtype != "float32")
    training.fail("dtype", "expected \"bfloat16\" or \"float32\", got \"" + dtype + "\"");
  const std::string mp = training.string("mixed_precision_param").value_or("bfloat16");
  if (mp != "bfloat16" && mp != "float32")
    training.fail("mixed_precision_param", "expected \"bfloat16\" or \"float32\", got \"" + mp + "\"");
  const std::string reduce = training.string("mixed_precision_reduce").value_or("float32");
  if (reduce != "bfloat16" && reduce != "float32")
    training.fail("mixed_precision_reduce", "expected \"float32\" or \"bfloat16\", got \"" + reduce + "\"");
  const bool reduce_bf16 = reduce == "bfloat16" && g.fsdp();
  if (fp8) {
    if (!g.fsdp()) d.notes.push_back("float8 without FSDP: fp8 linears over 16-bit weights with fp32 master");
    return {"fp8", reduce_bf16};
  }
  if (dtype == "bfloat16") return {"bf16-true", reduce_bf16};
  if (mp == "float32") return {"fp32", reduce_bf16};
  if (g.fsdp()) return {"bf16", reduce_bf16};
  if (g.tp > 1 || g.pp > 1) {
    d.notes.push_back("mixed precision is off with tensor or pipeline parallelism without FSDP "
                      "(torchtitan's maybe_enable_amp): fp32");
    return {"fp32", false};
  }
  return {"amp-bf16", false};
}

// parallel.fsdp as torchtitan's apply_fsdp calls fully_shard: the token embedding and the
// [norm, output] pair as units of their own (since 2025-07-28; the older `batch_size` key: in
// the root), reshard_after_forward by `fsdp_reshard_after_forward` ("default": not with a
// pipeline), CPUOffloadPolicy by `training.enable_cpu_offload`, HSDP with a replicate degree.
void map_fsdp(TomlSection& par, TomlSection& training, const Degrees& g, const Precision& p, bool old_layout,
              Draft& d) {
  const std::string policy = par.string("fsdp_reshard_after_forward").value_or("default");
  if (policy != "default" && policy != "always" && policy != "never")
    par.fail("fsdp_reshard_after_forward", "expected \"default\", \"always\" or \"never\", got \"" + policy + "\"");
  const bool offload = training.boolean("enable_cpu_offload").value_or(false);
  if (!g.fsdp()) {
    if (offload) unsupported(training.where("enable_cpu_offload"), "training.enable_cpu_offload", "CPU offload without FSDP");
    return;
  }
  Section f;
  if (g.replicate > 1) Draft::set(f, "shard_size", std::to_string(g.shard));
  if (policy == "never" || (policy == "default" && g.pp > 1)) Draft::set(f, "reshard_after_forward", "false");
  if (p.reduce_bf16) Draft::set(f, "reduce_dtype", "bf16");
  if (!old_layout) {
    Draft::set(f, "separate_outer_layers", "true");
    if (policy == "default")
      d.notes.push_back("fsdp: the [norm, output] unit is resharded after forward like the blocks "
                        "(torchtitan keeps it gathered; its backward follows at once)");
  }
  if (offload) Draft::set(f, "offload", "cpu");
  Draft::set(d.parallel, "fsdp", f.empty() ? "true" : flow_mapping(f));
}

// The step as torchtitan runs it: torch.optim's AdamW (`implementation`, "fused" since
// 2025-02-24; the older `fused` flag: foreach), states made in the first step unless a
// checkpoint may load them, eager Llama modules (compiled per block with compile.enable), SDPA's
// flash kernel, and the loss `cross_entropy(pred.flatten(0, 1).float(), ...)` in one piece.
void map_step(TomlSection& opt, TomlSection& compile, TomlSection& ckpt, TomlSection& training,
              const std::string& precision, bool legacy, Draft& d) {
  const std::string optimizer = opt.string("name").value_or("AdamW");
  if (optimizer != "AdamW" && optimizer != "Adam")
    unsupported(opt.where("name"), "optimizer.name", "optimizer '" + optimizer + "'");
  Draft::set(d.training, "optimizer", optimizer == "AdamW" ? "adamw" : "adam");
  std::string impl = legacy ? "foreach" : "fused";
  if (legacy && !opt.has("implementation") && !opt.has("fused"))
    d.notes.push_back("degrees in [training]: torchtitan before 2025-03, whose AdamW was foreach (fused = false)");
  if (auto i = opt.string("implementation")) {
    if (*i != "fused" && *i != "foreach" && *i != "for-loop")
      opt.fail("implementation", "expected \"fused\", \"foreach\" or \"for-loop\", got \"" + *i + "\"");
    impl = *i;
  } else if (auto fused = opt.boolean("fused")) {
    impl = *fused ? "fused" : "foreach";
  }
  Draft::set(d.training, "optimizer_impl", impl);
  const bool in_backward = opt.boolean("early_step_in_backward").value_or(false);
  if (in_backward && *Draft::get(d.parallel, "data") != "1")
    unsupported(opt.where("early_step_in_backward"), "optimizer.early_step_in_backward",
                "the optimizer step in backward over several data ranks");
  if (in_backward) Draft::set(d.training, "optimizer_in_backward", "true");
  const bool master = precision == "fp8" && !Draft::get(d.parallel, "fsdp");
  // A checkpoint folder may load the states before the first step (older key: enable_checkpoint).
  const bool loads = ckpt.boolean(ckpt.has("enable_checkpoint") ? "enable_checkpoint" : "enable").value_or(false);
  if (!in_backward && !master && !loads) Draft::set(d.training, "optimizer_states", "lazy");
  Draft::set(d.training, "attention", "flash");
  Draft::set(d.training, "modules", "eager");
  Draft::set(d.training, "loss_chunks", "1");
  // Older layouts: `training.compile = true` compiled the blocks (the loss stayed eager).
  if (training.has("compile") && !compile.has("enable")) {
    if (!training.boolean("compile").value_or(false)) return;
    Draft::set(d.training, "compile", "true");
    d.notes.push_back("training.compile compiles the blocks: trainsim's compile: true compiles the loss too");
    return;
  }
  if (!compile.boolean("enable").value_or(false)) return;
  bool model = true, loss = true;
  if (const toml::node* c = compile.get("components")) {
    const toml::array* list = c->as_array();
    if (!list) compile.fail("components", "expected a list of strings");
    model = loss = false;
    for (const auto& e : *list) {
      const auto name = e.value<std::string>();
      if (!name || (*name != "model" && *name != "loss"))
        compile.fail("components", "expected a list of \"model\" and \"loss\"");
      (*name == "model" ? model : loss) = true;
    }
  }
  if (!model && !loss) return;
  Draft::set(d.training, "compile", "true");
  if (!model || !loss)
    d.notes.push_back(std::string("compile.components compiles only the ") + (model ? "model" : "loss") +
                      ": trainsim's compile: true compiles the blocks and the loss together");
}

}  // namespace

Draft import_torchtitan(const std::string& text, const std::string& path, const ImportOptions& o) {
  Draft d = Draft::of("torchtitan", path);
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw core::ConfigError(at(e.source(), path), "", "not valid TOML: " + std::string(e.description()));
  }
  static const std::set<std::string> read = {"model",    "training",  "parallelism", "activation_checkpoint",
                                             "float8",   "optimizer", "compile",     "checkpoint",
                                             "experimental"};
  auto section = [&](const char* name) { return TomlSection(root[name].as_table(), name, path); };
  TomlSection model = section("model"), training = section("training"), par = section("parallelism"),
              ac = section("activation_checkpoint"), float8 = section("float8"), opt = section("optimizer"),
              compile = section("compile"), ckpt = section("checkpoint"), experimental = section("experimental");
  Layout l{par, training, experimental};
  const bool fp8 = map_converters(model, float8);
  map_model(model, o, d);
  // Degrees in [training] / [experimental]: the layout before [parallelism] (2025-03-18).
  bool legacy = experimental.has("pipeline_parallel_degree") || experimental.has("context_parallel_degree");
  for (const char* k : {"data_parallel_shard_degree", "data_parallel_replicate_degree", "tensor_parallel_degree"})
    legacy = legacy || training.has(k);
  const Degrees g = map_degrees(l, o, d);
  map_checkpointing(ac, g.pp, d);

  // Batch: local_batch_size (older: batch_size) samples per data-parallel rank; with a pipeline
  // it is split into micro-batches of pipeline_parallel_microbatch_size. The data ranks are
  // replicate x shard; context ranks share a sample.
  const std::int64_t data = g.replicate * g.shard;
  std::optional<std::int64_t> local = training.integer("local_batch_size", 1);
  const bool old_batch_key = !local && training.has("batch_size");
  if (!local) local = training.integer("batch_size", 1);
  const std::int64_t local_batch = local.value_or(8);
  std::int64_t micro = local_batch;
  if (g.pp > 1) {
    TomlSection& mb = l.pick("pipeline_parallel_microbatches");
    const std::int64_t mbs = par.integer("pipeline_parallel_microbatch_size", 1).value_or(1);
    if (auto n = mb.integer("pipeline_parallel_microbatches", 1)) micro = local_batch / *n;
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
  const Precision precision = map_precision(training, g, fp8, d);
  Draft::set(d.training, "precision", precision.name);
  Draft::set(d.parallel, "data", std::to_string(data));
  Draft::set(d.parallel, "tensor", std::to_string(g.tp));
  Draft::set(d.parallel, "pipeline", std::to_string(g.pp));
  const std::string schedule = map_pipeline(l, g, d);
  if (schedule == "interleaved") map_rounds(par, g, local_batch / micro);
  if (g.pp > 1) map_split(l, g, schedule == "interleaved", legacy, d);
  // train.py steps the pipeline schedule once per local batch of the step's accumulation.
  if (g.pp > 1 && global > local_batch * data)
    Draft::set(d.parallel, "microbatches_per_schedule", std::to_string(local_batch / micro));
  // torchtitan's tensor parallelism shards the norms' activations too (Megatron's sequence parallelism).
  if (g.tp > 1) Draft::set(d.parallel, "sequence_parallel", "true");
  // Async TP (torch's micro-pipelined all-gather / reduce-scatter matmuls over symmetric memory):
  // the sequence-parallel collectives overlapped with their GEMMs, as tp_comm_overlap plays them.
  TomlSection& async_tp = l.pick("enable_async_tensor_parallel");
  if (async_tp.boolean("enable_async_tensor_parallel").value_or(false) && g.tp > 1)
    Draft::set(d.parallel, "tp_comm_overlap", "true");
  if (g.cp > 1) {
    Draft::set(d.parallel, "context", std::to_string(g.cp));
    TomlSection& cp = l.pick("context_parallel_rotate_method");
    const std::string rotate = cp.string("context_parallel_rotate_method").value_or("allgather");
    if (rotate != "allgather" && rotate != "alltoall")
      cp.fail("context_parallel_rotate_method", "expected \"allgather\" or \"alltoall\", got \"" + rotate + "\"");
    Draft::set(d.parallel, "context_attention", rotate == "allgather" ? "allgather" : "ring");
  }
  if (g.ep > 1) Draft::set(d.parallel, "expert", std::to_string(g.ep));
  // The embedding and the head left the root unit on 2025-07-28, after `batch_size` was renamed.
  map_fsdp(par, training, g, precision, old_batch_key || legacy, d);
  map_step(opt, compile, ckpt, training, precision.name, legacy, d);
  for (TomlSection* s : {&model, &training, &par, &ac, &float8, &opt, &compile, &ckpt, &experimental})
    s->ignore_rest(d);
  for (const auto& [k, v] : root) {
    const std::string n(k.str());
    if (read.count(n)) continue;
    if (!v.is_table()) d.ignore(n, at(k.source(), path));
    else section(n.c_str()).ignore_rest(d);
  }
  apply_common(o, data * g.cp * g.tp * g.pp, d);
  return d;
}

}  // namespace trainsim::importers
