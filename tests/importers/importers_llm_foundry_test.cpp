// llm-foundry's Composer YAMLs: MPT to the gpt3 architecture, OmegaConf interpolations,
// Composer's FSDP mixed-precision modes, and located errors (docs/import.md, "llm-foundry").
#include <catch2/catch.hpp>

#include "tests/importers/import_helpers.hpp"

using namespace trainsim;
using namespace trainsim::importers;

namespace {
using testing::error_of;
using testing::gpus;
using testing::parallel;
using testing::training;
// The layout of scripts/train/yamls/pretrain/mpt-*.yaml since 2024 (a `variables` section).
const std::string kMpt = R"(variables:
  max_seq_len: 4096
max_seq_len: ${variables.max_seq_len}
model:
  name: mpt_causal_lm
  d_model: 2048
  n_heads: 16
  n_layers: 24
  expansion_ratio: 4
  max_seq_len: ${variables.max_seq_len}
  vocab_size: 50368
  attn_config:
    attn_impl: flash
global_train_batch_size: 512
device_train_microbatch_size: 16
precision: amp_bf16
fsdp_config:
  sharding_strategy: FULL_SHARD
  mixed_precision: DEFAULT
  activation_checkpointing: false
)";
std::string with(const std::string& from, const std::string& to) {
  std::string c = kMpt;
  c.replace(c.find(from), from.size(), to);
  return c;
}
}  // namespace

TEST_CASE("llm-foundry: an MPT YAML with interpolated lengths maps to the gpt3 shape under Composer's FSDP") {
  // MPT's defaults (learned positions, biases, GELU 4h, tied) are GPT-3's architecture; the
  // text loader packs to max_seq_len; DEFAULT gathers bf16 and reduces fp32.
  const Draft d = import_llm_foundry(kMpt, "m.yaml", gpus(8));
  CHECK(to_yaml(d) ==
        "# Imported by trainsim import llm-foundry from m.yaml\n"
        "name: \"m\"\n"
        "model: {preset: gpt3, name: mpt, layers: 24, hidden: 2048, heads: 16, vocab: 50368, max_positions: 4096, "
        "dropout: false}\n"
        "device: a100-80gb\n"
        "training: {micro_batch: 16, global_batch: 512, seq_len: 4096, precision: bf16, optimizer: adamw, "
        "attention: flash}\n"
        "parallel: {data: 8, fsdp: {param_dtype: bf16, reduce_dtype: fp32, flat_parameter: true}}\n");
}

TEST_CASE("llm-foundry: PURE, FULL, SHARD_GRAD_OP, HYBRID_SHARD, no FSDP, the torch loss, Lion") {
  CHECK(parallel(import_llm_foundry(with("DEFAULT", "PURE"), "m.yaml", gpus(8)), "fsdp") ==
        "{param_dtype: bf16, reduce_dtype: bf16, flat_parameter: true}");
  CHECK(parallel(import_llm_foundry(with("DEFAULT", "FULL"), "m.yaml", gpus(8)), "fsdp") ==
        "{param_dtype: fp32, flat_parameter: true}");
  CHECK(parallel(import_llm_foundry(with("FULL_SHARD", "SHARD_GRAD_OP"), "m.yaml", gpus(8)), "fsdp") ==
        "{reshard_after_forward: false, param_dtype: bf16, reduce_dtype: fp32, flat_parameter: true}");
  CHECK(parallel(import_llm_foundry(with("FULL_SHARD", "HYBRID_SHARD"), "m.yaml", gpus(32)), "fsdp") ==
        "{shard_size: 8, param_dtype: bf16, reduce_dtype: fp32, flat_parameter: true}");
  // Without fsdp_config: DDP under autocast.
  const std::string ddp = kMpt.substr(0, kMpt.find("fsdp_config:"));
  const Draft d = import_llm_foundry(ddp + "loss_fn: torch_crossentropy\noptimizer:\n  name: decoupled_lionw\n",
                                     "m.yaml", gpus(8));
  CHECK(training(d, "precision") == "amp-bf16");
  CHECK(parallel(d, "fsdp") == "(absent)");
  CHECK(training(d, "loss_chunks") == "1");
  CHECK(training(d, "optimizer") == "lion");
}

TEST_CASE("llm-foundry: what trainsim cannot represent is located") {
  CHECK(error_of([] { import_llm_foundry(with("attn_impl: flash", "attn_impl: flash\n    alibi: true"), "m.yaml", gpus(8)); }) ==
        "m.yaml:14:12: model.attn_config.alibi: ALiBi is not supported by trainsim yet");
  CHECK(error_of([] { import_llm_foundry(with("device_train_microbatch_size: 16", "device_train_microbatch_size: auto"),
                                         "m.yaml", gpus(8)); })
            .rfind("m.yaml:15:31: device_train_microbatch_size: auto (Composer searches", 0) == 0);
  CHECK(error_of([] { import_llm_foundry(with("${variables.max_seq_len}\n  vocab", "${variables.seq}\n  vocab"), "m.yaml",
                                         gpus(8)); }) ==
        "m.yaml:10:16: model.max_seq_len: interpolation '${variables.seq}' names no value of the file");
  CHECK(error_of([] { import_llm_foundry(kMpt, "m.yaml", gpus(3)); }) ==
        "m.yaml:14:26: global_train_batch_size: must be a multiple of device_train_microbatch_size x GPUs = 48");
}
