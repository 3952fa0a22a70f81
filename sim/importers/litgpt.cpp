// LitGPT (Lightning) fine-tuning configs: the YAML `litgpt finetune_lora` / `finetune_full`
// read with --config (config_hub/finetune/*/*.yaml of Lightning-AI/litgpt; jsonargparse keys of
// litgpt/finetune/lora.py and full.py `setup`, litgpt/args.py TrainArgs). A config with `lora_*`
// keys is a LoRA run, one without a full fine-tune. Mappings and sources: docs/import.md, "litgpt".
#include <filesystem>

#include "sim/importers/hf_names.hpp"
#include "sim/importers/import.hpp"
#include "sim/importers/yaml_map.hpp"

namespace trainsim::importers {

namespace {

// `precision` (Fabric's names; LitGPT's default on a bf16 GPU when training: bf16-mixed).
std::string precision(Map& root) {
  const std::string p = root.string("precision").value_or("bf16-mixed");
  if (p == "bf16-true") return "bf16-true";
  if (p == "16-true") return "fp16-true";
  if (p == "bf16-mixed") return "amp-bf16";
  if (p == "16-mixed") return "amp-fp16";
  if (p == "32-true") return "fp32";
  root.fail("precision", "expected bf16-true, bf16-mixed, 16-true, 16-mixed or 32-true, got '" + p + "'");
}

// LoRA (litgpt/lora.py): query and value by default, the fused qkv linear's adapters behind one
// dropout (LoRAQKVLinear: `layout: fused-qkv`); the MLP's fc_1, fc_2 and proj are gate, up and
// down. `quantize` (Fabric's BitsandbytesPrecision) makes the base bitsandbytes' Linear4bit /
// Linear8bitLt.
void map_lora(Map& root, Draft& d) {
  std::vector<std::string> targets;
  auto target = [&](const char* key, bool on, std::initializer_list<const char*> names) {
    if (root.boolean(key).value_or(on)) targets.insert(targets.end(), names.begin(), names.end());
  };
  target("lora_query", true, {"q_proj"});
  target("lora_key", false, {"k_proj"});
  target("lora_value", true, {"v_proj"});
  target("lora_projection", false, {"o_proj"});
  target("lora_mlp", false, {"gate_proj", "up_proj", "down_proj"});
  if (root.boolean("lora_head").value_or(false))
    unsupported(root.where("lora_head"), "lora_head", "LoRA on the output head");
  if (targets.empty()) root.fail("lora_query", "no LoRA target is on (lora_query, lora_key, lora_value, ...)");
  Section lora = {{"rank", std::to_string(root.integer("lora_r", 1).value_or(8))},
                  {"alpha", std::to_string(root.integer("lora_alpha", 1).value_or(16))}};
  const double dropout = root.number("lora_dropout").value_or(0.05);
  if (dropout > 0) lora.emplace_back("dropout", root.has("lora_dropout") ? root.get("lora_dropout").Scalar() : "0.05");
  lora.emplace_back("targets", flow_sequence(targets));
  lora.emplace_back("layout", "fused-qkv");
  if (auto q = root.string("quantize")) {
    std::string base;
    if (*q == "bnb.nf4" || *q == "bnb.fp4") base = "nf4";
    else if (*q == "bnb.nf4-dq" || *q == "bnb.fp4-dq") base = "nf4-dq";
    else if (*q == "bnb.int8-training") base = "int8";
    else root.fail("quantize", "expected bnb.nf4, bnb.nf4-dq, bnb.fp4, bnb.fp4-dq or bnb.int8-training, got '" + *q + "'");
    if (q->find("fp4") != std::string::npos)
      d.notes.push_back("quantize " + *q + ": stored as NF4 is (4 bits and an absmax per 64 weights)");
    lora.emplace_back("base", base);
    if (base != "int8") lora.emplace_back("quantizer", "bitsandbytes");
  }
  Draft::set(d.training, "lora", flow_mapping(lora));
}

// `optimizer`: a name (torch.optim's) or {class_path, init_args}; LitGPT's finetune scripts
// pass no `fused`, so torch.optim's AdamW runs foreach.
void map_optimizer(Map& root, Draft& d) {
  std::string c = "torch.optim.AdamW";
  const YAML::Node n = root.get("optimizer");
  if (n.IsDefined() && n.IsScalar()) {
    c = n.Scalar().find('.') == std::string::npos ? "torch.optim." + n.Scalar() : n.Scalar();
  } else if (n.IsDefined()) {
    auto opt = root.object("optimizer");
    c = opt->string("class_path").value_or("");
    opt->get("init_args");  // learning rate, betas, weight decay: no memory of their own
    opt->ignore_rest(d);
  }
  std::string name;
  if (c == "torch.optim.AdamW") name = "adamw";
  else if (c == "torch.optim.Adam") name = "adam";
  else if (c == "torch.optim.SGD") name = "sgd";
  else if (c == "bitsandbytes.optim.AdamW8bit") name = "adamw-8bit";
  else if (c == "bitsandbytes.optim.PagedAdamW8bit") name = "paged-adamw-8bit";
  else if (c == "bitsandbytes.optim.PagedAdamW") name = "paged-adamw";
  else unsupported(root.where("optimizer"), "optimizer", "optimizer '" + c + "'");
  Draft::set(d.training, "optimizer", name);
  if (c.rfind("torch.optim.", 0) == 0 && name != "sgd") Draft::set(d.training, "optimizer_impl", "foreach");
}

}  // namespace

Draft import_litgpt(const std::string& text, const std::string& path, const ImportOptions& o) {
  Draft d = Draft::of("litgpt", path);
  Map root = Map::parse(text, path, "a LitGPT config");
  const std::string dir = root.string("checkpoint_dir").value_or("");
  const std::string repo = std::filesystem::path(dir).filename().string();
  if (auto m = model_from_option(o, d)) {
    d.model = *m;
    d.notes.push_back("--model replaces checkpoint_dir " + dir);
  } else if (auto p = hf_repo_preset(repo)) {
    d.model = *p;
  } else {
    throw core::ConfigError(root.where("checkpoint_dir"), "checkpoint_dir",
                            "checkpoint '" + repo + "' has no trainsim preset (Llama 2, Llama 3 / 3.1, Mistral 7B "
                            "v0.1): give --model (a preset or the checkpoint's config.json)");
  }
  const bool lora = [&] {
    for (const char* k : {"lora_r", "lora_alpha", "lora_dropout", "lora_query", "lora_key", "lora_value",
                          "lora_projection", "lora_mlp", "lora_head"})
      if (root.has(k)) return true;
    return false;
  }();
  if (!lora) d.notes.push_back("no lora_* key: litgpt finetune_full");
  if (!lora && root.has("quantize"))
    unsupported(root.where("quantize"), "quantize", "quantize without LoRA (finetune_full quantizes nothing)");

  // Devices: devices x num_nodes GPUs, data parallel; --gpus must agree.
  const std::int64_t devices = root.integer("devices", 1).value_or(1);
  const std::int64_t nodes = root.integer("num_nodes", 1).value_or(1);
  const std::int64_t gpus = devices * nodes;
  if (o.gpus && *o.gpus != gpus)
    throw core::ConfigError(root.where("devices"), "--gpus",
                            std::to_string(*o.gpus) + " GPUs disagree with devices x num_nodes = " + std::to_string(gpus));
  if (gpus > 1 && root.has("quantize"))
    unsupported(root.where("quantize"), "quantize", "quantization on several GPUs (LitGPT refuses it too)");

  const std::string prec = precision(root);
  Draft::set(d.training, "precision", prec);
  if (lora) map_lora(root, d);
  map_optimizer(root, d);

  // train: micro_batch_size (4) per GPU, global_batch_size (64) over all of them.
  std::int64_t micro = 4, global = 64;
  std::optional<std::int64_t> max_len;
  if (auto train = root.object("train")) {
    micro = train->integer("micro_batch_size", 1).value_or(4);
    global = train->integer("global_batch_size", 1).value_or(64);
    max_len = train->integer("max_seq_length", 1);
    train->ignore_rest(d);
  }
  if (global % (micro * gpus) != 0)
    root.fail("train", "global_batch_size " + std::to_string(global) + " must be a multiple of micro_batch_size x GPUs = " +
                           std::to_string(micro * gpus));
  Draft::set(d.training, "micro_batch", std::to_string(micro));
  Draft::set(d.training, "global_batch", std::to_string(global));
  // A batch is padded to its longest sample, at most train.max_seq_length.
  const std::optional<std::int64_t> seq = o.seq_len ? o.seq_len : max_len;
  if (!o.seq_len && max_len)
    d.notes.push_back("seq_len is train.max_seq_length, the bound of a batch's padded length (give --seq-len for the data's)");
  if (seq) {
    Draft::set(d.training, "seq_len", std::to_string(*seq));
    // chunked_cross_entropy, 128 tokens a chunk: LoRA chunks the head per 128 positions of the
    // sequence; the full fine-tune splits the batch's flattened tokens.
    const std::int64_t tokens = std::max<std::int64_t>(*seq - 1, 1) * (lora ? 1 : micro);
    Draft::set(d.training, "loss_chunks", std::to_string((tokens + 127) / 128));
  }
  // LitGPT's Block: eager PyTorch (RMSNorm upcasts to fp32), SDPA's flash kernel.
  Draft::set(d.training, "attention", "flash");
  Draft::set(d.training, "modules", "eager");
  Draft::set(d.parallel, "data", std::to_string(gpus));
  if (gpus > 1) {
    // Several GPUs: every Block checkpointed and sharded; accumulation without gradient sync
    // (fabric.no_backward_sync). LoRA: FSDP2 (ModelParallelStrategy, no MixedPrecisionPolicy:
    // the model's dtype); full: FSDP1 (FSDPStrategy, a FlatParameter per Block, Lightning's
    // FSDPPrecision: bf16-mixed gathers fp32 and reduces bf16, *-true all in the dtype).
    Draft::set(d.training, "recompute", "full");
    Section f;
    if (!lora) Draft::set(f, "flat_parameter", "true");
    if (prec == "bf16-true" || prec == "amp-bf16") Draft::set(f, "reduce_dtype", "bf16");
    if (prec == "fp16-true" || prec == "amp-fp16") Draft::set(f, "reduce_dtype", "fp16");
    if (!lora && (prec == "amp-bf16" || prec == "amp-fp16")) Draft::set(f, "param_dtype", "fp32");
    Draft::set(f, "gradient_sync", "last-micro-batch");
    Draft::set(d.parallel, "fsdp", flow_mapping(f));
    if (!o.gpus_per_node) {
      Draft::set(d.cluster, "nodes", std::to_string(nodes));
      Draft::set(d.cluster, "gpus_per_node", std::to_string(devices));
    }
  }
  require_fsdp_optimizer(d, root.where("optimizer"), "optimizer");
  root.ignore_rest(d);
  apply_common(o, gpus, d);
  return d;
}

}  // namespace trainsim::importers
