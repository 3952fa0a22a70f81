// LitGPT fine-tuning configs: LoRA and QLoRA on one GPU, FSDP on several, a full fine-tune, and
// located errors (docs/import.md, "litgpt").
#include <catch2/catch.hpp>

#include "tests/importers/import_helpers.hpp"

using namespace trainsim;
using namespace trainsim::importers;

namespace {
using testing::error_of;
using testing::parallel;
using testing::training;
ImportOptions on(const char* device = "a100-80gb") {
  ImportOptions o;
  o.device = device;
  return o;
}
// config_hub/finetune/llama-2-7b/qlora.yaml's layout.
const std::string kQlora = R"(checkpoint_dir: checkpoints/meta-llama/Llama-2-7b-hf
precision: bf16-true
quantize: bnb.nf4-dq
devices: 1
lora_r: 32
lora_alpha: 16
lora_dropout: 0.05
lora_query: true
lora_value: true
lora_mlp: true
train:
  global_batch_size: 8
  micro_batch_size: 2
  max_seq_length: 512
optimizer:
  class_path: torch.optim.AdamW
  init_args:
    lr: 0.0002
)";
}  // namespace

TEST_CASE("litgpt: QLoRA on one GPU maps to the scenario finetune_lora runs") {
  // The fused qkv linear's adapters (layout fused-qkv); the MLP's fc_1, fc_2, proj; the base in
  // bitsandbytes' Linear4bit with double-quantized statistics. max_seq_length bounds the padded
  // batch (a note); the head runs in chunks of 128 positions: ceil(511 / 128) = 4.
  const Draft d = import_litgpt(kQlora, "q.yaml", on());
  CHECK(to_yaml(d) ==
        "# Imported by trainsim import litgpt from q.yaml\n"
        "# note: seq_len is train.max_seq_length, the bound of a batch's padded length (give --seq-len for "
        "the data's)\n"
        "name: \"q\"\n"
        "model: llama2-7b\n"
        "device: a100-80gb\n"
        "training: {micro_batch: 2, global_batch: 8, seq_len: 512, precision: bf16-true, optimizer: adamw, "
        "attention: flash, lora: {rank: 32, alpha: 16, dropout: 0.05, targets: [q_proj, v_proj, gate_proj, up_proj, "
        "down_proj], layout: fused-qkv, base: nf4-dq, quantizer: bitsandbytes}, optimizer_impl: foreach, "
        "loss_chunks: 4, modules: eager}\n"
        "parallel: {data: 1}\n");
}

TEST_CASE("litgpt: several GPUs shard and checkpoint every Block, a full fine-tune's FSDP1 precision") {
  // LoRA on 2 x 4 GPUs with 4 micro-batches of 2 each: FSDP2 in the model's dtype, accumulation
  // without gradient sync.
  std::string lora = kQlora;
  const std::string one = "quantize: bnb.nf4-dq\ndevices: 1", batch = "global_batch_size: 8";
  lora.replace(lora.find(one), one.size(), "devices: 4\nnum_nodes: 2");
  lora.replace(lora.find(batch), batch.size(), "global_batch_size: 64");
  const Draft d = import_litgpt(lora, "l.yaml", on());
  CHECK(parallel(d, "data") == "8");
  CHECK(parallel(d, "fsdp") == "{reduce_dtype: bf16, gradient_sync: last-micro-batch}");
  CHECK(training(d, "recompute") == "full");
  CHECK(*Draft::get(d.cluster, "gpus_per_node") == "4");
  // A full fine-tune (no lora_* key) in bf16-mixed on 4 GPUs: Lightning's FSDPPrecision gathers
  // fp32 and reduces bf16 over FSDP1's FlatParameters; the loss splits the batch's 4 x 511
  // tokens into chunks of 128 (16).
  const std::string full = "checkpoint_dir: checkpoints/meta-llama/Meta-Llama-3-8B\nprecision: bf16-mixed\n"
                           "devices: 4\ntrain:\n  global_batch_size: 64\n  micro_batch_size: 4\n  max_seq_length: 512\n";
  const Draft f = import_litgpt(full, "f.yaml", on());
  CHECK(f.model == "llama3-8b");
  CHECK(training(f, "precision") == "amp-bf16");
  CHECK(training(f, "lora") == "(absent)");
  CHECK(training(f, "loss_chunks") == "16");
  CHECK(parallel(f, "fsdp") == "{flat_parameter: true, reduce_dtype: bf16, param_dtype: fp32, gradient_sync: "
                               "last-micro-batch}");
  // Optimizers by name or class path, on one GPU (a low-bit optimizer beside FSDP is refused).
  std::string one_gpu = full;
  one_gpu.replace(one_gpu.find("devices: 4"), 10, "devices: 1");
  CHECK(training(import_litgpt(one_gpu + "optimizer: bitsandbytes.optim.PagedAdamW8bit\n", "o.yaml", on()),
                 "optimizer") == "paged-adamw-8bit");
  CHECK_THROWS_WITH(import_litgpt(full + "optimizer: bitsandbytes.optim.PagedAdamW8bit\n", "o.yaml", on()),
                    Catch::Contains("o.yaml:8:12") && Catch::Contains("with FSDP"));
  CHECK(training(import_litgpt(full + "optimizer: SGD\n", "o.yaml", on()), "optimizer") == "sgd");
  // bnb.int8-training: bitsandbytes' LLM.int8 base, which the scenario names without a quantizer.
  std::string int8 = kQlora;
  int8.replace(int8.find("bnb.nf4-dq"), 10, "bnb.int8-training");
  CHECK(training(import_litgpt(int8, "i.yaml", on()), "lora").find("base: int8}") != std::string::npos);
}

TEST_CASE("litgpt: what LitGPT refuses or trainsim cannot represent is located") {
  auto with = [](const std::string& from, const std::string& to) {
    std::string c = kQlora;
    c.replace(c.find(from), from.size(), to);
    return c;
  };
  CHECK(error_of([&] { import_litgpt(with("devices: 1", "devices: 2"), "a.yaml", on()); }) ==
        "a.yaml:3:11: quantize: quantization on several GPUs (LitGPT refuses it too) is not supported by trainsim yet");
  CHECK(error_of([&] { import_litgpt(kQlora + "lora_head: true\n", "a.yaml", on()); }) ==
        "a.yaml:19:12: lora_head: LoRA on the output head is not supported by trainsim yet");
  CHECK(error_of([&] { import_litgpt(with("bf16-true", "fp8"), "a.yaml", on()); }) ==
        "a.yaml:2:12: precision: expected bf16-true, bf16-mixed, 16-true, 16-mixed or 32-true, got 'fp8'");
  CHECK(error_of([&] { import_litgpt(with("Llama-2-7b-hf", "phi-2"), "a.yaml", on()); })
            .rfind("a.yaml:1:17: checkpoint_dir: checkpoint 'phi-2' has no trainsim preset", 0) == 0);
  CHECK(error_of([&] { import_litgpt(with("global_batch_size: 8", "global_batch_size: 7"), "a.yaml", on()); }) ==
        "a.yaml:12:3: train: global_batch_size 7 must be a multiple of micro_batch_size x GPUs = 2");
  ImportOptions eight = on();
  eight.gpus = 8;
  CHECK(error_of([&] { import_litgpt(kQlora, "a.yaml", eight); }) ==
        "a.yaml:4:10: --gpus: 8 GPUs disagree with devices x num_nodes = 1");
}
