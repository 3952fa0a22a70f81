// Hugging Face TrainingArguments saved as JSON (TrainingArguments.to_json_string(), or the
// training_args.json a script writes): transformers' training_args.py names the fields. A
// `deepspeed` field (a config file, read relative to this file's folder, or an inline object)
// is mapped as `import deepspeed` maps it, with its "auto" values taken from these arguments.
#include <algorithm>
#include <array>
#include <filesystem>
#include <sstream>

#include "sim/core/text_file.hpp"
#include "sim/importers/deepspeed.hpp"
#include "sim/importers/hf_names.hpp"
#include "sim/importers/import.hpp"

namespace trainsim::importers {

// `optim` values (transformers' OptimizerNames) with a state trainsim models.
std::optional<std::string> hf_optimizer(const std::string& optim) {
  for (const char* adamw : {"adamw_torch", "adamw_torch_fused", "adamw_hf", "adamw_apex_fused",
                            "adamw_torch_xla", "adamw_torch_npu_fused", "adamw_anyprecision"})
    if (optim == adamw) return "adamw";
  if (optim == "sgd") return "sgd";  // torch.optim.SGD with its default momentum 0
  // bitsandbytes' AdamW8bit / PagedAdamW / PagedAdamW8bit, and transformers' Adafactor (beta1
  // None by default) — docs/finetuning.md, "Optimizers".
  if (optim == "adamw_bnb_8bit" || optim == "adamw_8bit") return "adamw-8bit";
  if (optim == "paged_adamw_32bit") return "paged-adamw";
  if (optim == "paged_adamw_8bit") return "paged-adamw-8bit";
  if (optim == "adafactor") return "adafactor";
  return std::nullopt;
}

// The name of a Hugging Face repository (its last path part) -> the trainsim preset of that
// shape; LitGPT's checkpoint folders and TRL's model_name_or_path end in one.
std::optional<std::string> hf_repo_preset(const std::string& repo) {
  static const std::vector<std::array<const char*, 2>> map = {
      {"Llama-2-7b-hf", "llama2-7b"},          {"Llama-2-7b-chat-hf", "llama2-7b"},
      {"Llama-2-13b-hf", "llama2-13b"},        {"Llama-2-13b-chat-hf", "llama2-13b"},
      {"Llama-2-70b-hf", "llama2-70b"},        {"Llama-2-70b-chat-hf", "llama2-70b"},
      {"Meta-Llama-3-8B", "llama3-8b"},        {"Meta-Llama-3-8B-Instruct", "llama3-8b"},
      {"Meta-Llama-3.1-8B", "llama3-8b"},      {"Meta-Llama-3.1-8B-Instruct", "llama3-8b"},
      {"Llama-3.1-8B", "llama3-8b"},           {"Llama-3.1-8B-Instruct", "llama3-8b"},
      {"Meta-Llama-3-70B", "llama3-70b"},      {"Meta-Llama-3-70B-Instruct", "llama3-70b"},
      {"Meta-Llama-3.1-70B", "llama3-70b"},    {"Meta-Llama-3.1-70B-Instruct", "llama3-70b"},
      {"Llama-3.1-70B", "llama3-70b"},         {"Llama-3.1-70B-Instruct", "llama3-70b"},
      {"Llama-3.3-70B-Instruct", "llama3-70b"}, {"Meta-Llama-3.1-405B", "llama3-405b"},
      {"Llama-3.1-405B", "llama3-405b"},       {"Mistral-7B-v0.1", "mistral-7b"},
      {"Mistral-7B-Instruct-v0.1", "mistral-7b"}, {"gpt2", "gpt2"}};
  for (const auto& m : map)
    if (repo == m[0]) return m[1];
  return std::nullopt;
}

std::optional<std::string> hf_optimizer_impl(const std::string& optim) {
  // transformers' own AdamW loops over the tensors; the fused names run fused kernels;
  // adamw_torch is torch.optim's default (foreach), the scenario's default too.
  if (optim == "adamw_hf") return "for-loop";
  if (optim == "adamw_torch_fused" || optim == "adamw_apex_fused") return "fused";
  return std::nullopt;
}

std::optional<std::vector<std::string>> hf_fsdp_words(const YAML::Node& f) {
  std::vector<std::string> words;
  if (!f.IsDefined() || f.IsNull()) return words;
  auto add = [&](const YAML::Node& n) {
    if (!n.IsScalar()) return false;
    std::istringstream in(n.Scalar());
    for (std::string w; in >> w;) words.push_back(w);
    return true;
  };
  if (f.IsSequence()) {
    for (const auto& n : f)
      if (!add(n)) return std::nullopt;
  } else {
    if (!add(f)) return std::nullopt;
    if (words.size() == 1 && words[0] == "false") words.clear();
  }
  return words;
}

// `fsdp` through Accelerate's FullyShardedDataParallelPlugin: the strategy word (FULL_SHARD,
// SHARD_GRAD_OP, HYBRID_SHARD within a node, _HYBRID_SHARD_ZERO2), `offload` (CPUOffload of
// the parameters), FSDP1's FlatParameter unless `fsdp_config.version` is 2, and under mixed
// precision Accelerate's MixedPrecision(param_dtype = reduce_dtype = the autocast dtype).
void hf_fsdp(const std::vector<std::string>& words, std::int64_t version, const core::SourceLocation& at,
             const ImportOptions& o, std::int64_t data, const std::string& dtype, Draft& d) {
  std::string strategy;
  bool offload = false;
  for (const auto& w : words) {
    if (w == "offload") offload = true;
    else if (w == "auto_wrap") continue;  // one unit per decoder layer: trainsim's units
    else if (w == "full_shard" || w == "shard_grad_op" || w == "hybrid_shard" || w == "hybrid_shard_zero2" ||
             w == "no_shard") {
      if (!strategy.empty()) throw core::ConfigError(at, "fsdp", "names two sharding strategies: " + strategy + ", " + w);
      strategy = w;
    } else {
      throw core::ConfigError(at, "fsdp", "expected full_shard, shard_grad_op, hybrid_shard, hybrid_shard_zero2, "
                                          "no_shard, offload or auto_wrap, got '" + w + "'");
    }
  }
  if (strategy.empty()) throw core::ConfigError(at, "fsdp", "names no sharding strategy (full_shard, shard_grad_op, ...)");
  if (strategy == "no_shard") {
    if (offload) throw core::ConfigError(at, "fsdp", "offload with no_shard: there is no shard to offload");
    d.notes.push_back("fsdp no_shard: replicated parameters, as DDP");
    return;
  }
  Section f;
  if (strategy == "hybrid_shard" || strategy == "hybrid_shard_zero2") {
    const std::int64_t node = std::min<std::int64_t>(o.gpus_per_node.value_or(8), data);
    if (node < data) Draft::set(f, "shard_size", std::to_string(node));
  }
  if (strategy == "shard_grad_op" || strategy == "hybrid_shard_zero2") Draft::set(f, "reshard_after_forward", "false");
  if (!dtype.empty()) {
    Draft::set(f, "param_dtype", dtype);
    Draft::set(f, "reduce_dtype", dtype);
  }
  if (offload) Draft::set(f, "offload", "cpu");
  if (version == 1) Draft::set(f, "flat_parameter", "true");
  Draft::set(d.parallel, "fsdp", flow_mapping(f));
}

namespace {


std::vector<std::string> fsdp_words(JsonObject& args) {
  const auto words = hf_fsdp_words(args.get("fsdp"));
  if (!words) args.fail("fsdp", "expected a string or a list of strings");
  return *words;
}

// `fsdp` and `fsdp_config.version` (or `fsdp_version`) of the arguments: mapped by hf_fsdp.
void fsdp(JsonObject& args, const ImportOptions& o, std::int64_t data, const std::string& dtype, Draft& d) {
  const std::vector<std::string> words = fsdp_words(args);
  if (words.empty()) return;
  std::int64_t version = 1;
  if (auto cfg = args.object("fsdp_config")) {
    const char* key = cfg->has("version") ? "version" : "fsdp_version";
    version = cfg->integer(key, 1, false, 2).value_or(1);
    cfg->ignore_rest(d);
  }
  hf_fsdp(words, version, args.at(args.get("fsdp")), o, data, dtype, d);
}

// The DeepSpeed config the arguments name: mapped into `d`; its batch must agree with ours.
// False when the arguments name none.
bool deepspeed(JsonObject& args, const std::string& file, std::int64_t micro, std::int64_t acc, Draft& d) {
  const YAML::Node n = args.get("deepspeed");
  if (!n.IsDefined()) return false;
  if (n.IsScalar() && n.Scalar().empty()) return false;
  if (fsdp_words(args).size() > 0)
    throw core::ConfigError(args.at(args.get("fsdp")), "fsdp",
                            "set together with deepspeed: the Trainer runs one of them");
  YAML::Node root = n;
  std::string ds_file = file;
  if (n.IsScalar()) {
    std::filesystem::path p(n.Scalar());
    if (p.is_relative()) p = std::filesystem::path(file).parent_path() / p;
    ds_file = p.string();
    root = parse_json(core::read_text_file(ds_file, args.at(n), "deepspeed"), ds_file);
  }
  JsonObject ds(root, ds_file, ds_file == file ? "deepspeed" : "");
  const DeepSpeedBatch b = map_deepspeed(ds, d);
  auto agree = [&](const std::optional<std::int64_t>& v, std::int64_t ours, const char* key, const char* arg) {
    if (v && *v != ours)
      throw core::ConfigError(ds.at(root[key]), ds.name(key),
                              std::to_string(*v) + " disagrees with " + arg + " " + std::to_string(ours) +
                                  " (the Trainer refuses the mismatch; write \"auto\")");
  };
  agree(b.micro, micro, "train_micro_batch_size_per_gpu", "per_device_train_batch_size");
  agree(b.accumulation, acc, "gradient_accumulation_steps", "gradient_accumulation_steps");
  d.notes.push_back("DeepSpeed config " + ds_file + " mapped with these arguments");
  return true;
}

}  // namespace

Draft import_hf_trainer(const std::string& text, const std::string& path, const ImportOptions& o) {
  Draft d;
  d.kind = "hf-trainer";
  d.source = path;
  JsonObject args(parse_json(text, path), path, "");
  require_model(o, path,
                "TrainingArguments do not describe the model: give --model (a config.json or a preset)",
                d);
  // transformers' defaults: batch 8 per device, accumulation 1, fp32, adamw_torch.
  const std::int64_t micro = args.integer("per_device_train_batch_size", 1, false, std::int64_t{1} << 30).value_or(8);
  const std::int64_t acc = args.integer("gradient_accumulation_steps", 1, false, std::int64_t{1} << 30).value_or(1);
  Draft::set(d.training, "micro_batch", std::to_string(micro));
  Draft::set(d.training, "gradient_accumulation", std::to_string(acc));
  const bool bf16 = args.boolean("bf16").value_or(false), fp16 = args.boolean("fp16").value_or(false);
  if (bf16 && fp16) args.fail("fp16", "true together with bf16: choose one");
  Draft::set(d.training, "precision", bf16 ? "bf16" : fp16 ? "fp16" : "fp32");
  const std::string optim = args.string("optim").value_or("adamw_torch");
  const auto mapped = hf_optimizer(optim);
  if (!mapped) unsupported(args.at(args.get("optim")), "optim", "optimizer '" + optim + "'");
  Draft::set(d.training, "optimizer", *mapped);
  // The AdamW implementation the name selects (training.optimizer_impl, docs/finetuning.md).
  if (auto impl = hf_optimizer_impl(optim)) Draft::set(d.training, "optimizer_impl", *impl);
  // Hugging Face checkpoints each decoder layer's input and recomputes the layer: full.
  if (args.boolean("gradient_checkpointing").value_or(false)) Draft::set(d.training, "recompute", "full");
  const std::int64_t data = data_degree(o, 1, d);
  Draft::set(d.parallel, "data", std::to_string(data));
  if (!deepspeed(args, path, micro, acc, d)) {
    // Without DeepSpeed the Trainer's bf16 / fp16 is torch.autocast over fp32 weights.
    if (bf16 || fp16) Draft::set(d.training, "precision", bf16 ? "amp-bf16" : "amp-fp16");
    fsdp(args, o, data, bf16 ? "bf16" : fp16 ? "fp16" : "", d);
    require_fsdp_optimizer(d, args.at(args.get("optim")), "optim");
  }
  args.ignore_rest(d);
  apply_common(o, data, d);
  return d;
}

}  // namespace trainsim::importers
