// Sharded, context- and expert-parallel and low-precision configs: each importer maps them to
// parallel.fsdp, parallel.context, parallel.expert and the precision its framework runs
// (docs/import.md), by the framework's own rules.
#include <algorithm>

#include <catch2/catch.hpp>

#include "tests/importers/import_helpers.hpp"

using namespace trainsim;
using namespace trainsim::importers;

namespace {
using testing::error_of;
using testing::parallel;
using testing::training;
ImportOptions gpus(std::int64_t n) { return testing::gpus(n, "h100-80gb"); }
const std::string kLlama8b = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n";
}  // namespace

TEST_CASE("torchtitan: FSDP over the GPUs left, HSDP with replicas, units as apply_fsdp makes them") {
  // 16 GPUs / replicate 2 = shard 8: HSDP, shard groups of 8. fully_shard's MixedPrecisionPolicy
  // (bf16 gathers over fp32 shards) is trainsim's bf16 under FSDP; the embedding and
  // [norm, output] are units of their own (torchtitan since 2025-07-28).
  const std::string toml = kLlama8b +
                           "[training]\nlocal_batch_size = 2\nseq_len = 8192\n"
                           "[parallelism]\ndata_parallel_replicate_degree = 2\n"
                           "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"op\"\n";
  const Draft d = import_torchtitan(toml, "h.toml", gpus(16));
  CHECK(to_yaml(d) ==
        "# Imported by trainsim import torchtitan from h.toml\n"
        "# note: fsdp: the [norm, output] unit is resharded after forward like the blocks (torchtitan keeps it "
        "gathered; its backward follows at once)\n"
        "name: \"h\"\n"
        "model: llama3-8b\n"
        "device: h100-80gb\n"
        "training: {micro_batch: 2, global_batch: 32, seq_len: 8192, precision: bf16, optimizer: adamw, "
        "recompute: selective-op, attention: flash, optimizer_impl: fused, optimizer_states: lazy, "
        "modules: eager, loss_chunks: 1}\n"
        "parallel: {data: 16, tensor: 1, pipeline: 1, fsdp: {shard_size: 8, separate_outer_layers: true}}\n");
}

TEST_CASE("torchtitan: the dtype each setup trains in (maybe_enable_amp, training.dtype, float8)") {
  // One GPU: torch.autocast over fp32 weights.
  CHECK(training(import_torchtitan(kLlama8b, "a.toml", gpus(1)), "precision") == "amp-bf16");
  // DDP replicas alone: autocast too.
  CHECK(training(import_torchtitan(kLlama8b + "[parallelism]\ndata_parallel_shard_degree = 1\n"
                                   "data_parallel_replicate_degree = 4\n", "a.toml", gpus(4)),
                 "precision") == "amp-bf16");
  // A bf16 model: weights, gradients and states all bf16.
  CHECK(training(import_torchtitan(kLlama8b + "[training]\ndtype = \"bfloat16\"\n", "a.toml", gpus(8)),
                 "precision") == "bf16-true");
  // fp32 gathers under FSDP.
  CHECK(training(import_torchtitan(kLlama8b + "[training]\nmixed_precision_param = \"float32\"\n", "a.toml", gpus(8)),
                 "precision") == "fp32");
  // torchao's Float8Linear, by converter (and by the older [float8] table).
  CHECK(training(import_torchtitan("[model]\nflavor = \"8B\"\nconverters = [\"float8\"]\n", "a.toml", gpus(8)),
                 "precision") == "fp8");
  CHECK(training(import_torchtitan(kLlama8b + "[float8]\nenable_float8_linear = true\n", "a.toml", gpus(8)),
                 "precision") == "fp8");
}

TEST_CASE("torchtitan: context parallelism joins the FSDP group, offload, resharding, compile, optimizer") {
  // 8 GPUs / context 4 = shard 2; FSDP shards over shard x context = 8 ranks.
  const std::string toml = kLlama8b +
                           "[training]\nenable_cpu_offload = true\n"
                           "[parallelism]\ncontext_parallel_degree = 4\nfsdp_reshard_after_forward = \"never\"\n"
                           "[optimizer]\nimplementation = \"foreach\"\n"
                           "[compile]\nenable = true\ncomponents = [\"model\", \"loss\"]\n";
  const Draft d = import_torchtitan(toml, "c.toml", gpus(8));
  CHECK(parallel(d, "data") == "2");
  CHECK(parallel(d, "context") == "4");
  CHECK(parallel(d, "context_attention") == "allgather");  // torchtitan's default rotate method
  CHECK(parallel(d, "fsdp") == "{reshard_after_forward: false, separate_outer_layers: true, offload: cpu}");
  CHECK(training(d, "optimizer_impl") == "foreach");
  // The optimizer in backward on one GPU (trainsim plays it on one data rank only).
  const Draft one = import_torchtitan(kLlama8b + "[optimizer]\nearly_step_in_backward = true\n", "b.toml", gpus(1));
  CHECK(training(one, "optimizer_in_backward") == "true");
  CHECK(training(one, "optimizer_states") == "(absent)");  // refused beside optimizer_in_backward
  CHECK(testing::error_of([] {
          import_torchtitan(kLlama8b + "[optimizer]\nearly_step_in_backward = true\n", "b.toml", gpus(8));
        }) == "b.toml:5:26: optimizer.early_step_in_backward: the optimizer step in backward over several data "
              "ranks is not supported by trainsim yet");
  CHECK(training(d, "compile") == "true");
  // A pipeline keeps the gathered blocks from forward to backward by default.
  const Draft p = import_torchtitan(kLlama8b + "[parallelism]\npipeline_parallel_degree = 2\n", "p.toml", gpus(8));
  CHECK(parallel(p, "fsdp") == "{reshard_after_forward: false, separate_outer_layers: true}");
  CHECK(parallel(p, "data") == "4");
  // "alltoall" passes K and V shard by shard: the ring.
  CHECK(parallel(import_torchtitan(kLlama8b + "[parallelism]\ncontext_parallel_degree = 2\n"
                                   "context_parallel_rotate_method = \"alltoall\"\n", "r.toml", gpus(2)),
                 "context_attention") == "ring");
}

TEST_CASE("torchtitan: the 2024 layout (degrees in [training] and [experimental]) and its defaults") {
  // torchtitan 9dec370's llama3_8b.toml layout: `batch_size`, the data degrees in [training],
  // the pipeline and context degrees in [experimental], `fused = false` AdamW (foreach), the
  // embedding and head in the root unit. This is the setup of
  // scenarios/validation/torchtitan_h100_fsdp.yaml (tests/cli/import_round_trip.sh plays both).
  const std::string toml = kLlama8b +
                           "[training]\nbatch_size = 2\nseq_len = 8192\ndata_parallel_replicate_degree = 1\n"
                           "data_parallel_shard_degree = -1\ntensor_parallel_degree = 1\ncompile = false\n"
                           "[experimental]\ncontext_parallel_degree = 1\npipeline_parallel_degree = 1\n"
                           "[checkpoint]\nenable_checkpoint = false\n"
                           "[activation_checkpoint]\nmode = 'selective'\nselective_ac_option = 'op'\n";
  const Draft d = import_torchtitan(toml, "old.toml", gpus(8));
  CHECK(to_yaml(d) ==
        "# Imported by trainsim import torchtitan from old.toml\n"
        "# note: degrees in [training]: torchtitan before 2025-03, whose AdamW was foreach (fused = false)\n"
        "name: \"old\"\n"
        "model: llama3-8b\n"
        "device: h100-80gb\n"
        "training: {micro_batch: 2, global_batch: 16, seq_len: 8192, precision: bf16, optimizer: adamw, "
        "recompute: selective-op, attention: flash, optimizer_impl: foreach, optimizer_states: lazy, "
        "modules: eager, loss_chunks: 1}\n"
        "parallel: {data: 8, tensor: 1, pipeline: 1, fsdp: true}\n");
  // A checkpoint folder may hold the states before the first step: eager.
  const Draft c = import_torchtitan(kLlama8b + "[checkpoint]\nenable = true\n", "k.toml", gpus(8));
  CHECK(training(c, "optimizer_states") == "(absent)");
}

TEST_CASE("hf-trainer: bf16 / fp16 are autocast, FSDP as Accelerate wraps it") {
  ImportOptions o = gpus(16);
  o.model = "llama2-7b";
  o.seq_len = 2048;
  // FULL_SHARD, FSDP1's FlatParameter, Accelerate's MixedPrecision in the autocast dtype.
  Draft d = import_hf_trainer(R"({"bf16": true, "fsdp": "full_shard auto_wrap"})", "a.json", o);
  CHECK(training(d, "precision") == "amp-bf16");
  CHECK(parallel(d, "fsdp") == "{param_dtype: bf16, reduce_dtype: bf16, flat_parameter: true}");
  // HYBRID_SHARD shards within a node (8 GPUs) and replicates across; _HYBRID_SHARD_ZERO2 also
  // keeps the gathered parameters from forward to backward; FSDP2 has no FlatParameter.
  d = import_hf_trainer(R"({"fp16": true, "fsdp": ["hybrid_shard_zero2", "offload"], "fsdp_config": {"version": 2}})",
                        "a.json", o);
  CHECK(training(d, "precision") == "amp-fp16");
  CHECK(parallel(d, "fsdp") ==
        "{shard_size: 8, reshard_after_forward: false, param_dtype: fp16, reduce_dtype: fp16, offload: cpu}");
  // fp32 SHARD_GRAD_OP; NO_SHARD is DDP.
  CHECK(parallel(import_hf_trainer(R"({"fsdp": "shard_grad_op"})", "a.json", o), "fsdp") ==
        "{reshard_after_forward: false, flat_parameter: true}");
  CHECK(parallel(import_hf_trainer(R"({"fsdp": "no_shard"})", "a.json", o), "fsdp") == "(absent)");
}

TEST_CASE("megatron: MoE, context parallelism and FP8 map to experts, parallel.context and fp8") {
  // Mixtral 8x7B's shape with --num-experts 8, top-2: 128 GPUs / (tensor 2 x pipeline 4 x
  // context 2) = data 8; experts split over 8 of the data x context ranks.
  const std::string args =
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --ffn-hidden-size 14336\n"
      "--group-query-attention --num-query-groups 8 --swiglu --normalization RMSNorm\n"
      "--position-embedding-type rope --untie-embeddings-and-output-weights --disable-bias-linear\n"
      "--hidden-dropout 0 --attention-dropout 0 --vocab-size 32000 --seq-length 8192\n"
      "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 --context-parallel-size 2\n"
      "--expert-model-parallel-size 8 --num-experts 8 --moe-router-topk 2 --cp-comm-type all_gather\n"
      "--sequence-parallel --bf16 --fp8-format hybrid --use-flash-attn\n";
  const Draft d = import_megatron(args, "mix.args", gpus(128));
  CHECK(d.model ==
        "{preset: llama2-7b, layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, experts: 8, top_k: 2, "
        "vocab: 32000, max_positions: 8192, name: \"mix\"}");
  CHECK(training(d, "precision") == "fp8");
  CHECK(parallel(d, "data") == "8");
  CHECK(parallel(d, "context") == "2");
  CHECK(parallel(d, "context_attention") == "allgather");
  CHECK(parallel(d, "expert") == "8");
  // No --overlap-grad-reduce, but the reduction after the backward is not modelled beside
  // expert parallelism: overlapped, with a note.
  CHECK(parallel(d, "grad_reduce") == "(absent)");
  CHECK(std::any_of(d.notes.begin(), d.notes.end(),
                    [](const std::string& n) { return n.find("--overlap-grad-reduce") != std::string::npos; }));
}

TEST_CASE("deepspeed: ZeRO-3's stage3_* fetch settings map to parallel.zero3, \"auto\" to DeepSpeed's defaults") {
  ImportOptions o = gpus(16);
  o.model = "llama2-7b";
  o.seq_len = 2048;
  const Draft d = import_deepspeed(
      R"({"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": 5e8,
"stage3_max_live_parameters": 1e9, "stage3_param_persistence_threshold": "auto"}})",
      "z.json", o);
  CHECK(parallel(d, "zero3") == "{prefetch_bucket_size: 500000000, max_live_parameters: 1000000000}");
  CHECK(d.notes.front().rfind("stage3_param_persistence_threshold \"auto\"", 0) == 0);
  // Below stage 3 the keys have no effect: listed as ignored.
  const Draft two = import_deepspeed(
      R"({"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 2, "stage3_max_live_parameters": 1e9}})",
      "z.json", o);
  CHECK(parallel(two, "zero3") == "(absent)");
  CHECK(two.ignored.size() == 1);
}
