// TRL's CLI config (`trl sft --config config.yaml`, huggingface/trl trl/scripts/sft.py): one
// YAML of SFTConfig's fields (TrainingArguments and SFT's own: max_length, packing) and
// ModelConfig's (model_name_or_path, dtype, attn_implementation, PEFT's LoRA, bitsandbytes
// quantization). Mappings and sources: docs/import.md, "trl".
#include <algorithm>
#include <filesystem>
#include <iterator>

#include "sim/importers/hf_names.hpp"
#include "sim/importers/import.hpp"
#include "sim/importers/yaml_map.hpp"

namespace trainsim::importers {

namespace {

// `dtype` (older `torch_dtype`) loads the model in that dtype; SFTConfig's bf16 (true unless
// fp16) / fp16 add autocast. A 16-bit model trains its 16-bit weights (bf16-true, fp16-true);
// an fp32 one under autocast is amp-bf16 / amp-fp16.
std::string precision(Map& root) {
  const char* key = root.has("dtype") ? "dtype" : "torch_dtype";
  const std::string dtype = root.string(key).value_or("float32");
  const bool fp16 = root.boolean("fp16").value_or(false);
  const bool bf16 = root.boolean("bf16").value_or(!fp16);
  if (bf16 && fp16) root.fail("fp16", "true together with bf16: choose one");
  if (dtype == "bfloat16") return "bf16-true";
  if (dtype == "float16") return "fp16-true";
  if (dtype == "auto")
    root.fail(key, "'auto' takes the checkpoint's dtype, which the config does not hold: write bfloat16, "
                   "float16 or float32");
  if (dtype != "float32") root.fail(key, "expected bfloat16, float16, float32 or auto, got '" + dtype + "'");
  return bf16 ? "amp-bf16" : fp16 ? "amp-fp16" : "fp32";
}

// PEFT's LoraConfig as TRL's get_peft_config builds it from ModelConfig: r 16, alpha 32,
// dropout 0.05, target_modules (None: PEFT's per-architecture default, q_proj and v_proj for
// Llama, Mistral and Qwen); 4-bit (NF4, nested: nf4-dq) or 8-bit bases by bitsandbytes.
void map_peft(Map& root, Draft& d) {
  const bool peft = root.boolean("use_peft").value_or(false);
  const bool q4 = root.boolean("load_in_4bit").value_or(false), q8 = root.boolean("load_in_8bit").value_or(false);
  if (!peft) {
    for (const char* k : {"load_in_4bit", "load_in_8bit"})
      if (root.boolean(k).value_or(false)) root.fail(k, "a quantized base needs use_peft: true (TRL trains adapters only)");
    return;
  }
  if (root.boolean("use_dora").value_or(false)) unsupported(root.where("use_dora"), "use_dora", "DoRA");
  root.get("use_rslora");  // the adapters' scale: no memory or time of its own
  for (const char* k : {"lora_modules_to_save", "lora_target_parameters"})
    if (root.has(k)) unsupported(root.where(k), k, "training whole modules or parameters beside LoRA");
  std::string targets = "[q_proj, v_proj]";
  const YAML::Node t = root.get("lora_target_modules");
  if (t.IsDefined() && t.IsScalar()) {
    if (t.Scalar() != "all-linear") root.fail("lora_target_modules", "expected all-linear or a list of module names");
    targets = "all-linear";
  } else if (t.IsDefined()) {
    const std::vector<std::string> modules = root.strings("lora_target_modules");
    for (const auto& m : modules) {
      static const char* known[] = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
      if (std::find(std::begin(known), std::end(known), m) == std::end(known))
        root.fail("lora_target_modules", "expected q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj or down_proj, "
                                         "got '" + m + "'");
    }
    targets = flow_sequence(modules);
  } else {
    d.notes.push_back("no lora_target_modules: PEFT's default for Llama-style models, q_proj and v_proj");
  }
  Section lora = {{"rank", std::to_string(root.integer("lora_r", 1).value_or(16))},
                  {"alpha", std::to_string(root.integer("lora_alpha", 1).value_or(32))}};
  const double dropout = root.number("lora_dropout").value_or(0.05);
  if (dropout > 0) lora.emplace_back("dropout", root.has("lora_dropout") ? root.get("lora_dropout").Scalar() : "0.05");
  lora.emplace_back("targets", targets);
  if (q4 && q8) root.fail("load_in_8bit", "true together with load_in_4bit: choose one");
  if (q4) {
    const std::string type = root.string("bnb_4bit_quant_type").value_or("nf4");
    if (type != "nf4" && type != "fp4") root.fail("bnb_4bit_quant_type", "expected nf4 or fp4, got '" + type + "'");
    if (type == "fp4") d.notes.push_back("bnb_4bit_quant_type fp4: stored as NF4 is (4 bits and an absmax per 64)");
    lora.emplace_back("base", root.boolean("use_bnb_nested_quant").value_or(false) ? "nf4-dq" : "nf4");
    lora.emplace_back("quantizer", "bitsandbytes");
  } else if (q8) {
    lora.emplace_back("base", "int8");  // bitsandbytes' LLM.int8, the only int8 base
  }
  Draft::set(d.training, "lora", flow_mapping(lora));
}

}  // namespace

Draft import_trl(const std::string& text, const std::string& path, const ImportOptions& o) {
  Draft d = Draft::of("trl", path);
  Map root = Map::parse(text, path, "a TRL config");
  const std::string id = root.string("model_name_or_path").value_or("");
  if (auto m = model_from_option(o, d)) {
    d.model = *m;
    if (!id.empty()) d.notes.push_back("--model replaces model_name_or_path " + id);
  } else if (auto p = hf_repo_preset(id.substr(id.rfind('/') + 1))) {
    d.model = *p;
  } else {
    throw core::ConfigError(root.where("model_name_or_path"), "model_name_or_path",
                            "model '" + id + "' has no trainsim preset (Llama 2, Llama 3 / 3.1, Mistral 7B v0.1, "
                            "GPT-2): give --model (a preset or the model's config.json)");
  }
  // SFTConfig's defaults: batch 8 per device, gradient checkpointing on, bf16 unless fp16.
  const std::int64_t micro = root.integer("per_device_train_batch_size", 1).value_or(8);
  Draft::set(d.training, "micro_batch", std::to_string(micro));
  Draft::set(d.training, "gradient_accumulation",
             std::to_string(root.integer("gradient_accumulation_steps", 1).value_or(1)));
  // max_length (older max_seq_length; 1024) packs every sample to it, or bounds a padded batch.
  const char* len_key = root.has("max_length") ? "max_length" : "max_seq_length";
  const std::int64_t max_len = root.integer(len_key, 1).value_or(1024);
  const bool packing = root.boolean("packing").value_or(false);
  if (!o.seq_len) {
    Draft::set(d.training, "seq_len", std::to_string(max_len));
    if (!packing)
      d.notes.push_back(std::string("seq_len is ") + len_key +
                        ", the bound of a batch's padded length (give --seq-len for the data's)");
  }
  const std::string prec = precision(root);
  Draft::set(d.training, "precision", prec);
  const std::string optim = root.string("optim").value_or("adamw_torch");
  const auto mapped = hf_optimizer(optim);
  if (!mapped) unsupported(root.where("optim"), "optim", "optimizer '" + optim + "'");
  Draft::set(d.training, "optimizer", *mapped);
  if (auto impl = hf_optimizer_impl(optim)) Draft::set(d.training, "optimizer_impl", *impl);
  if (root.boolean("gradient_checkpointing").value_or(true)) Draft::set(d.training, "recompute", "full");
  // transformers' attention: sdpa by default (flash kernels), flash_attention_2 too; eager
  // keeps the s x s scores. Its modules are eager PyTorch.
  const std::string attn = root.string("attn_implementation").value_or("sdpa");
  if (attn != "sdpa" && attn != "flash_attention_2" && attn != "flash_attention_3" && attn != "eager")
    root.fail("attn_implementation", "expected sdpa, flash_attention_2, flash_attention_3 or eager, got '" + attn + "'");
  Draft::set(d.training, "attention", attn == "eager" ? "standard" : "flash");
  Draft::set(d.training, "modules", "eager");
  map_peft(root, d);
  if (root.has("deepspeed"))
    unsupported(root.where("deepspeed"), "deepspeed", "a DeepSpeed config in a TRL config (import the "
                                                      "TrainingArguments JSON with `trainsim import hf-trainer`)");
  const std::int64_t data = data_degree(o, 1, d);
  Draft::set(d.parallel, "data", std::to_string(data));
  if (root.has("fsdp")) {
    const auto words = hf_fsdp_words(root.get("fsdp"));
    if (!words) root.fail("fsdp", "expected a string or a list of strings");
    std::int64_t version = 1;
    if (auto cfg = root.object("fsdp_config")) {
      const char* key = cfg->has("version") ? "version" : "fsdp_version";
      version = cfg->integer(key, 1).value_or(1);
      if (version > 2) cfg->fail(key, "expected 1 or 2");
      cfg->ignore_rest(d);
    }
    // Accelerate's MixedPrecision follows the Trainer's bf16 / fp16 flag, whatever the model's dtype.
    const bool fp16 = root.boolean("fp16").value_or(false);
    const std::string mixed = fp16 ? "fp16" : root.boolean("bf16").value_or(true) ? "bf16" : "";
    if (!words->empty()) hf_fsdp(*words, version, root.where("fsdp"), o, data, mixed, d);
  }
  require_fsdp_optimizer(d, root.where("optim"), "optim");
  root.ignore_rest(d);
  apply_common(o, data, d);
  return d;
}

}  // namespace trainsim::importers
