// DeepSpeed's ds_config.json (DeepSpeed configuration JSON docs; deepspeed/runtime/config.py
// and zero/config.py). Every key read here changes memory or step time; the rest are listed as
// ignored.
#include "sim/importers/deepspeed.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/importers/import.hpp"

namespace trainsim::importers {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// `{"enabled": ...}` sections: fp16, bf16.
std::optional<bool> enabled(JsonObject& ds, const std::string& key, Draft& d) {
  auto section = ds.object(key);
  if (!section) return std::nullopt;
  const auto on = section->boolean("enabled", true);
  section->ignore_rest(d);
  return on;
}

// offload_optimizer / offload_param: device "cpu" is ZeRO-Offload; "nvme" has no model here.
bool offloaded(JsonObject& zero, const std::string& key, Draft& d) {
  auto section = zero.object(key);
  if (!section) return false;
  const std::string device = section->string("device").value_or("none");
  if (device == "nvme") unsupported(section->at(section->get("device")), section->name("device"), "NVMe offload");
  if (device != "cpu" && device != "none")
    section->fail("device", "expected \"cpu\", \"nvme\" or \"none\", got \"" + device + "\"");
  section->ignore_rest(d);
  return device == "cpu";
}

// False when the config names no optimizer (the script passes its own).
bool map_optimizer(JsonObject& ds, Draft& d) {
  auto opt = ds.object("optimizer");
  if (!opt) return false;
  const std::string type = lower(opt->string("type").value_or(""));
  std::string mapped;
  if (type == "adam" || type == "adamw") mapped = type;
  bool momentum = false;
  if (auto params = opt->object("params")) {
    // Learning rate, betas, eps, weight decay change no memory: listed as ignored.
    if (type == "sgd") {
      const YAML::Node m = params->get("momentum");
      momentum = m.IsDefined() && m.IsScalar() && std::strtod(m.Scalar().c_str(), nullptr) > 0;
    }
    params->ignore_rest(d);
  }
  if (type == "sgd") mapped = momentum ? "momentum" : "sgd";
  if (mapped.empty()) unsupported(opt->at(opt->get("type")), opt->name("type"), "optimizer '" + type + "'");
  opt->ignore_rest(d);
  Draft::set(d.training, "optimizer", mapped);
  return true;
}

// ZeRO-3's parameter fetch (parallel.zero3; docs/zero3.md): DeepSpeed's stage3_* counts in
// elements. "auto" (the HF integration fills it from the model's hidden size) stays DeepSpeed's
// default, with a note.
void map_zero3(JsonObject& zero, Draft& d) {
  Section z;
  for (const auto& [key, name] : {std::pair{"stage3_prefetch_bucket_size", "prefetch_bucket_size"},
                                  std::pair{"stage3_max_live_parameters", "max_live_parameters"},
                                  std::pair{"stage3_param_persistence_threshold", "param_persistence_threshold"}}) {
    const YAML::Node n = zero.get(key);
    if (n.IsDefined() && n.IsScalar() && n.Scalar() == "auto")
      d.notes.push_back(std::string(key) + " \"auto\" (the HF integration's, from the hidden size): DeepSpeed's default");
    if (auto v = zero.integer(key, 0, true)) Draft::set(z, name, std::to_string(*v));
  }
  if (!z.empty()) Draft::set(d.parallel, "zero3", flow_mapping(z));
}

// DeepSpeed's BF16_Optimizer (runtime/engine.py `_do_optimizer_sanity_check` and
// `get_data_types`; runtime/bf16_optimizer.py): under bf16 it wraps the optimizer at ZeRO stage
// 0, where data_types.grad_accum_dtype defaults to fp32, and at stage 1 when the config asks for
// fp32 accumulation without optimizer offload. It adds every micro-batch's bf16 gradients into
// fp32 copies, all-reduces those, and shards its fp32 master weights and optimizer states over
// the data ranks ("its own zero stage 1 equivalent"): accumulate_grads fp32 with ZeRO-1.
void map_bf16_optimizer(JsonObject& ds, std::int64_t stage, bool optimizer_offload, Draft& d) {
  const std::string* precision = Draft::get(d.training, "precision");
  // Elsewhere data_types is left to be listed as ignored: the ZeRO optimizer accumulates in the
  // model's dtype.
  if (!precision || *precision != "bf16" || stage > 1) return;
  std::optional<std::string> accum;
  if (auto types = ds.object("data_types")) {
    if (auto v = types->string("grad_accum_dtype")) {
      accum = lower(*v);
      static const std::vector<std::string> known = {"fp32", "float32", "fp16", "float16", "half", "bf16", "bfloat16"};
      if (std::find(known.begin(), known.end(), *accum) == known.end())
        types->fail("grad_accum_dtype", "expected fp32, fp16 or bf16, got \"" + *v + "\"");
    }
    types->ignore_rest(d);
  }
  const bool fp32_accum = accum ? *accum == "fp32" || *accum == "float32" : stage == 0;
  if (stage == 0 && !fp32_accum) {
    d.notes.push_back("bf16 at ZeRO stage 0 with 16-bit grad_accum_dtype: DeepSpeed runs it only under its "
                      "pipeline engine (BF16_Optimizer accumulating in bf16), modelled as parallel.zero 1");
    Draft::set(d.parallel, "zero", "1");
    return;
  }
  if (!fp32_accum || optimizer_offload) return;
  Draft::set(d.training, "accumulate_grads", "fp32");
  Draft::set(d.parallel, "zero", "1");
}

}  // namespace

// Batch figures stay within 2^30, so their products with a GPU count (<= 2^24) fit 64 bits.
constexpr std::int64_t kMaxBatch = std::int64_t{1} << 30;

DeepSpeedBatch map_deepspeed(JsonObject& ds, Draft& d) {
  DeepSpeedBatch b;
  b.micro = ds.integer("train_micro_batch_size_per_gpu", 1, true, kMaxBatch);
  b.accumulation = ds.integer("gradient_accumulation_steps", 1, true, kMaxBatch);
  b.global = ds.integer("train_batch_size", 1, true, kMaxBatch);
  b.global_at = ds.at(ds.get("train_batch_size"));
  const auto fp16 = enabled(ds, "fp16", d);
  auto bf16 = enabled(ds, "bf16", d);
  if (!bf16) bf16 = enabled(ds, "bfloat16", d);  // the older name of the section
  if (fp16.value_or(false) && bf16.value_or(false))
    ds.fail("bf16", "enabled together with fp16: choose one");
  if (ds.has("amp")) unsupported(ds.at_key("amp"), "amp", "DeepSpeed's apex AMP mode");
  if (fp16 || bf16)
    Draft::set(d.training, "precision", fp16.value_or(false) ? "fp16" : bf16.value_or(false) ? "bf16" : "fp32");
  std::int64_t stage = 0;
  bool opt_cpu = false;
  if (auto zero = ds.object("zero_optimization")) {
    if (auto s = zero->integer("stage", 0, true)) {
      if (*s > 3) zero->fail("stage", "expected 0, 1, 2 or 3, got " + std::to_string(*s));
      stage = *s;
    }
    opt_cpu = offloaded(*zero, "offload_optimizer", d);
    const bool param_cpu = offloaded(*zero, "offload_param", d);
    if (param_cpu && stage != 3)
      zero->fail("offload_param", "parameter offload needs stage 3 (DeepSpeed's ZeRO-Infinity)");
    if (opt_cpu || param_cpu)
      Draft::set(d.training, "offload", std::string("{optimizer: ") + (opt_cpu ? "cpu" : "none") +
                                            ", parameters: " + (param_cpu ? "cpu" : "none") + "}");
    if (stage == 3) map_zero3(*zero, d);
    if (auto bucket = zero->integer("reduce_bucket_size", 1, true)) {
      // DeepSpeed counts the bucket in elements of the gradients' dtype.
      const std::string* p = Draft::get(d.training, "precision");
      const int bytes = p && *p != "fp32" ? 2 : 4;
      Draft::set(d.parallel, "bucket_size", std::to_string(*bucket * bytes) + "B");
    }
    zero->ignore_rest(d);
  }
  if (stage > 0) Draft::set(d.parallel, "zero", std::to_string(stage));
  map_bf16_optimizer(ds, stage, opt_cpu, d);
  b.optimizer = map_optimizer(ds, d);
  ds.ignore_rest(d);
  return b;
}

Draft import_deepspeed(const std::string& text, const std::string& path, const ImportOptions& o) {
  Draft d;
  d.kind = "deepspeed";
  d.source = path;
  JsonObject ds(parse_json(text, path), path, "");
  require_model(o, path,
                "a DeepSpeed config does not describe the model: give --model (a preset or a config.json)",
                d);
  Draft::set(d.training, "precision", "fp32");
  const DeepSpeedBatch b = map_deepspeed(ds, d);
  if (!b.optimizer) {
    d.notes.push_back("no optimizer in the config (the script passes its own): adamw");
    Draft::set(d.training, "optimizer", "adamw");
  }
  // World size: --gpus, else what the three batch figures imply.
  ImportOptions opts = o;
  if (!opts.gpus && b.global && b.micro && b.accumulation && *b.global % (*b.micro * *b.accumulation) == 0) {
    opts.gpus = *b.global / (*b.micro * *b.accumulation);
    d.notes.push_back("no --gpus: " + std::to_string(*opts.gpus) +
                      " = train_batch_size / (micro batch x gradient accumulation)");
  }
  const std::int64_t data = data_degree(opts, 1, d);
  std::optional<std::int64_t> micro = b.micro, acc = b.accumulation;
  // DeepSpeed derives the missing one of the three (train_batch_size = micro x accumulation x world).
  if (b.global && !micro && acc && *b.global % (*acc * data) == 0) micro = *b.global / (*acc * data);
  if (b.global && micro && !acc && *b.global % (*micro * data) == 0) acc = *b.global / (*micro * data);
  if (!micro)
    throw core::ConfigError({path, 1, 1}, "train_micro_batch_size_per_gpu",
                            "missing, and not derivable from train_batch_size and gradient_accumulation_steps");
  if (b.global && product({*micro, acc.value_or(1), data}) != *b.global)
    throw core::ConfigError(b.global_at, "train_batch_size",
                            "must equal train_micro_batch_size_per_gpu x gradient_accumulation_steps x GPUs = " +
                                std::to_string(*micro) + " x " + std::to_string(acc.value_or(1)) + " x " +
                                std::to_string(data) + ", got " + std::to_string(*b.global));
  Draft::set(d.training, "micro_batch", std::to_string(*micro));
  Draft::set(d.training, "gradient_accumulation", std::to_string(acc.value_or(1)));
  Draft::set(d.parallel, "data", std::to_string(data));
  apply_common(o, data, d);
  return d;
}

}  // namespace trainsim::importers
