// torchtune recipe configs: the exact scenario for small configs, each component's mapping,
// and located errors (docs/import.md, "torchtune").
#include <catch2/catch.hpp>

#include "tests/importers/import_helpers.hpp"

using namespace trainsim;
using namespace trainsim::importers;

namespace {
using testing::error_of;
using testing::parallel;
using testing::training;
using testing::gpus;
// A LoRA config in the layout of torchtune's recipes/configs (llama3_1/8B_lora_single_device).
const std::string kLora = R"(output_dir: /tmp/out
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  max_seq_len: 2048
dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  packed: True
model:
  _component_: torchtune.models.llama3_1.lora_llama3_1_8b
  lora_attn_modules: ['q_proj', 'v_proj', 'output_proj']
  apply_lora_to_mlp: True
  apply_lora_to_output: False
  lora_rank: 8
  lora_alpha: 16
  lora_dropout: 0.05
batch_size: 4
gradient_accumulation_steps: 8
optimizer:
  _component_: torch.optim.AdamW
  fused: True
  lr: 3e-4
loss:
  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss
enable_activation_checkpointing: True
compile: False
dtype: bf16
)";
}  // namespace

TEST_CASE("torchtune: a LoRA config on one GPU maps to the scenario its recipe runs") {
  // Packed: every sample is max_seq_len tokens. output_proj is the HF o_proj; the MLP's w1, w2,
  // w3 are gate, down and up. dtype bf16: everything bf16 (bf16-true).
  const Draft d = import_torchtune(kLora, "lora.yaml", gpus(1));
  CHECK(to_yaml(d) ==
        "# Imported by trainsim import torchtune from lora.yaml\n"
        "# ignored: tokenizer._component_ (lora.yaml:3:3), dataset._component_ (lora.yaml:6:3),\n"
        "#   optimizer.lr (lora.yaml:21:3), output_dir (lora.yaml:1:1)\n"
        "name: \"lora\"\n"
        "model: llama3-8b\n"
        "device: a100-80gb\n"
        "training: {micro_batch: 4, gradient_accumulation: 8, seq_len: 2048, precision: bf16-true, "
        "optimizer: adamw, recompute: full, attention: flash, lora: {rank: 8, alpha: 16, dropout: 0.05, "
        "targets: [q_proj, v_proj, o_proj, gate_proj, up_proj, down_proj]}, optimizer_impl: fused, "
        "loss_chunks: 8, modules: eager}\n"
        "parallel: {data: 1}\n");
}

TEST_CASE("torchtune: QLoRA, the distributed recipe's FSDP2 and the optimizers it names") {
  // qlora_* builders quantize the base with torchao's NF4 (double-quantized scales).
  std::string q = kLora;
  q.replace(q.find("lora_llama3_1_8b"), 16, "qlora_llama3_1_8b");
  CHECK(training(import_torchtune(q, "q.yaml", gpus(1)), "lora").find("base: nf4-dq, quantizer: torchao") !=
        std::string::npos);
  // 8 GPUs: fully_shard without a MixedPrecisionPolicy (bf16 reduce-scatters), the outer layers
  // as units of their own, CPU offload, SHARD_GRAD_OP-like resharding.
  const std::string dist = kLora + "custom_sharded_layers: ['tok_embeddings', 'output']\nfsdp_cpu_offload: True\n"
                                   "fsdp_reshard_after_forward: False\n";
  const Draft d = import_torchtune(dist, "d.yaml", gpus(8));
  CHECK(*Draft::get(d.parallel, "data") == "8");
  CHECK(*Draft::get(d.parallel, "fsdp") ==
        "{reshard_after_forward: false, reduce_dtype: bf16, separate_outer_layers: true, offload: cpu}");
  // The same keys on one GPU: the single-device recipe has no FSDP (a note each).
  const Draft one = import_torchtune(dist, "d.yaml", gpus(1));
  CHECK(!Draft::get(one.parallel, "fsdp"));
  CHECK(one.notes.size() == 3);
  const std::pair<const char*, const char*> optimizers[] = {
      {"bitsandbytes.optim.PagedAdamW8bit", "paged-adamw-8bit"},
      {"bitsandbytes.optim.PagedAdamW", "paged-adamw"},
      {"bitsandbytes.optim.AdamW8bit", "adamw-8bit"},
      {"torchao.prototype.low_bit_optim.AdamW8bit", "adamw-8bit"},
      {"torchao.prototype.low_bit_optim.AdamW4bit", "adamw-4bit"}};
  for (const auto& [component, name] : optimizers) {
    std::string c = kLora;
    const std::string adamw = "torch.optim.AdamW\n  fused: True";
    c.replace(c.find(adamw), adamw.size(), std::string(component));
    const Draft o = import_torchtune(c, "o.yaml", gpus(1));
    CHECK(training(o, "optimizer") == name);
    CHECK(training(o, "optimizer_impl") == "(absent)");
  }
  // Plain cross-entropy upcasts the whole batch's logits; an unpacked dataset is padded to its
  // longest sample, which --seq-len gives.
  std::string plain = kLora;
  plain.replace(plain.find("torchtune.modules.loss.CEWithChunkedOutputLoss"), 46, "torch.nn.CrossEntropyLoss");
  plain.replace(plain.find("packed: True"), 12, "packed: False");
  ImportOptions o = gpus(1);
  o.seq_len = 700;
  const Draft p = import_torchtune(plain, "p.yaml", o);
  CHECK(training(p, "loss_chunks") == "1");
  CHECK(training(p, "seq_len") == "700");
}

TEST_CASE("torchtune: what its recipes refuse or trainsim cannot represent is located") {
  auto with = [](const std::string& from, const std::string& to) {
    std::string c = kLora;
    c.replace(c.find(from), from.size(), to);
    return c;
  };
  const std::string output = with("apply_lora_to_output: False", "apply_lora_to_output: True");
  CHECK(error_of([&] { import_torchtune(output, "a.yaml", gpus(1)); }) ==
        "a.yaml:12:25: model.apply_lora_to_output: LoRA on the output projection is not supported by trainsim yet");
  CHECK(error_of([&] { import_torchtune(with("dtype: bf16", "dtype: fp16"), "a.yaml", gpus(1)); }) ==
        "a.yaml:26:8: dtype: expected bf16 or fp32 (torchtune's recipes refuse fp16), got 'fp16'");
  CHECK(error_of([&] { import_torchtune(with("torch.optim.AdamW", "torch.optim.Adagrad"), "a.yaml", gpus(1)); }) ==
        "a.yaml:19:16: optimizer._component_: optimizer 'torch.optim.Adagrad' is not supported by trainsim yet");
  CHECK(error_of([&] { import_torchtune(with("lora_llama3_1_8b", "lora_llama3_2_3b"), "a.yaml", gpus(1)); })
            .rfind("a.yaml:9:16: model._component_: torchtune model 'lora_llama3_2_3b' has no trainsim preset", 0) == 0);
  CHECK(error_of([&] { import_torchtune(with("  max_seq_len: 2048\n", ""), "a.yaml", gpus(1)); }) ==
        "a.yaml:1:1: tokenizer.max_seq_len: missing: a packed dataset packs to it");
  CHECK(error_of([&] { import_torchtune(with("batch_size: 4", "batch_size: four"), "a.yaml", gpus(1)); }) ==
        "a.yaml:16:13: batch_size: expected an integer in 1..1073741824, got 'four'");
  CHECK(error_of([&] { import_torchtune(kLora + "enable_activation_offloading: True\n", "a.yaml", gpus(2)); }) ==
        "a.yaml:27:31: enable_activation_offloading: activation offloading with FSDP or tensor parallelism is "
        "not supported by trainsim yet");
  CHECK(error_of([&] { import_torchtune("model: [1\n", "a.yaml", gpus(1)); }).rfind("a.yaml:", 0) == 0);
  // bitsandbytes' paged states beside FSDP's shards have no model here.
  CHECK(error_of([&] { import_torchtune(with("torch.optim.AdamW\n  fused: True", "bitsandbytes.optim.PagedAdamW8bit"),
                                        "a.yaml", gpus(4)); }) ==
        "a.yaml:19:3: optimizer._component_: optimizer paged-adamw-8bit with FSDP is not supported by trainsim yet");
  CHECK(error_of([&] { import_torchtune(kLora + "optimizer_in_bwd: True\n", "a.yaml", gpus(4)); }) ==
        "a.yaml:27:19: optimizer_in_bwd: the optimizer step in backward over several data ranks is not supported "
        "by trainsim yet");
  CHECK(error_of([&] { import_torchtune(with("gradient_accumulation_steps: 8\n", ""), "a.yaml", gpus(1)); }) ==
        "a.yaml:1:1: gradient_accumulation_steps: missing: torchtune's recipes require it");
  CHECK(error_of([&] { import_torchtune(with("dtype: bf16\n", ""), "a.yaml", gpus(1)); }) ==
        "a.yaml:1:1: dtype: missing: torchtune's recipes require it");
}
