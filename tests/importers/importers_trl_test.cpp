// TRL's CLI configs (`trl sft --config`): SFTConfig's and ModelConfig's fields in one YAML, PEFT
// LoRA and bitsandbytes bases, and located errors (docs/import.md, "trl").
#include <catch2/catch.hpp>

#include "tests/importers/import_helpers.hpp"

using namespace trainsim;
using namespace trainsim::importers;

namespace {
using testing::error_of;
using testing::parallel;
using testing::training;
ImportOptions gpus(std::int64_t n) { return testing::gpus(n, "h100-80gb"); }
// TRL's documented QLoRA recipe layout (trl sft --config).
const std::string kQlora = R"(model_name_or_path: meta-llama/Llama-3.1-8B
dtype: bfloat16
attn_implementation: flash_attention_2
dataset_name: trl-lib/Capybara
packing: true
max_length: 2048
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
use_peft: true
lora_r: 16
lora_alpha: 32
lora_target_modules: all-linear
load_in_4bit: true
use_bnb_nested_quant: true
)";
}  // namespace

TEST_CASE("trl: QLoRA with a bf16 model, packed to max_length, SFTConfig's defaults") {
  // gradient_checkpointing defaults to true in SFTConfig; a bf16 model trains bf16 weights.
  const Draft d = import_trl(kQlora, "q.yaml", gpus(1));
  CHECK(to_yaml(d) ==
        "# Imported by trainsim import trl from q.yaml\n"
        "# ignored: dataset_name (q.yaml:4:1)\n"
        "name: \"q\"\n"
        "model: llama3-8b\n"
        "device: h100-80gb\n"
        "training: {micro_batch: 2, gradient_accumulation: 8, seq_len: 2048, precision: bf16-true, "
        "optimizer: adamw, recompute: full, attention: flash, modules: eager, lora: {rank: 16, alpha: 32, "
        "dropout: 0.05, targets: all-linear, base: nf4-dq, quantizer: bitsandbytes}}\n"
        "parallel: {data: 1}\n");
}

TEST_CASE("trl: fp32 models under autocast, PEFT's default targets, 8-bit bases, FSDP, eager attention") {
  const std::string fp32 = "model_name_or_path: mistralai/Mistral-7B-v0.1\nuse_peft: true\nload_in_8bit: true\n"
                           "attn_implementation: eager\ngradient_checkpointing: false\noptim: paged_adamw_8bit\n";
  const Draft d = import_trl(fp32, "a.yaml", gpus(1));
  CHECK(d.model == "mistral-7b");
  CHECK(training(d, "precision") == "amp-bf16");  // dtype float32 (ModelConfig's default), bf16 on
  CHECK(training(d, "lora") == "{rank: 16, alpha: 32, dropout: 0.05, targets: [q_proj, v_proj], base: int8}");
  CHECK(training(d, "attention") == "standard");
  CHECK(training(d, "recompute") == "(absent)");
  CHECK(training(d, "optimizer") == "paged-adamw-8bit");
  CHECK(training(d, "seq_len") == "1024");  // max_length's default, a bound (a note)
  // A full fine-tune under FSDP as Accelerate wraps it.
  const Draft f = import_trl("model_name_or_path: meta-llama/Llama-2-7b-hf\nfsdp: full_shard auto_wrap\n", "f.yaml",
                             gpus(8));
  CHECK(*Draft::get(f.parallel, "fsdp") == "{param_dtype: bf16, reduce_dtype: bf16, flat_parameter: true}");
  CHECK(training(f, "lora") == "(absent)");
  // A bf16 model under FSDP: Accelerate's MixedPrecision follows the bf16 flag (true by default).
  const Draft b = import_trl("model_name_or_path: meta-llama/Llama-2-7b-hf\ndtype: bfloat16\nfsdp: full_shard\n",
                             "b.yaml", gpus(8));
  CHECK(training(b, "precision") == "bf16-true");
  CHECK(*Draft::get(b.parallel, "fsdp") == "{param_dtype: bf16, reduce_dtype: bf16, flat_parameter: true}");
}

TEST_CASE("trl: what TRL refuses or trainsim cannot represent is located") {
  CHECK(error_of([] { import_trl(kQlora + "use_dora: true\n", "a.yaml", gpus(1)); }) ==
        "a.yaml:15:11: use_dora: DoRA is not supported by trainsim yet");
  CHECK(error_of([] {
          import_trl("model_name_or_path: meta-llama/Llama-2-7b-hf\nload_in_4bit: true\n", "a.yaml", gpus(1));
        }) == "a.yaml:2:15: load_in_4bit: a quantized base needs use_peft: true (TRL trains adapters only)");
  CHECK(error_of([] { import_trl("model_name_or_path: meta-llama/Llama-2-7b-hf\ndtype: auto\n", "a.yaml", gpus(1)); })
            .rfind("a.yaml:2:8: dtype: 'auto' takes the checkpoint's dtype", 0) == 0);
  CHECK(error_of([] { import_trl("model_name_or_path: Qwen/Qwen2.5-0.5B\n", "a.yaml", gpus(1)); })
            .rfind("a.yaml:1:21: model_name_or_path: model 'Qwen/Qwen2.5-0.5B' has no trainsim preset", 0) == 0);
  CHECK(error_of([] {
          import_trl("model_name_or_path: meta-llama/Llama-2-7b-hf\nuse_peft: true\nlora_target_modules: [wq]\n",
                     "a.yaml", gpus(1));
        }) == "a.yaml:3:22: lora_target_modules: expected q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj or "
              "down_proj, got 'wq'");
}
