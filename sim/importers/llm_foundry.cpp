// MosaicML llm-foundry training YAMLs (`composer scripts/train/train.py config.yaml`;
// scripts/train/yamls/pretrain/*.yaml of mosaicml/llm-foundry): an MPT model (model.name
// mpt_causal_lm; llmfoundry/models/mpt/configuration_mpt.py), Composer's precision and its FSDP1
// config (composer/distributed: sharding_strategy, mixed_precision DEFAULT / PURE / FULL),
// batches, optimizer and loss. Mappings and sources: docs/import.md, "llm-foundry".
#include <cmath>

#include "sim/importers/import.hpp"
#include "sim/importers/yaml_map.hpp"

namespace trainsim::importers {

namespace {

// MPT as configuration_mpt.py builds it: learned positions, biases, a GELU MLP of
// expansion_ratio x d_model, tied embeddings, LayerNorm: the gpt3 preset's architecture.
// ALiBi, no biases, GLU MLPs and grouped-query attention are other architectures.
void map_model(Map& root, Draft& d) {
  auto model = root.object("model");
  if (!model) throw core::ConfigError({d.source, 1, 1}, "model", "missing: the config names no model");
  const std::string name = model->string("name").value_or("");
  if (name != "mpt_causal_lm")
    unsupported(model->where("name"), "model.name", "model '" + name + "' (only mpt_causal_lm is mapped)");
  const std::int64_t layers = model->integer("n_layers", 1).value_or(24);
  const std::int64_t hidden = model->integer("d_model", 1).value_or(2048);
  const std::int64_t heads = model->integer("n_heads", 1).value_or(16);
  const double ratio = model->number("expansion_ratio").value_or(4);
  const std::int64_t vocab = model->integer("vocab_size", 1).value_or(50368);
  const std::int64_t max_len = model->integer("max_seq_len", 1).value_or(2048);
  if (!model->boolean("learned_pos_emb").value_or(true))
    unsupported(model->where("learned_pos_emb"), "model.learned_pos_emb", "an MPT without learned positions");
  if (model->boolean("no_bias").value_or(false)) unsupported(model->where("no_bias"), "model.no_bias", "an MPT without biases");
  if (!model->boolean("tie_word_embeddings").value_or(true))
    unsupported(model->where("tie_word_embeddings"), "model.tie_word_embeddings", "an MPT with an untied head");
  bool dropout = false;
  for (const char* p : {"resid_pdrop", "emb_pdrop"}) dropout = dropout || model->number(p).value_or(0) > 0;
  std::string attn = "triton";  // the pretrain YAMLs of 2023; later ones say flash
  if (auto a = model->object("attn_config")) {
    attn = a->string("attn_impl").value_or("flash");
    if (attn != "triton" && attn != "flash" && attn != "torch")
      a->fail("attn_impl", "expected triton, flash or torch, got '" + attn + "'");
    if (a->boolean("alibi").value_or(false)) unsupported(a->where("alibi"), "model.attn_config.alibi", "ALiBi");
    const std::string type = a->string("attn_type").value_or("multihead_attention");
    if (type != "multihead_attention")
      unsupported(a->where("attn_type"), "model.attn_config.attn_type", "attention '" + type + "'");
    dropout = dropout || a->number("attn_pdrop").value_or(0) > 0;
    a->ignore_rest(d);
  }
  if (auto f = model->object("ffn_config")) {
    const std::string type = f->string("ffn_type").value_or("mptmlp");
    if (type != "mptmlp") unsupported(f->where("ffn_type"), "model.ffn_config.ffn_type", "MLP '" + type + "'");
    f->ignore_rest(d);
  }
  model->ignore_rest(d);
  std::string m = "{preset: gpt3, name: mpt, layers: " + std::to_string(layers) + ", hidden: " + std::to_string(hidden) +
                  ", heads: " + std::to_string(heads);
  const double ffn = ratio * static_cast<double>(hidden);
  if (ffn != std::floor(ffn) || ffn < 1) model->fail("expansion_ratio", "must make a whole MLP width");
  if (ratio != 4) m += ", ffn: " + std::to_string(static_cast<std::int64_t>(ffn));
  m += ", vocab: " + std::to_string(vocab) + ", max_positions: " + std::to_string(max_len) +
       ", dropout: " + (dropout ? "true" : "false") + "}";
  d.model = m;
  Draft::set(d.training, "seq_len", std::to_string(max_len));  // the text loader packs to it
  Draft::set(d.training, "attention", attn == "torch" ? "standard" : "flash");
  if (attn == "triton")
    d.notes.push_back("attn_impl triton: flash-attention's Triton kernel, slower than FlashAttention-2 "
                      "(docs/validation.md, llm-foundry's MPT tables, sets device.flash_efficiency for it)");
}

// Composer's FSDP1 (fsdp_config): the strategy's resharding and groups, mixed_precision DEFAULT
// (gathers in the autocast dtype, reduces fp32), PURE (both in it), FULL (fp32); a
// FlatParameter per MPTBlock.
void map_fsdp(Map& root, const ImportOptions& o, std::int64_t data, const std::string& dtype, Draft& d) {
  auto cfg = root.object("fsdp_config");
  if (!cfg) return;
  const std::string strategy = cfg->string("sharding_strategy").value_or("FULL_SHARD");
  if (strategy != "FULL_SHARD" && strategy != "SHARD_GRAD_OP" && strategy != "HYBRID_SHARD" &&
      strategy != "_HYBRID_SHARD_ZERO2" && strategy != "NO_SHARD")
    cfg->fail("sharding_strategy", "expected FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD, _HYBRID_SHARD_ZERO2 or NO_SHARD, "
                                   "got '" + strategy + "'");
  const std::string mp = cfg->string("mixed_precision").value_or("DEFAULT");
  if (mp != "DEFAULT" && mp != "PURE" && mp != "FULL")
    cfg->fail("mixed_precision", "expected DEFAULT, PURE or FULL, got '" + mp + "'");
  if (cfg->boolean("activation_checkpointing").value_or(false)) Draft::set(d.training, "recompute", "full");
  if (cfg->boolean("activation_cpu_offload").value_or(false))
    unsupported(cfg->where("activation_cpu_offload"), "fsdp_config.activation_cpu_offload",
                "activation offloading with FSDP");
  if (cfg->boolean("cpu_offload").value_or(false))
    unsupported(cfg->where("cpu_offload"), "fsdp_config.cpu_offload", "Composer's FSDP CPU offload");
  cfg->ignore_rest(d);
  if (strategy == "NO_SHARD" || data == 1) return;
  Section f;
  if (strategy == "HYBRID_SHARD" || strategy == "_HYBRID_SHARD_ZERO2") {
    const std::int64_t node = std::min<std::int64_t>(o.gpus_per_node.value_or(8), data);
    if (node < data) Draft::set(f, "shard_size", std::to_string(node));
  }
  if (strategy == "SHARD_GRAD_OP" || strategy == "_HYBRID_SHARD_ZERO2") Draft::set(f, "reshard_after_forward", "false");
  if (!dtype.empty()) Draft::set(f, "param_dtype", mp == "FULL" ? "fp32" : dtype);
  if (!dtype.empty() && mp != "FULL") Draft::set(f, "reduce_dtype", mp == "PURE" ? dtype : "fp32");
  Draft::set(f, "flat_parameter", "true");
  Draft::set(d.parallel, "fsdp", flow_mapping(f));
}

}  // namespace

Draft import_llm_foundry(const std::string& text, const std::string& path, const ImportOptions& o) {
  Draft d = Draft::of("llm-foundry", path);
  Map root = Map::parse(text, path, "an llm-foundry config");
  if (o.model) throw core::ConfigError({"trainsim import", 0, 0}, "--model", "not used with llm-foundry: the config describes the model");
  map_model(root, d);
  // Values the model's and loaders' interpolations read (`${max_seq_len}`, `${variables.*}`).
  root.get("variables");
  root.get("max_seq_len");
  // Batches: global_train_batch_size over all GPUs, device_train_microbatch_size per GPU.
  const std::int64_t global = root.integer("global_train_batch_size", 1).value_or(0);
  if (global == 0) throw core::ConfigError({path, 1, 1}, "global_train_batch_size", "missing");
  const YAML::Node mb = root.get("device_train_microbatch_size");
  if (mb.IsDefined() && mb.IsScalar() && mb.Scalar() == "auto")
    unsupported(root.where("device_train_microbatch_size"), "device_train_microbatch_size",
                "auto (Composer searches for the largest that fits; `trainsim plan` does too): give a number");
  const std::int64_t micro = mb.IsDefined() ? root.integer("device_train_microbatch_size", 1).value_or(1) : global;
  Draft::set(d.training, "micro_batch", std::to_string(micro));
  Draft::set(d.training, "global_batch", std::to_string(global));
  // Composer's precision: amp_bf16 / amp_fp16 autocast; with FSDP the shards are fp32 and the
  // gathers 16-bit (trainsim's bf16 / fp16 under parallel.fsdp).
  const std::string precision = root.string("precision").value_or("amp_bf16");
  std::string dtype;
  if (precision == "amp_bf16") dtype = "bf16";
  else if (precision == "amp_fp16") dtype = "fp16";
  else if (precision != "fp32") root.fail("precision", "expected amp_bf16, amp_fp16 or fp32, got '" + precision + "'");
  const std::string optimizer = [&] {
    auto opt = root.object("optimizer");
    const std::string n = opt ? opt->string("name").value_or("decoupled_adamw") : "decoupled_adamw";
    if (opt) opt->ignore_rest(d);
    if (n == "decoupled_adamw" || n == "adamw") return std::string("adamw");
    if (n == "decoupled_lionw" || n == "lion") return std::string("lion");
    unsupported(root.where("optimizer"), "optimizer.name", "optimizer '" + n + "'");
  }();
  Draft::set(d.training, "optimizer", optimizer);
  // loss_fn: flash-attn's fused cross-entropy (the default) keeps 16-bit logits, trainsim's
  // fused loss; torch_crossentropy upcasts the whole batch's.
  const std::string loss = root.string("loss_fn").value_or("fused_crossentropy");
  if (loss == "torch_crossentropy") Draft::set(d.training, "loss_chunks", "1");
  else if (loss != "fused_crossentropy") root.fail("loss_fn", "expected fused_crossentropy or torch_crossentropy, got '" + loss + "'");
  const std::int64_t data = data_degree(o, 1, d);
  if (global % (micro * data) != 0)
    root.fail("global_train_batch_size", "must be a multiple of device_train_microbatch_size x GPUs = " +
                                             std::to_string(micro * data));
  Draft::set(d.parallel, "data", std::to_string(data));
  map_fsdp(root, o, data, dtype, d);
  const bool sharded = Draft::get(d.parallel, "fsdp") != nullptr;
  Draft::set(d.training, "precision", dtype.empty() ? "fp32" : sharded ? dtype : "amp-" + dtype);
  root.ignore_rest(d);
  apply_common(o, data, d);
  return d;
}

}  // namespace trainsim::importers
