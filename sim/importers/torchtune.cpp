// torchtune recipe configs (recipes/configs/**/*.yaml of pytorch/torchtune, read by its four
// fine-tuning recipes: full_finetune_single_device, lora_finetune_single_device,
// full_finetune_distributed, lora_finetune_distributed). One GPU plays the single-device
// recipe, more the distributed one (FSDP2). Every key read changes memory or step time; the
// others are listed as ignored. Mappings and sources: docs/import.md, "torchtune".
#include <array>
#include <filesystem>

#include "sim/importers/import.hpp"
#include "sim/importers/yaml_map.hpp"

namespace trainsim::importers {

namespace {

// The builder's name (the last part of `model._component_`) without its lora_ / qlora_ prefix
// -> the trainsim preset of that shape (torchtune/models/*/_model_builders.py).
std::optional<std::string> preset(const std::string& base) {
  static const std::vector<std::array<const char*, 2>> map = {
      {"llama2_7b", "llama2-7b"},       {"llama2_13b", "llama2-13b"},     {"llama2_70b", "llama2-70b"},
      {"llama3_8b", "llama3-8b"},       {"llama3_1_8b", "llama3-8b"},     {"llama3_70b", "llama3-70b"},
      {"llama3_1_70b", "llama3-70b"},   {"llama3_3_70b", "llama3-70b"},   {"llama3_1_405b", "llama3-405b"},
      {"mistral_7b", "mistral-7b"}};
  for (const auto& m : map)
    if (base == m[0]) return m[1];
  return std::nullopt;
}

// LoRA as the lora_* builders take it: lora_attn_modules (q_proj, k_proj, v_proj, output_proj),
// apply_lora_to_mlp (w1, w2, w3), apply_lora_to_output, lora_rank (8), lora_alpha (16),
// lora_dropout (0.0), quantize_base (the qlora_* builders: torchao's NF4Tensor, whose scales
// are double-quantized). DoRA has no model here.
void map_lora(Map& model, bool qlora, Draft& d) {
  std::vector<std::string> targets;
  for (const auto& m : model.strings("lora_attn_modules")) {
    if (m == "q_proj" || m == "k_proj" || m == "v_proj") targets.push_back(m);
    else if (m == "output_proj") targets.push_back("o_proj");
    else model.fail("lora_attn_modules", "expected q_proj, k_proj, v_proj or output_proj, got '" + m + "'");
  }
  if (model.boolean("apply_lora_to_mlp").value_or(false)) targets.insert(targets.end(), {"gate_proj", "up_proj", "down_proj"});
  if (model.boolean("apply_lora_to_output").value_or(false))
    unsupported(model.where("apply_lora_to_output"), model.name("apply_lora_to_output"), "LoRA on the output projection");
  if (model.boolean("use_dora").value_or(false))
    unsupported(model.where("use_dora"), model.name("use_dora"), "DoRA");
  if (targets.empty()) model.fail("lora_attn_modules", "expected at least one module for LoRA");
  const bool quantize = model.boolean("quantize_base").value_or(qlora);
  Section lora = {{"rank", std::to_string(model.integer("lora_rank", 1).value_or(8))},
                  {"alpha", model.number("lora_alpha") ? model.get("lora_alpha").Scalar() : std::string("16")}};
  if (const auto p = model.number("lora_dropout"); p && *p > 0) lora.emplace_back("dropout", model.get("lora_dropout").Scalar());
  lora.emplace_back("targets", flow_sequence(targets));
  if (quantize) {
    lora.emplace_back("base", "nf4-dq");
    lora.emplace_back("quantizer", "torchao");
  }
  Draft::set(d.training, "lora", flow_mapping(lora));
}

void map_model(Map& root, const ImportOptions& o, Draft& d) {
  auto model = root.object("model");
  if (!model) throw core::ConfigError({d.source, 1, 1}, "model", "missing: the config names no model builder");
  const std::string component = model->string("_component_").value_or("");
  const std::string builder = component.substr(component.rfind('.') + 1);
  const bool qlora = builder.rfind("qlora_", 0) == 0;
  const bool lora = qlora || builder.rfind("lora_", 0) == 0;
  const std::string base = builder.substr(qlora ? 6 : lora ? 5 : 0);
  if (auto m = model_from_option(o, d)) {
    d.model = *m;
    d.notes.push_back("--model replaces " + component);
  } else if (auto p = preset(base)) {
    d.model = *p;
  } else {
    throw core::ConfigError(model->where("_component_"), "model._component_",
                            "torchtune model '" + builder + "' has no trainsim preset (llama2 7b/13b/70b, llama3 and "
                            "llama3_1 8b/70b/405b, mistral_7b): give --model (a preset or a config.json, e.g. "
                            "models/hf/Llama-3.2-3B/config.json)");
  }
  if (lora) map_lora(*model, qlora, d);
  model->ignore_rest(d);
}

// The optimizer component: torch.optim's (fused: True, else foreach), bitsandbytes' and
// torchao's low-bit ones (docs/finetuning.md, "Optimizers").
void map_optimizer(Map& root, Draft& d) {
  auto opt = root.object("optimizer");
  if (!opt) throw core::ConfigError({d.source, 1, 1}, "optimizer", "missing: the config names no optimizer");
  const std::string c = opt->string("_component_").value_or("");
  std::string name, impl;
  if (c == "torch.optim.AdamW" || c == "torch.optim.Adam") {
    name = c == "torch.optim.AdamW" ? "adamw" : "adam";
    const bool fused = opt->boolean("fused").value_or(false);
    const bool foreach = opt->boolean("foreach").value_or(true);
    impl = fused ? "fused" : foreach ? "foreach" : "for-loop";
  } else if (c == "torch.optim.SGD") {
    name = opt->number("momentum").value_or(0) > 0 ? "momentum" : "sgd";
  } else if (c == "bitsandbytes.optim.AdamW8bit" || c == "torchao.prototype.low_bit_optim.AdamW8bit" ||
             c == "torchao.optim.AdamW8bit") {
    name = "adamw-8bit";
  } else if (c == "bitsandbytes.optim.PagedAdamW8bit") {
    name = "paged-adamw-8bit";
  } else if (c == "bitsandbytes.optim.PagedAdamW" || c == "bitsandbytes.optim.PagedAdamW32bit") {
    name = "paged-adamw";
  } else if (c == "torchao.prototype.low_bit_optim.AdamW4bit" || c == "torchao.optim.AdamW4bit") {
    name = "adamw-4bit";
  } else {
    unsupported(opt->where("_component_"), "optimizer._component_", "optimizer '" + c + "'");
  }
  Draft::set(d.training, "optimizer", name);
  if (!impl.empty()) Draft::set(d.training, "optimizer_impl", impl);
  opt->ignore_rest(d);
}

// The loss: CEWithChunkedOutputLoss and LinearCrossEntropyLoss (num_output_chunks, 8) upcast
// one chunk of the logits at a time; torch.nn.CrossEntropyLoss the whole batch.
void map_loss(Map& root, Draft& d) {
  auto loss = root.object("loss");
  if (!loss) throw core::ConfigError({d.source, 1, 1}, "loss", "missing: the config names no loss");
  const std::string c = loss->string("_component_").value_or("");
  std::int64_t chunks = 1;
  if (c == "torchtune.modules.loss.CEWithChunkedOutputLoss" || c == "torchtune.modules.loss.LinearCrossEntropyLoss") {
    chunks = loss->integer("num_output_chunks", 1).value_or(8);
    if (c == "torchtune.modules.loss.LinearCrossEntropyLoss")
      d.notes.push_back("LinearCrossEntropyLoss projects each chunk itself: trainsim keeps the whole bf16 logits");
  } else if (c != "torch.nn.CrossEntropyLoss") {
    unsupported(loss->where("_component_"), "loss._component_", "loss '" + c + "'");
  }
  Draft::set(d.training, "loss_chunks", std::to_string(chunks));
  loss->ignore_rest(d);
}

// Batch and sequence: packed datasets fill every sample to tokenizer.max_seq_len; otherwise a
// batch is padded to its longest sample, which --seq-len gives (else max_seq_len, a bound).
void map_batch(Map& root, const ImportOptions& o, Draft& d) {
  // The recipes read both with cfg.<key>: a config without them does not run.
  for (const char* k : {"batch_size", "gradient_accumulation_steps"})
    if (!root.has(k)) throw core::ConfigError({d.source, 1, 1}, k, "missing: torchtune's recipes require it");
  Draft::set(d.training, "micro_batch", std::to_string(*root.integer("batch_size", 1)));
  Draft::set(d.training, "gradient_accumulation", std::to_string(*root.integer("gradient_accumulation_steps", 1)));
  std::optional<std::int64_t> max_len;
  if (auto tok = root.object("tokenizer")) {
    max_len = tok->integer("max_seq_len", 1);
    tok->ignore_rest(d);
  }
  bool packed = false;
  if (auto data = root.object("dataset")) {
    packed = data->boolean("packed").value_or(false);
    data->ignore_rest(d);
  }
  if (packed && !max_len)
    throw core::ConfigError({d.source, 1, 1}, "tokenizer.max_seq_len", "missing: a packed dataset packs to it");
  if (o.seq_len) return;  // apply_common writes it
  if (packed) {
    Draft::set(d.training, "seq_len", std::to_string(*max_len));
  } else if (max_len) {
    Draft::set(d.training, "seq_len", std::to_string(*max_len));
    d.notes.push_back("dataset not packed: a batch is padded to its longest sample; seq_len is "
                      "tokenizer.max_seq_len, the bound (give --seq-len for the data's)");
  }
}

// The distributed recipes: FSDP2's fully_shard over the data ranks without a
// MixedPrecisionPolicy (shards, gathers and reduce-scatters in the model's dtype).
void map_fsdp(Map& root, std::int64_t data, bool bf16, Draft& d) {
  std::int64_t tp = root.integer("tensor_parallel_dim", 1).value_or(1);
  if (root.integer("context_parallel_dim", 1).value_or(1) > 1)
    unsupported(root.where("context_parallel_dim"), "context_parallel_dim", "torchtune's context parallelism");
  const auto layers = root.strings("custom_sharded_layers");
  const bool offload = root.boolean("fsdp_cpu_offload").value_or(false);
  const bool reshard = root.boolean("fsdp_reshard_after_forward").value_or(true);
  if (tp > 1) {
    Draft::set(d.parallel, "tensor", std::to_string(tp));
    Draft::set(d.parallel, "sequence_parallel", "true");  // base_llama_tp_plan's SequenceParallel norms
  }
  if (data == 1) return;
  Section f;
  if (!reshard) Draft::set(f, "reshard_after_forward", "false");
  if (bf16) Draft::set(f, "reduce_dtype", "bf16");
  for (const auto& l : layers) {
    if (l != "tok_embeddings" && l != "output")
      root.fail("custom_sharded_layers", "expected tok_embeddings or output, got '" + l + "'");
    Draft::set(f, "separate_outer_layers", "true");
  }
  if (offload) Draft::set(f, "offload", "cpu");
  Draft::set(d.parallel, "fsdp", f.empty() ? "true" : flow_mapping(f));
}

}  // namespace

Draft import_torchtune(const std::string& text, const std::string& path, const ImportOptions& o) {
  Draft d = Draft::of("torchtune", path);
  Map root = Map::parse(text, path, "a torchtune config");
  map_model(root, o, d);
  map_batch(root, o, d);
  if (!root.has("dtype")) throw core::ConfigError({path, 1, 1}, "dtype", "missing: torchtune's recipes require it");
  const std::string dtype = *root.string("dtype");
  if (dtype != "bf16" && dtype != "fp32")
    root.fail("dtype", "expected bf16 or fp32 (torchtune's recipes refuse fp16), got '" + dtype + "'");
  // dtype bf16: parameters, gradients, activations and optimizer states all bf16.
  Draft::set(d.training, "precision", dtype == "bf16" ? "bf16-true" : "fp32");
  map_optimizer(root, d);
  map_loss(root, d);
  const bool in_bwd = root.boolean("optimizer_in_bwd").value_or(false);
  if (in_bwd) Draft::set(d.training, "optimizer_in_backward", "true");
  if (root.boolean("enable_activation_checkpointing").value_or(false)) Draft::set(d.training, "recompute", "full");
  const bool act_offload = root.boolean("enable_activation_offloading").value_or(false);
  if (act_offload) Draft::set(d.training, "activation_offload", "true");
  if (root.boolean("compile").value_or(false)) Draft::set(d.training, "compile", "true");
  // torchtune's modules are plain PyTorch; attention is SDPA's flash kernel (flex attention
  // with a block mask when packed, which keeps what flash keeps).
  Draft::set(d.training, "attention", "flash");
  Draft::set(d.training, "modules", "eager");
  const std::int64_t tp = root.has("tensor_parallel_dim") ? root.integer("tensor_parallel_dim", 1).value_or(1) : 1;
  const std::int64_t data = data_degree(o, tp, d);
  Draft::set(d.parallel, "data", std::to_string(data));
  if (in_bwd && data > 1)
    unsupported(root.where("optimizer_in_bwd"), "optimizer_in_bwd", "the optimizer step in backward over several data ranks");
  if (act_offload && data * tp > 1)
    unsupported(root.where("enable_activation_offloading"), "enable_activation_offloading",
                "activation offloading with FSDP or tensor parallelism");
  map_fsdp(root, data, dtype == "bf16", d);
  require_fsdp_optimizer(d, root.where("optimizer"), "optimizer._component_");
  if (data == 1 && tp == 1)
    for (const char* k : {"fsdp_cpu_offload", "fsdp_reshard_after_forward", "custom_sharded_layers"})
      if (root.has(k)) d.notes.push_back(std::string(k) + ": one GPU runs the single-device recipe, without FSDP");
  root.ignore_rest(d);
  apply_common(o, data * tp, d);
  return d;
}

}  // namespace trainsim::importers
