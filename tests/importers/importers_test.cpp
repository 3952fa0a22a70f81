// Each importer turns a small config into the exact scenario YAML its mapping table
// (docs/import.md) gives.
#include <filesystem>

#include <catch2/catch.hpp>

#include "sim/importers/import.hpp"
#include "sim/importers/torchtitan_split.hpp"

using namespace trainsim;
using namespace trainsim::importers;

namespace {
ImportOptions gpus(std::int64_t n, const char* device = "a100-80gb") {
  ImportOptions o;
  o.gpus = n;
  o.device = device;
  return o;
}
}  // namespace

TEST_CASE("megatron: GPT arguments map to the gpt3 preset, data = GPUs / (tensor x pipeline)") {
  // 64 GPUs / (tensor 4 x pipeline 2) = data 8. Vocabulary: GPT-2 BPE 50257 padded to a
  // multiple of 128 x 4 = 512: ceil(50257 / 512) = 99, 99 x 512 = 50688.
  const std::string args =
      "--num-layers 24 --hidden-size 2048 --num-attention-heads 16 \\\n"
      "  --seq-length 2048 --max-position-embeddings 2048 # model\n"
      "--micro-batch-size 2 --global-batch-size 512 --tensor-model-parallel-size 4\n"
      "--pipeline-model-parallel-size 2 --tokenizer-type GPT2BPETokenizer --fp16 --lr 1e-4\n"
      "--recompute-granularity full --recompute-method block --recompute-num-layers 3\n";
  const Draft d = import_megatron(args, "small.args", gpus(64));
  CHECK(to_yaml(d) ==
        "# Imported by trainsim import megatron from small.args\n"
        "# note: vocabulary 50257 of the GPT-2 BPE tokenizer\n"
        "# note: vocabulary 50257 padded to 50688 as Megatron-LM pads it\n"
        "# ignored: --lr (small.args:4:75)\n"
        "name: \"small\"\n"
        "model: {preset: gpt3, layers: 24, hidden: 2048, heads: 16, vocab: 50688, max_positions: 2048, "
        "name: \"small\"}\n"
        "device: a100-80gb\n"
        "training: {micro_batch: 2, global_batch: 512, seq_len: 2048, precision: fp16, optimizer: adamw, "
        "recompute: full, recompute_layers: 3}\n"
        "parallel: {data: 8, tensor: 4, pipeline: 2, schedule: 1f1b, bucket_buffers: in_place, "
        "grad_reduce: after_backward_in_place}\n");
}

TEST_CASE("megatron: Llama arguments map to the llama2-7b preset, virtual stages from layers per stage") {
  // 32 layers / (pipeline 2 x 8 layers per virtual stage) = 2 virtual stages. SwiGLU ffn default
  // int(4 x 4096 x 2/3 / 64) x 64 = int(170.67) x 64 = 10880; --vocab-size 32000 with divisor 1
  // x tensor 2 stays 32000.
  const std::string args =
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --group-query-attention "
      "--num-query-groups 8 --seq-length 4096 --swiglu --normalization RMSNorm "
      "--position-embedding-type rope --untie-embeddings-and-output-weights --disable-bias-linear "
      "--hidden-dropout 0 --attention-dropout 0.0 --vocab-size 32000 --make-vocab-size-divisible-by 1 "
      "--micro-batch-size 1 --global-batch-size 16 --tensor-model-parallel-size 2 "
      "--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 8 --sequence-parallel "
      "--use-distributed-optimizer --bf16 --use-flash-attn";
  ImportOptions o = gpus(8, "h100-80gb");
  o.gpus_per_node = 4;
  const Draft d = import_megatron(args, "dir/llama.args", o);
  CHECK(d.ignored.empty());
  CHECK(d.model ==
        "{preset: llama2-7b, layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn: 10880, vocab: 32000, "
        "max_positions: 4096, name: \"llama\"}");
  CHECK(to_yaml(d).substr(to_yaml(d).find("training:")) ==
        "training: {micro_batch: 1, global_batch: 16, seq_len: 4096, precision: bf16, optimizer: adamw, "
        "attention: flash, accumulate_grads: fused-fp32}\n"
        "parallel: {data: 2, tensor: 2, pipeline: 2, zero: 1, schedule: interleaved, virtual_stages: 2, "
        "sequence_parallel: true, bucket_buffers: in_place, grad_reduce: after_backward_in_place}\n"
        "cluster: {nodes: 2, gpus_per_node: 4}\n");
}

TEST_CASE("megatron: --microbatch-group-size-per-virtual-pipeline-stage groups the interleaved schedule") {
  const std::string base =
      "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
      "--vocab-size 1000 --make-vocab-size-divisible-by 1 --micro-batch-size 1 "
      "--global-batch-size 16 --bf16 --pipeline-model-parallel-size 2 ";
  const Draft d = import_megatron(base + "--num-layers-per-virtual-pipeline-stage 2 "
                                  "--microbatch-group-size-per-virtual-pipeline-stage 4", "g.args", gpus(2));
  CHECK(*Draft::get(d.parallel, "virtual_stages") == "2");
  CHECK(*Draft::get(d.parallel, "microbatch_group_size") == "4");
  CHECK(d.ignored.empty());
  // Without virtual stages there is nothing to group.
  CHECK_THROWS_WITH(import_megatron(base + "--microbatch-group-size-per-virtual-pipeline-stage 4",
                                    "g.args", gpus(2)),
                    Catch::Contains("--microbatch-group-size-per-virtual-pipeline-stage") &&
                        Catch::Contains("virtual pipeline stages"));
}

TEST_CASE("megatron: the uneven pipeline split's flags become the uneven split's keys") {
  const std::string base =
      "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
      "--vocab-size 1000 --make-vocab-size-divisible-by 1 --micro-batch-size 1 "
      "--global-batch-size 16 --bf16 --pipeline-model-parallel-size 2 ";
  const Draft d = import_megatron(base + "--decoder-first-pipeline-num-layers 3 "
                                  "--decoder-last-pipeline-num-layers 5", "u.args", gpus(2));
  CHECK(*Draft::get(d.parallel, "first_stage_blocks") == "3");
  CHECK(*Draft::get(d.parallel, "last_stage_blocks") == "5");
  CHECK(d.ignored.empty());
  // The embedding and the loss as layers: 8 + 2 = 10 over 2 stages of 5, 5 per virtual stage of
  // --num-layers-per-virtual-pipeline-stage 5 -> 1: no interleaving; 1 per stage -> 5 chunks.
  const Draft c = import_megatron(base + "--account-for-embedding-in-pipeline-split "
                                  "--account-for-loss-in-pipeline-split "
                                  "--num-layers-per-virtual-pipeline-stage 1", "c.args", gpus(2));
  CHECK(*Draft::get(c.parallel, "embedding_in_split") == "true");
  CHECK(*Draft::get(c.parallel, "loss_in_split") == "true");
  CHECK(*Draft::get(c.parallel, "virtual_stages") == "5");
  // arguments.py asks for --num-virtual-stages-per-pipeline-rank beside an uneven stage.
  CHECK_THROWS_WITH(import_megatron(base + "--decoder-first-pipeline-num-layers 2 "
                                    "--num-layers-per-virtual-pipeline-stage 2", "u.args", gpus(2)),
                    Catch::Contains("--num-virtual-stages-per-pipeline-rank"));
}

TEST_CASE("megatron: --overlap-param-gather overlaps the distributed optimizer's weight gather") {
  const std::string base =
      "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
      "--vocab-size 1000 --make-vocab-size-divisible-by 1 --micro-batch-size 1 "
      "--global-batch-size 16 --bf16 --overlap-param-gather";
  const Draft d = import_megatron(base + " --use-distributed-optimizer --overlap-grad-reduce", "og.args", gpus(8));
  CHECK(*Draft::get(d.parallel, "zero") == "1");
  CHECK(*Draft::get(d.parallel, "param_gather") == "overlapped");
  // Megatron-LM's arguments.py asserts the distributed optimizer beside it; so does the importer,
  // at the flag.
  CHECK_THROWS_WITH(import_megatron(base, "og.args", gpus(8)),
                    Catch::Contains("--overlap-param-gather") && Catch::Contains("--use-distributed-optimizer"));
  // ... and --overlap-grad-reduce (arguments.py at f2e5db4 and since).
  CHECK_THROWS_WITH(import_megatron(base + " --use-distributed-optimizer", "og.args", gpus(8)),
                    Catch::Contains("--overlap-param-gather") && Catch::Contains("--overlap-grad-reduce"));
}

TEST_CASE("megatron: gradients accumulate and reduce in fp32 under --bf16, as arguments.py forces") {
  const std::string base =
      "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
      "--vocab-size 1000 --make-vocab-size-divisible-by 1 --micro-batch-size 1 --global-batch-size 16 ";
  const auto acc = [&](const std::string& more) {
    const Draft d = import_megatron(base + more, "g.args", gpus(8));
    const std::string* v = Draft::get(d.training, "accumulate_grads");
    return v ? *v : std::string("(absent)");
  };
  CHECK(acc("--bf16") == "fused-fp32");
  CHECK(acc("--bf16 --fp8-format hybrid") == "fused-fp32");
  CHECK(acc("--fp16") == "(absent)");  // 16-bit gradients unless asked
  CHECK(acc("--fp16 --accumulate-allreduce-grads-in-fp32") == "fused-fp32");
  CHECK(acc("") == "(absent)");                                         // fp32 training: fp32 already
  CHECK(acc("--accumulate-allreduce-grads-in-fp32") == "(absent)");
  CHECK(acc("--bf16 --deepspeed") == "(absent)");  // DeepSpeed's engine owns the gradients
  CHECK(acc("--bf16 --grad-reduce-in-bf16") == "(absent)");  // Megatron-LM 2025: bf16 main_grad
}

TEST_CASE("megatron: without --overlap-grad-reduce each chunk's gradient buffer is reduced after the backward") {
  const std::string base =
      "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
      "--vocab-size 1000 --make-vocab-size-divisible-by 1 --micro-batch-size 1 --global-batch-size 16 --bf16 ";
  const auto reduce = [&](const std::string& more, std::int64_t n = 8) {
    const Draft d = import_megatron(base + more, "r.args", gpus(n));
    const std::string* v = Draft::get(d.parallel, "grad_reduce");
    return v ? *v : std::string("(overlapped)");
  };
  CHECK(reduce("") == "after_backward_in_place");  // Megatron-LM's default
  CHECK(reduce("--use-distributed-optimizer") == "after_backward_in_place");
  CHECK(reduce("--overlap-grad-reduce") == "(overlapped)");
  CHECK(reduce("--deepspeed") == "(overlapped)");  // DeepSpeed's engine reduces
  CHECK(reduce("", 1) == "(overlapped)");          // nothing to reduce
}

TEST_CASE("megatron: --deepspeed with pipeline stages selects DeepSpeed's pipeline engine") {
  // Megatron-DeepSpeed: 16 GPUs / (tensor 2 x pipeline 4) = data 2; the engine reduces gradients
  // in its own flattened buckets, so no in-place buffers.
  const std::string base =
      "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
      "--vocab-size 1000 --make-vocab-size-divisible-by 1 --micro-batch-size 1 "
      "--global-batch-size 16 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 "
      "--fp16 --deepspeed";
  const Draft d = import_megatron(base, "mds.args", gpus(16));
  CHECK(to_yaml(d).substr(to_yaml(d).find("parallel:")) ==
        "parallel: {data: 2, tensor: 2, pipeline: 4, schedule: 1f1b, pipeline_engine: deepspeed}\n");
  // --no-pipeline-parallel keeps Megatron's own pipeline (and its in-place buffers).
  const Draft m = import_megatron(base + " --no-pipeline-parallel", "mds.args", gpus(16));
  CHECK(!Draft::get(m.parallel, "pipeline_engine"));
  CHECK(*Draft::get(m.parallel, "bucket_buffers") == "in_place");
  // DeepSpeed's engine has no interleaved schedule: refused at --deepspeed.
  CHECK_THROWS_WITH(import_megatron(base + " --num-layers-per-virtual-pipeline-stage 1", "mds.args",
                                    gpus(16)),
                    Catch::Contains("interleaved"));
}

TEST_CASE("megatron: quoting, --flag=value and leading launcher words") {
  const std::string args =
      "python pretrain_gpt.py --num-layers='2' --hidden-size \"64\" --num-attention-heads 4 "
      "--seq-length 16 --vocab-size 100 --make-vocab-size-divisible-by 1";
  const Draft d = import_megatron(args, "q.args", gpus(1));
  CHECK(d.ignored == std::vector<std::string>{"python (q.args:1:1)", "pretrain_gpt.py (q.args:1:8)"});
  CHECK(d.model == "{preset: gpt3, layers: 2, hidden: 64, heads: 4, vocab: 100, max_positions: 16, name: \"q\"}");
  // No --bf16/--fp16: Megatron-LM trains in fp32; no --micro-batch-size: 1.
  CHECK(*Draft::get(d.training, "precision") == "fp32");
  CHECK(*Draft::get(d.training, "micro_batch") == "1");
}

TEST_CASE("deepspeed: batch, precision, ZeRO, offload, bucket in elements, optimizer") {
  // 64 = 4 x 2 x 8 GPUs; bucket 5e8 elements x 2 bytes (bf16) = 1e9 bytes.
  const std::string json = R"({
  "train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2,
  "bf16": {"enabled": true}, "wall_clock_breakdown": false,
  "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}, "reduce_bucket_size": 5e8},
  "optimizer": {"type": "Adam", "params": {"lr": 1e-4}}
})";
  ImportOptions o = gpus(8);
  o.model = "llama2-7b";
  o.seq_len = 1024;
  const Draft d = import_deepspeed(json, "ds.json", o);
  CHECK(to_yaml(d) ==
        "# Imported by trainsim import deepspeed from ds.json\n"
        "# ignored: optimizer.params.lr (ds.json:5:44), wall_clock_breakdown (ds.json:3:30)\n"
        "name: \"ds\"\n"
        "model: llama2-7b\n"
        "device: a100-80gb\n"
        "training: {micro_batch: 4, gradient_accumulation: 2, seq_len: 1024, precision: bf16, optimizer: adam, "
        "offload: {optimizer: cpu, parameters: none}}\n"
        "parallel: {data: 8, zero: 2, bucket_size: 1000000000B}\n");
}

TEST_CASE("deepspeed: bf16 at stage 0, or stage 1 asking fp32 accumulation, runs DeepSpeed's BF16_Optimizer") {
  // engine.py picks BF16_Optimizer there: fp32 gradient accumulation and all-reduce, master
  // weights and states sharded over the data ranks (accumulate_grads: fp32 with ZeRO-1).
  ImportOptions o = gpus(8);
  o.model = "gpt2";
  o.seq_len = 1024;
  const auto run = [&](const std::string& precision, const std::string& zero) {
    const Draft d = import_deepspeed(R"({"train_micro_batch_size_per_gpu": 1, )" + precision +
                                         R"(, "zero_optimization": )" + zero + "}",
                                     "b.json", o);
    const std::string* acc = Draft::get(d.training, "accumulate_grads");
    const std::string* z = Draft::get(d.parallel, "zero");
    return (acc ? *acc : std::string("-")) + " zero " + (z ? *z : std::string("0"));
  };
  const std::string bf16 = R"("bf16": {"enabled": true})";
  CHECK(run(bf16, R"({"stage": 0})") == "fp32 zero 1");
  CHECK(run(bf16 + R"(, "data_types": {"grad_accum_dtype": "fp32"})", R"({"stage": 1})") == "fp32 zero 1");
  CHECK(run(bf16, R"({"stage": 1})") == "- zero 1");  // the ZeRO optimizer, bf16 gradients
  CHECK(run(bf16 + R"(, "data_types": {"grad_accum_dtype": "fp32"})",
            R"({"stage": 1, "offload_optimizer": {"device": "cpu"}})") == "- zero 1");
  CHECK(run(bf16, R"({"stage": 2})") == "- zero 2");
  CHECK(run(R"("fp16": {"enabled": true})", R"({"stage": 0})") == "- zero 0");  // FP16_Optimizer
  // Stage 0 accumulating in bf16 runs only under DeepSpeed's pipeline engine: said in a note.
  const Draft p = import_deepspeed(R"({"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true},
"data_types": {"grad_accum_dtype": "bf16"}})", "p.json", o);
  CHECK(*Draft::get(p.parallel, "zero") == "1");
  CHECK(!Draft::get(p.training, "accumulate_grads"));
  CHECK_THROWS_WITH(import_deepspeed(R"({"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true},
"data_types": {"grad_accum_dtype": "int8"}})", "q.json", o),
                    Catch::Contains("q.json:2:") && Catch::Contains("grad_accum_dtype"));
}

TEST_CASE("deepspeed: the GPU count follows from the three batch figures when --gpus is absent") {
  // 96 / (3 x 4) = 8 GPUs.
  ImportOptions o;
  o.model = "resnet50";  // not a sequence model: no --seq-len needed
  o.device = "v100-32gb";
  const Draft d = import_deepspeed(
      R"({"train_batch_size": 96, "train_micro_batch_size_per_gpu": 3, "gradient_accumulation_steps": 4})",
      "b.json", o);
  CHECK(*Draft::get(d.parallel, "data") == "8");
  CHECK(*Draft::get(d.training, "precision") == "fp32");
  CHECK(!Draft::get(d.training, "seq_len"));
}

TEST_CASE("hf-trainer: TrainingArguments with an inline DeepSpeed config of auto values") {
  const std::string json = R"({"per_device_train_batch_size": 2, "gradient_accumulation_steps": 8,
"bf16": true, "gradient_checkpointing": true, "optim": "adamw_torch", "fsdp": "", "seed": 42,
"deepspeed": {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3}}})";
  ImportOptions o = gpus(4);
  o.model = "llama2-7b";
  o.seq_len = 2048;
  const Draft d = import_hf_trainer(json, "args.json", o);
  CHECK(to_yaml(d) ==
        "# Imported by trainsim import hf-trainer from args.json\n"
        "# note: DeepSpeed config args.json mapped with these arguments\n"
        "# ignored: seed (args.json:2:83)\n"
        "name: \"args\"\n"
        "model: llama2-7b\n"
        "device: a100-80gb\n"
        "training: {micro_batch: 2, gradient_accumulation: 8, seq_len: 2048, precision: bf16, optimizer: adamw, "
        "recompute: full}\n"
        "parallel: {data: 4, zero: 3}\n");
}

TEST_CASE("torchtitan: flavor to preset, degrees, pipeline micro-batches, checkpointing") {
  // Local batch 8 split into pipeline micro-batches of 2; global 8 x data 2 = 16. Replicas
  // without FSDP beside tensor and pipeline parallelism: torchtitan applies no mixed precision.
  // The split: 80 blocks + embedding + output = 82 over 4 stages, 20 each and the first two one
  // more: 21 - 1, 21, 20, 20 - 1 blocks; a llama block is 6 layers after the embedding (layer 0),
  // so the stages start at layers 1 + 6 x (20, 41, 61).
  const std::string toml = R"([model]
name = "llama3"
flavor = "70B"
[training]
local_batch_size = 8
seq_len = 4096
[parallelism]
data_parallel_shard_degree = 1
data_parallel_replicate_degree = 2
tensor_parallel_degree = 8
pipeline_parallel_degree = 4
pipeline_parallel_microbatch_size = 2
pipeline_parallel_schedule = "GPipe"
[activation_checkpoint]
mode = "full"
[metrics]
log_freq = 10
)";
  const Draft d = import_torchtitan(toml, "t.toml", gpus(64, "h100-80gb"));
  CHECK(to_yaml(d) ==
        "# Imported by trainsim import torchtitan from t.toml\n"
        "# note: mixed precision is off with tensor or pipeline parallelism without FSDP (torchtitan's "
        "maybe_enable_amp): fp32\n"
        "# note: pipeline split as torchtitan's generate_llm_fqn_per_model_part (2025): blocks per stage 20 21 "
        "20 19\n"
        "# ignored: metrics.log_freq (t.toml:17:1)\n"
        "name: \"t\"\n"
        "model: llama3-70b\n"
        "device: h100-80gb\n"
        "training: {micro_batch: 2, global_batch: 16, seq_len: 4096, precision: fp32, optimizer: adamw, "
        "recompute: full, attention: flash, optimizer_impl: fused, optimizer_states: lazy, modules: eager, "
        "loss_chunks: 1}\n"
        "parallel: {data: 2, tensor: 8, pipeline: 4, schedule: gpipe, pipeline_engine: pytorch, sequence_parallel: true, "
        "split_points: [121, 247, 367]}\n");
}

TEST_CASE("torchtitan: Interleaved1F1B runs on the pytorch engine, which derives PyTorch's rounds") {
  // ScheduleInterleaved1F1B: n micro-batches in max(1, n / pipeline) rounds of n / rounds.
  const auto import = [](int local, int pipeline) {
    const std::string toml = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = " +
                             std::to_string(local) + "\n[parallelism]\npipeline_parallel_degree = " +
                             std::to_string(pipeline) + "\npipeline_parallel_schedule = \"Interleaved1F1B\"\n";
    return import_torchtitan(toml, "i.toml", gpus(pipeline, "h100-80gb"));
  };
  for (int local : {8, 6, 10, 2}) {  // 2 rounds of 4; 1 of 6; 2 of 5; 1 of 2, shorter than the pipeline
    const Draft d = import(local, 4);
    CHECK(*Draft::get(d.parallel, "pipeline_engine") == "pytorch");
    CHECK(!Draft::get(d.parallel, "microbatch_group_size"));
  }
  // 9 micro-batches in 2 rounds: PyTorch refuses.
  CHECK_THROWS_WITH(import(9, 4), Catch::Contains("multiple of its 2 rounds") &&
                                      Catch::Contains("i.toml:8:30"));  // at the schedule
}

TEST_CASE("torchtitan: its defaults, selective checkpointing of every 2nd block, seq_len 2048") {
  // No [activation_checkpoint]: mode "selective", option "2": llama3-8b's 32 blocks over
  // pipeline 2 = 16 per stage, every 2nd: 8 recomputed. No [training]: local batch 8, seq 2048.
  const std::string toml = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
                           "[parallelism]\npipeline_parallel_degree = 2\n";
  const Draft d = import_torchtitan(toml, "d.toml", gpus(2, "h100-80gb"));
  CHECK(to_yaml(d).substr(to_yaml(d).find("training:")) ==
        "training: {micro_batch: 1, global_batch: 8, seq_len: 2048, precision: fp32, optimizer: adamw, "
        "recompute: full, recompute_layers: 8, attention: flash, optimizer_impl: fused, optimizer_states: lazy, "
        "modules: eager, loss_chunks: 1}\n"
        "parallel: {data: 1, tensor: 1, pipeline: 2, schedule: 1f1b, pipeline_engine: pytorch}\n");
}

TEST_CASE("to_yaml: control characters from the file are escaped, so the YAML stays valid") {
  // A quoted option name holding a newline would otherwise end the comment line.
  const Draft d = import_megatron("'--odd\nname' --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
                                  "--seq-length 16 --vocab-size 100 --make-vocab-size-divisible-by 1",
                                  "c.args", gpus(1));
  CHECK(to_yaml(d).find("# ignored: --odd\\x0Aname (c.args:1:1)\n") != std::string::npos);
  CHECK(quote("a\"b\\c\td") == "\"a\\\"b\\\\c\\x09d\"");
}

TEST_CASE("hf-trainer: --model config.json is written relative to -o's folder, absolute on standard output") {
  // Tests run from the source tree: models/hf/gpt2/config.json seen from out/ is ../models/...
  ImportOptions o = gpus(1);
  o.seq_len = 128;
  o.model = "models/hf/gpt2/config.json";
  o.output = "out/scenario.yaml";
  Draft d = import_hf_trainer("{}", "a.json", o);
  CHECK(d.model == "{hf_config: \"../models/hf/gpt2/config.json\"}");
  o.output.clear();
  d = import_hf_trainer("{}", "a.json", o);
  CHECK(d.model == "{hf_config: " + quote(std::filesystem::absolute("models/hf/gpt2/config.json").string()) + "}");
}

TEST_CASE("hf-trainer: bitsandbytes' and Adafactor's optim names map to their optimizers") {
  // transformers' OptimizerNames -> training.optimizer (docs/import.md).
  const std::pair<const char*, const char*> names[] = {{"adamw_bnb_8bit", "adamw-8bit"},
                                                       {"adamw_8bit", "adamw-8bit"},
                                                       {"paged_adamw_32bit", "paged-adamw"},
                                                       {"paged_adamw_8bit", "paged-adamw-8bit"},
                                                       {"adafactor", "adafactor"}};
  for (const auto& [optim, mapped] : names) {
    ImportOptions o = gpus(1);
    o.model = "llama2-7b";
    o.seq_len = 512;
    const Draft d = import_hf_trainer(std::string(R"({"optim": ")") + optim + "\"}", "a.json", o);
    CHECK(*Draft::get(d.training, "optimizer") == mapped);
  }
}

TEST_CASE("hf-trainer: the AdamW names select the optimizer's implementation") {
  // adamw_hf is transformers.AdamW (a loop over the tensors), the fused names fused kernels;
  // adamw_torch leaves torch.optim's default (foreach), so no key is written.
  const std::pair<const char*, const char*> names[] = {
      {"adamw_hf", "for-loop"}, {"adamw_torch_fused", "fused"}, {"adamw_apex_fused", "fused"}};
  for (const auto& [optim, impl] : names) {
    ImportOptions o = gpus(1);
    o.model = "llama2-7b";
    o.seq_len = 512;
    const Draft d = import_hf_trainer(std::string(R"({"optim": ")") + optim + "\"}", "a.json", o);
    CHECK(*Draft::get(d.training, "optimizer") == std::string("adamw"));
    REQUIRE(Draft::get(d.training, "optimizer_impl"));
    CHECK(*Draft::get(d.training, "optimizer_impl") == std::string(impl));
  }
  ImportOptions o = gpus(1);
  o.model = "llama2-7b";
  o.seq_len = 512;
  CHECK_FALSE(Draft::get(import_hf_trainer(R"({"optim": "adamw_torch"})", "a.json", o).training,
                         "optimizer_impl"));
}

TEST_CASE("torchtitan's pipeline splits, 2024 and 2025, and explicit split points") {
  using importers::split_2024;
  using importers::split_fqn;
  // generate_split_points (2024): Llama 3.1 405B's 126 blocks over 8 and 16 parts.
  CHECK(split_2024(126, 8) == std::vector<std::int64_t>{15, 16, 16, 16, 16, 16, 16, 15});
  CHECK(split_2024(126, 16) ==
        std::vector<std::int64_t>{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7});
  CHECK(split_2024(32, 4) == std::vector<std::int64_t>{8, 8, 8, 8});
  // generate_llm_fqn_per_model_part (2025): 32 + 1 + 1 = 34 over 4: 9 - 1, 9, 8, 8 - 1.
  std::string why;
  CHECK(split_fqn(32, 4, 1, 1, &why) == std::vector<std::int64_t>{8, 9, 8, 7});
  CHECK(split_fqn(3, 2, 2, 2, &why) == std::vector<std::int64_t>{2, 1});  // its docstring's example
  CHECK(split_fqn(2, 4, 1, 1, &why) == std::vector<std::int64_t>{0, 1, 1, 0});  // accepted, as torchtitan does
  CHECK(split_fqn(1, 4, 1, 1, &why).empty());                                  // 3 over 4: refused
  CHECK(why.find("cannot lay 1 blocks") != std::string::npos);
  // Parts of no block: the embedding alone (layer 0), the norm and output alone (after the 32
  // blocks of 6 layers, from layer 193).
  CHECK(importers::preset_split_points("llama3-8b", {0, 16, 16}) == std::vector<std::int64_t>{1, 97});
  CHECK(importers::preset_split_points("llama3-8b", {16, 16, 0}) == std::vector<std::int64_t>{97, 193});
  CHECK(importers::preset_split_points("llama3-8b", {16, 16}).empty());  // trainsim's even split

  const auto import = [](const std::string& layout, const std::string& extra) {
    const std::string toml = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[" + layout +
                             "]\npipeline_parallel_degree = 4\npipeline_parallel_schedule = \"Interleaved1F1B\"\n" +
                             extra;
    return import_torchtitan(toml, "s.toml", gpus(4, "h100-80gb"));
  };
  const auto points = [](const Draft& d) {
    const std::string* v = Draft::get(d.parallel, "split_points");
    return v ? *v : std::string("(even)");
  };
  // 2024 ([experimental]): 32 blocks over 8 parts of 4: trainsim's even split.
  CHECK(points(import("experimental", "")) == "(even)");
  // 2025 ([parallelism]): 34 over 8 = 4 and two parts of 5: 4, 5, 4, 4, 4, 4, 4, 3 blocks.
  CHECK(points(import("parallelism", "")) == "[25, 55, 79, 103, 127, 151, 175]");
  // Explicit split points; layers_per_stage sets the parts (34 / 5 -> 7, not a multiple of 4).
  CHECK(points(import("parallelism", "pipeline_parallel_split_points = [\"layers.4\", \"layers.8\", \"layers.12\", "
                                     "\"layers.16\", \"layers.20\", \"layers.24\", \"layers.30\"]\n")) ==
        "[25, 49, 73, 97, 121, 145, 181]");
  CHECK_THROWS_WITH(import("parallelism", "pipeline_parallel_layers_per_stage = 5\n"),
                    Catch::Contains("7 stages for the pipeline degree 4") && Catch::Contains("s.toml:7:"));
  const Draft twelve = import("parallelism", "pipeline_parallel_layers_per_stage = 3\n");  // 12 parts
  CHECK(*Draft::get(twelve.parallel, "virtual_stages") == "3");
}

TEST_CASE("torchtitan: async TP overlaps the sequence-parallel collectives with their GEMMs") {
  const auto import = [](const std::string& section, int tp) {
    const std::string toml = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[" + section +
                             "]\ntensor_parallel_degree = " + std::to_string(tp) +
                             "\nenable_async_tensor_parallel = true\n";
    const Draft d = import_torchtitan(toml, "a.toml", gpus(8, "h100-80gb"));
    const std::string* v = Draft::get(d.parallel, "tp_comm_overlap");
    return v ? *v : std::string("(absent)");
  };
  CHECK(import("parallelism", 8) == "true");
  CHECK(import("training", 8) == "true");      // the 2024 layout
  CHECK(import("parallelism", 1) == "(absent)");  // no tensor parallelism: nothing to overlap
}

TEST_CASE("torchtitan: accumulation over a pipeline steps one schedule per local batch") {
  // global 64 over data 2 x local 8: 4 local batches per step, each a schedule of 8 / 2 = 4
  // micro-batches; 16 micro-batches per step.
  const std::string toml = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 8\n"
                           "global_batch_size = 64\n[parallelism]\npipeline_parallel_degree = 2\n"
                           "pipeline_parallel_microbatch_size = 2\n";
  const Draft d = import_torchtitan(toml, "g.toml", gpus(4, "h100-80gb"));
  CHECK(*Draft::get(d.parallel, "microbatches_per_schedule") == "4");
  CHECK(*Draft::get(d.training, "global_batch") == "64");
  CHECK(*Draft::get(d.training, "micro_batch") == "2");
  // Without accumulation: one schedule per step, the key left out.
  const std::string one = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 8\n"
                          "[parallelism]\npipeline_parallel_degree = 2\n";
  CHECK(!Draft::get(import_torchtitan(one, "o.toml", gpus(4, "h100-80gb")).parallel, "microbatches_per_schedule"));
}
