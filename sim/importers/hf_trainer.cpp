// Hugging Face TrainingArguments saved as JSON (TrainingArguments.to_json_string(), or the
// training_args.json a script writes): transformers' training_args.py names the fields. A
// `deepspeed` field (a config file, read relative to this file's folder, or an inline object)
// is mapped as `import deepspeed` maps it, with its "auto" values taken from these arguments.
#include <filesystem>

#include "sim/core/text_file.hpp"
#include "sim/importers/deepspeed.hpp"
#include "sim/importers/import.hpp"

namespace trainsim::importers {

namespace {

// `optim` values (transformers' OptimizerNames) with a state trainsim models.
std::optional<std::string> optimizer(const std::string& optim) {
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

// The DeepSpeed config the arguments name: mapped into `d`; its batch must agree with ours.
void deepspeed(JsonObject& args, const std::string& file, std::int64_t micro, std::int64_t acc, Draft& d) {
  const YAML::Node n = args.get("deepspeed");
  if (!n.IsDefined()) return;
  if (n.IsScalar() && n.Scalar().empty()) return;
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
  const auto mapped = optimizer(optim);
  if (!mapped) unsupported(args.at(args.get("optim")), "optim", "optimizer '" + optim + "'");
  Draft::set(d.training, "optimizer", *mapped);
  // The AdamW implementation the name selects (training.optimizer_impl, docs/finetuning.md):
  // transformers' own AdamW loops over the tensors; the fused names run fused kernels;
  // adamw_torch is torch.optim's default (foreach), the scenario's default too.
  if (optim == "adamw_hf") Draft::set(d.training, "optimizer_impl", "for-loop");
  if (optim == "adamw_torch_fused" || optim == "adamw_apex_fused")
    Draft::set(d.training, "optimizer_impl", "fused");
  // Hugging Face checkpoints each decoder layer's input and recomputes the layer: full.
  if (args.boolean("gradient_checkpointing").value_or(false)) Draft::set(d.training, "recompute", "full");
  const YAML::Node fsdp = args.get("fsdp");
  const bool fsdp_on = fsdp.IsDefined() && ((fsdp.IsScalar() && !fsdp.Scalar().empty() &&
                                            fsdp.Scalar() != "false") || (fsdp.IsSequence() && fsdp.size() > 0));
  if (fsdp_on) unsupported(args.at(fsdp), "fsdp", "FSDP");
  const std::int64_t data = data_degree(o, 1, d);
  Draft::set(d.parallel, "data", std::to_string(data));
  deepspeed(args, path, micro, acc, d);
  args.ignore_rest(d);
  apply_common(o, data, d);
  return d;
}

}  // namespace trainsim::importers
