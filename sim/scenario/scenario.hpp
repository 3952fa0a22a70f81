#pragma once
// A scenario is everything one simulated training step needs, validated and in plain structs.
// After load_scenario() nothing touches YAML again.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/model.hpp"
#include "sim/core/error.hpp"
#include "sim/cost/cost.hpp"
#include "sim/cost/jitter.hpp"
#include "sim/hw/device.hpp"
#include "sim/scenario/finetune.hpp"
#include "sim/scenario/precision.hpp"

namespace YAML {
class Node;
}

namespace trainsim::scenario {

// selective: Megatron's (the attention core); selective_op: torchtitan's op-level policy (every
// block checkpointed, the outputs of its odd-numbered mm and of SDPA kept; pass_recompute.cpp).
enum class Recompute { none, selective, full, selective_op };
enum class Schedule { gpipe, one_f_one_b, interleaved };
// `parallel.pipeline_engine`: which runtime plays the pipeline schedule (pass_pipeline.cpp).
// - megatron: Megatron-LM's schedules; a stage posts its receive when the unit needing it starts
//   and a finished send does not hold the sender (transfers overlap the next unit's compute).
// - deepspeed: DeepSpeed's PipelineEngine (deepspeed/runtime/pipe/schedule.py TrainSchedule,
//   1F1B order): every SendActivation/RecvActivation/SendGrad/RecvGrad is blocking and paired
//   with its neighbour's, so a transfer starts when both stages reach it and holds both until
//   it ends; the stages advance in step with their neighbours.
// - pytorch: torch.distributed.pipelining (torchtitan): transfers as megatron's; its schedules
//   order units their own way (schedule.hpp): GPipe's backwards oldest first, Interleaved1F1B's
//   micro-batches in max(1, m / pipeline) rounds (shorter than the pipeline when m < pipeline)
//   and no all-forward warm-up when m = pipeline.
enum class PipelineEngine { megatron, deepspeed, pytorch };
std::string_view to_string(PipelineEngine e);
// `parallel.p2p`: how the megatron engine's stages exchange activations and gradients
// (sim/parallel/pipeline_sync.hpp).
// - async: each transfer starts when its sending unit ends and overlaps both stages' compute.
// - sync: Megatron-LM 2021's p2p_communication._communicate: each exchange batches the stage's
//   sends and receives of that point of the schedule, waits for them and synchronizes the
//   device, so the stage computes again only once its neighbours reached the same exchange and
//   every transfer of it ended.
enum class P2pMode { async, sync };
std::string_view to_string(P2pMode m);
// `parallel.grad_reduce`: when the data-parallel gradient reduction (ZeRO 0/1) runs
// (sim/scenario/grad_reduce_read.hpp, sim/parallel/pass_data.cpp).
// - overlapped: PyTorch DDP's buckets, each reduced once its gradients are ready, overlapping the
//   rest of the backward.
// - after_backward: Megatron-LM's local DDP (megatron/model/distributed.py, --DDP-impl local,
//   without contiguous buffers): once the schedule returned, each model chunk's gradients are
//   flattened into one buffer, scaled, all-reduced and copied back, chunk after chunk.
// - after_backward_in_place: Megatron-Core's DDP without --overlap-grad-reduce
//   (megatron/core/distributed/distributed_data_parallel.py: one bucket per gradient buffer
//   then): once the schedule returned, each model chunk's whole contiguous gradient buffer is
//   all-reduced (reduce-scattered under the distributed optimizer) in place, chunk after chunk.
enum class GradReduce { overlapped, after_backward, after_backward_in_place };
std::string_view to_string(GradReduce g);
// `parallel.param_gather`: when ZeRO-1/2's all-gather of the updated weights runs
// (sim/scenario/grad_reduce_read.hpp, sim/parallel/pass_param_gather.cpp).
// - after_step: one all-gather of the stage's weights once the optimizer step ended (DeepSpeed).
// - overlapped: Megatron-Core's --overlap-param-gather (megatron/core/optimizer/
//   distrib_optimizer.py): one all-gather per gradient bucket, in forward order, each waited
//   for by the forward pre-hook of the first module that reads it, the next one dispatched then;
//   they overlap the next step's first forward.
enum class ParamGather { after_step, overlapped };
std::string_view to_string(ParamGather g);
// training.accumulate_grads: how each micro-batch's weight gradients join the step's gradients
// (sim/scenario/accumulate_read.hpp, sim/parallel/pass_accumulate.cpp).
// fused_fp32 ("fused-fp32"): fused into an fp32 gradient buffer (Megatron-Core's main_grad).
enum class AccumulateGrads { fused, autograd, fp32, fused_fp32 };
std::string_view to_string(AccumulateGrads a);
// Where a data-parallel reduction bucket's gradients sit while it is reduced
// (`parallel.bucket_buffers`).
// - transient: a flat buffer of the bucket's gradients allocated when its reduction starts and
//   freed when it ends (the copy DeepSpeed's engine flattens a bucket into for its all-reduce).
// - in_place: no buffer; the reduction runs on the gradients' own memory, as in Megatron-LM's
//   contiguous gradient buffer (its buckets are views into it) or PyTorch DDP with
//   gradient_as_bucket_view.
// - persistent: PyTorch DDP's default (gradient_as_bucket_view=False): the buckets are flat
//   copies of the gradients allocated when the model is wrapped and kept, so a device holds its
//   gradients twice; booked before the step as gradients (a model state).
// in_place and persistent apply where a device holds whole gradients (Scenario::buckets_kept);
// elsewhere the buffer stays transient.
enum class BucketBuffers { transient, in_place, persistent };
std::string_view to_string(BucketBuffers b);
// parallel.context_attention: how context-parallel ranks exchange keys and values.
enum class ContextAttention { ring, allgather };
std::string_view to_string(ContextAttention a);
// The three parallel dimensions, as named in `cluster.placement` (context ranks sit inside data).
enum class ParallelDim { tensor, pipeline, data };

std::string_view to_string(Recompute r);
std::string_view to_string(Schedule s);
std::string_view to_string(ParallelDim d);

// Where a model state lives (ZeRO-Offload): on the GPU, or in host memory with PCIe copies.
enum class OffloadTarget { none, cpu };
std::string_view to_string(OffloadTarget t);

// `training.offload`. optimizer: optimizer states (and the fp32 gradients they consume) in host
// memory, the optimizer step on the CPU (ZeRO-Offload). parameters: 16-bit weights in host
// memory, fetched per layer (ZeRO-Infinity; needs parallel.zero 3 and optimizer offload).
struct OffloadSpec {
  OffloadTarget optimizer = OffloadTarget::none;
  OffloadTarget parameters = OffloadTarget::none;
  bool optimizer_on_cpu() const { return optimizer == OffloadTarget::cpu; }
  bool parameters_on_cpu() const { return parameters == OffloadTarget::cpu; }
};

struct TrainingSpec {
  std::int64_t micro_batch = 1;            // samples per micro-batch per data-parallel rank
  std::int64_t gradient_accumulation = 1;  // micro-batches per step per data-parallel rank
  std::int64_t global_batch = 1;           // micro_batch x gradient_accumulation x data
  std::int64_t seq_len = 0;                // tokens per sample (0 for image models)
  Precision precision = Precision::bf16;
  Optimizer optimizer = Optimizer::adamw;
  // training.optimizer_in_backward: each parameter's update runs in its gradient's
  // post-accumulate hook and frees the gradient there (torchtune optimizer_in_bwd).
  bool optimizer_in_backward = false;
  // training.optimizer_impl; absent: default_optimizer_impl (effective_optimizer_impl()).
  std::optional<OptimizerImpl> optimizer_impl;
  ZeroGrad zero_grad = ZeroGrad::set_to_none;  // training.zero_grad
  // training.optimizer_states: lazy — torch.optim creates each parameter's states in the first
  // optimizer.step() (`_init_group`), among the segments the first step's activations left in
  // the caching allocator, and the step reported is the second (sim/exec/allocator_replay.cpp,
  // docs/finetuning.md, "Optimizer states created in the first step"); eager (false, the default):
  // they are booked with the model states before the step, as Megatron-LM and DeepSpeed do.
  bool lazy_optimizer_states = false;
  // training.softmax_saves_input: the standard attention's softmax keeps its input, the
  // [a, s, s] scores, for backward beside its output, as PyTorch's autograd did before 1.11
  // (`_softmax_backward_data(grad, result, dim, self)`; sim/parallel/softmax_input.cpp).
  bool softmax_saves_input = false;
  // training.keep_logits: the training loop keeps its reference to the shifted fp32 logits the
  // loss read (transposed) until the next micro-batch's forward replaces it, as torchtune's
  // recipes did before pytorch/torchtune#1235 (sim/parallel/pass_loss.cpp).
  bool keep_logits = false;
  // training.model_init: what building the model on the GPU leaves in the caching allocator
  // before the step (sim/parallel/pass_load.cpp). cloned_layer: the framework builds one
  // transformer block, deep-copies it for every block and drops it, so that block's parameter
  // tensors leave their blocks cached (torchtune's TransformerDecoder `_get_clones` until
  // mid-2024). none: the model states appear as flat buffers.
  enum class ModelInit { none, cloned_layer };
  ModelInit model_init = ModelInit::none;
  OptimizerImpl effective_optimizer_impl() const {
    return optimizer_impl ? *optimizer_impl : default_optimizer_impl(precision, optimizer);
  }
  // training.optimizer_block: elements per quantization block of 8-bit or 4-bit optimizer
  // states (one fp32 absmax or scale each); absent: kStateBlock8bit, or kStateBlock4bit for
  // adamw-4bit (effective_optimizer_block()).
  std::optional<std::int64_t> optimizer_block;
  std::int64_t effective_optimizer_block() const {
    return optimizer_block.value_or(four_bit(optimizer) ? kStateBlock4bit : kStateBlock8bit);
  }
  Recompute recompute = Recompute::none;
  std::int64_t recompute_layers = -1;      // blocks per stage checkpointed; -1 = all
  bool flash_attention = false;            // training.attention: standard | flash
  // training.allocator: caching (PyTorch's caching allocator: rounding, cached blocks,
  // fragmentation) | none (tensor bytes exactly, for checking formulas).
  bool caching_allocator = true;
  OffloadSpec offload;                     // training.offload
  // training.lora: train low-rank adapters, every other parameter frozen (finetune.hpp); none:
  // every parameter is trained.
  std::optional<LoraSpec> lora;
  // training.expert_imbalance (>= 1): the busiest expert's tokens over the balanced share; the
  // slowest rank's expert compute, activations and all-to-all scale by it (expert parallelism).
  double expert_imbalance = 1.0;
  // training.loss_chunks (>= 1): PyTorch's cross-entropy over this many chunks of the sequence
  // (torchtune's CEWithChunkedOutputLoss; 1: unchunked, the fp32 logits of the whole micro-batch
  // at once). 0 (absent): by precision, Megatron-LM's fused in-place loss under fp16 / bf16,
  // else 1 (effective_loss_chunks; sim/parallel/pass_loss.cpp, docs/finetuning.md).
  std::int64_t loss_chunks = 0;
  // training.activation_offload: saved activations copied to host memory after their forward
  // and back before their backward (torchtune's OffloadActivations;
  // sim/parallel/pass_activation_offload.cpp).
  bool activation_offload = false;
  // training.compile: torch.compile of the loss as torchtune's compile_loss does it; the compiled
  // cross-entropy saves its input logits and one log-sum-exp per token instead of the fp32
  // log-probabilities (sim/parallel/pass_loss.cpp, docs/finetuning.md); with eager modules each
  // decoder layer compiled too (compile_model: sim/parallel/eager_modules.hpp).
  bool compile = false;
  // training.modules: fused (the layer formulas: fused kernels as Megatron-LM and Transformer
  // Engine run them) | eager (PyTorch's eager modules as torchtune and Hugging Face transformers
  // write them, which keep more for backward; sim/parallel/eager_modules.hpp).
  bool eager_modules = false;
  // training.modules: eager-norm-in-dtype — eager modules whose RMSNorm computes in the
  // activation dtype (LitGPT's lit_gpt/rmsnorm.py at 8641822: no x.float()), so it keeps no fp32
  // upcast (sim/parallel/eager_modules.hpp). True for `eager`, meaningless for `fused`.
  bool norm_upcast = true;
  // training.accumulate_grads: fused (no pass of its own), autograd (PyTorch's AccumulateGrad
  // adds every micro-batch after the first into param.grad), fp32 (DeepSpeed's BF16_Optimizer:
  // every micro-batch's 16-bit gradients cast and added into an fp32 copy, all-reduced in fp32),
  // fused_fp32 (as fused, into fp32 gradients reduced in fp32: Megatron-Core's main_grad).
  AccumulateGrads accumulate_grads = AccumulateGrads::fused;
  // training.fp8_weight_cache: step — Transformer Engine under Megatron-Core quantizes each GEMM
  // weight at a step's first micro-batch and reuses the cached fp8 weight and its transpose for
  // the others (docs/scenarios.md, "Precision"); false: a cast per forward (microbatch).
  bool fp8_weight_cache_step = false;
  // training.fp8_attention: under precision fp8 the flash-attention kernels run at the FP8
  // peak too (Transformer Engine's fp8_dpa); false, the default as in TE's recipes: BF16.
  bool fp8_attention = false;
  // training.packed_documents: each sequence of seq_len tokens is several documents packed
  // together, whose attention runs per document (variable-length flash kernels with cu_seqlens:
  // NeMo's packed SFT/PEFT, Transformer Engine's THD format; sim/parallel/flash_core.hpp).
  // `length`: documents of that many tokens, the last one the remainder; `lengths`: one pack's
  // documents, adding up to seq_len. Neither (length 0, no lengths): one document per sequence.
  struct PackedDocuments {
    std::int64_t length = 0;
    std::vector<std::int64_t> lengths;
    bool enabled() const { return length > 0 || !lengths.empty(); }
  };
  PackedDocuments packed_documents;
};

// Bytes per model state: state_bytes_per_param (sim/scenario/precision.hpp).

// `parallel.stage_devices` entry: these pipeline stages run on `device` instead of the
// scenario's `device`.
struct StageDevice {
  std::vector<std::int64_t> stages;
  hw::DeviceSpec device;
};

// `parallel.fsdp`: PyTorch FSDP2 (`fully_shard`) over the data ranks, HSDP when shard_size is
// below parallel.data (sim/parallel/pass_fsdp.cpp; docs/scenarios.md).
struct FsdpSpec {
  bool enabled = false;
  bool reshard_after_forward = true;
  std::optional<Precision> param_dtype;       // unset: training.precision
  Precision reduce_dtype = Precision::fp32;  // MixedPrecisionPolicy.reduce_dtype
  std::int64_t shard_size = 0;               // 0: all of parallel.data
  // `offload: cpu`: CPUOffloadPolicy (FSDP2) / CPUOffload(offload_params=True) (FSDP1): the
  // shards, their gradients and the optimizer states in host memory, the step on the CPU
  // (sim/parallel/fsdp_offload.hpp).
  bool cpu_offload = false;
  // `separate_outer_layers: true`: each layer outside the blocks that has parameters (embeddings,
  // final norm, head) is an FSDP unit of its own, resharded like a block (torchtune's
  // custom_sharded_layers), instead of all of them in the root unit.
  bool separate_outer_layers = false;
  // `gradient_sync: last-micro-batch`: every micro-batch but the last runs under FSDP1's
  // no_sync() (Lightning Fabric's no_backward_sync; FSDP2's set_requires_gradient_sync(False)):
  // each unit keeps its unsharded gradients, accumulated across micro-batches, and reduce-scatters
  // them in the last micro-batch's backward. false: every micro-batch reduces (FSDP2's default).
  bool sync_last_microbatch = false;
  // `flat_parameter: true`: FSDP1 with use_orig_params=True flattens a unit's parameters into one
  // FlatParameter, which requires grad when any of them does; the frozen parameters of a unit
  // holding a trained one then get gradients too ("gradient memory ... equivalent to not
  // freezing those parameters", torch.distributed.fsdp docs).
  bool flat_parameter = false;
  // `unshard`: how a gathered unit becomes its parameters. `copy` (FSDP2's fully_shard):
  // wait_for_unshard copies the all-gather output into each parameter's unsharded tensor on the
  // compute stream (foreach_all_gather_copy_out), reading and writing the unit's gathered bytes.
  // `view`: the parameters are views of the gathered buffer, no copy (FSDP1's FlatParameter;
  // Megatron-FSDP's buckets). Default: `view` with flat_parameter, else `copy`.
  bool unshard_copy = true;
};

// `parallel.zero3`: how DeepSpeed's ZeRO-3 fetches parameters (deepspeed/runtime/zero/config.py
// defaults; sim/parallel/pass_zero3.cpp, docs/zero3.md). Counts are parameter elements.
struct Zero3Spec {
  std::int64_t prefetch_bucket_size = 50'000'000;        // stage3_prefetch_bucket_size
  std::int64_t max_live_parameters = 1'000'000'000;      // stage3_max_live_parameters
  std::int64_t param_persistence_threshold = 100'000;    // stage3_param_persistence_threshold
};

struct ParallelSpec {
  std::int64_t data = 1;
  std::int64_t tensor = 1;
  std::int64_t pipeline = 1;
  int zero = 0;  // 0..3
  Schedule schedule = Schedule::one_f_one_b;
  PipelineEngine pipeline_engine = PipelineEngine::megatron;
  P2pMode p2p = P2pMode::async;
  GradReduce grad_reduce = GradReduce::overlapped;
  ParamGather param_gather = ParamGather::after_step;
  std::int64_t virtual_stages = 1;
  // Megatron-Core's --microbatch-group-size-per-virtual-pipeline-stage: the interleaved
  // schedule runs N micro-batches per chunk before moving on to the next (0: pipeline).
  std::int64_t microbatch_group_size = 0;
  // The pytorch engine's micro-batches per schedule (torchtitan steps the pipeline schedule once
  // per local batch and accumulates over the step's schedules); 0: one schedule of every
  // micro-batch of the step, as Megatron-LM and DeepSpeed run it.
  std::int64_t microbatches_per_schedule = 0;
  // The micro-batches one schedule plays, of `microbatches` per step.
  std::int64_t schedule_microbatches(std::int64_t microbatches) const {
    return microbatches_per_schedule > 0 ? microbatches_per_schedule : microbatches;
  }
  // The group size the interleaved schedule plays for `microbatches` per step:
  // microbatch_group_size, or pipeline; under the pytorch engine the micro-batches of one of
  // PyTorch's rounds of a schedule of n, n / max(1, n / pipeline).
  std::int64_t microbatch_group(std::int64_t microbatches) const {
    if (pipeline_engine == PipelineEngine::pytorch) {
      const std::int64_t n = schedule_microbatches(microbatches);
      return n / std::max<std::int64_t>(1, n / pipeline);
    }
    return microbatch_group_size > 0 ? microbatch_group_size : pipeline;
  }
  bool sequence_parallel = false;
  // Megatron-Core's --tp-comm-overlap (Transformer Engine userbuffers): the sequence-parallel
  // all-gathers and reduce-scatters chunked and overlapped with their GEMMs.
  bool tp_comm_overlap = false;
  core::Bytes bucket_size{25LL * 1000 * 1000};  // DDP default bucket (25 MB)
  BucketBuffers bucket_buffers = BucketBuffers::transient;
  std::vector<std::int64_t> split_points;       // explicit stage boundaries (layer indices)
  // Megatron-Core's uneven pipeline split (stage_blocks.hpp): transformer blocks on the first /
  // last pipeline stage (--decoder-first/last-pipeline-num-layers; 0: the even share), and the
  // embedding / the loss counted as a block of the first / last chunk
  // (--account-for-embedding/loss-in-pipeline-split).
  std::int64_t first_stage_blocks = 0;
  std::int64_t last_stage_blocks = 0;
  bool embedding_in_split = false;
  bool loss_in_split = false;
  std::vector<StageDevice> stage_devices;       // per-stage device overrides (each stage at most once)
  // Data-parallel all-reduce algorithm forced (ring, tree), or none (`auto`): NCCL's choice.
  std::optional<cost::CollectiveAlgo> allreduce;
  FsdpSpec fsdp;
  // Expert parallelism: each MoE layer's experts split over groups of `expert` data-parallel
  // ranks (the group lies inside the data ranks, so it adds no devices).
  std::int64_t expert = 1;
  // Context parallelism (parallel.context): each sequence split over `context` ranks, which sit
  // inside the data dimension of cluster.placement (context fastest). How attention exchanges
  // keys and values: `ring` (point-to-point steps) or `allgather` (sim/parallel/pass_context.cpp).
  std::int64_t context = 1;
  ContextAttention context_attention = ContextAttention::ring;
  Zero3Spec zero3;  // read only with zero: 3
  std::int64_t devices() const { return data * tensor * pipeline * context; }
  // Tokens of a sample each rank holds: seq_len / context.
  std::int64_t tokens_per_rank(std::int64_t seq_len) const { return seq_len / context; }
  // Ranks each FSDP shard group holds: shard_size, else every data rank.
  std::int64_t fsdp_shard() const { return fsdp.shard_size > 0 ? fsdp.shard_size : data; }
};

struct ClusterSpec {
  std::int64_t nodes = 1;
  std::int64_t gpus_per_node = 1;
  hw::LinkSpec intra_node;
  hw::LinkSpec inter_node;
  // Rank order over the dimensions, fastest-varying first: the default puts the tensor ranks of
  // a group next to each other (inside a node), then pipeline stages, then data replicas.
  std::array<ParallelDim, 3> placement{ParallelDim::tensor, ParallelDim::pipeline, ParallelDim::data};
  // Host side of each node (offload): DRAM per node, achievable DRAM bandwidth per node (shared
  // by the node's GPUs) and each GPU's link to host memory. Defaults: hw::default_host(device).
  core::Bytes host_memory{};
  core::Bandwidth host_memory_bandwidth{};
  hw::LinkSpec pcie;
  // Per-rank variation of compute time (`cluster.jitter`; sim/cost/jitter.hpp): off by default.
  cost::Jitter jitter;
  // The fabric above the nodes (`cluster.pod_nodes`, `cluster.oversubscription`; docs/scale.md,
  // sim/cost/congestion.hpp): nodes under one full-bisection block (a pod), 0 for one block
  // holding every node, and the ratio of a pod's downlink to its uplink bandwidth (1: full
  // bisection between pods, nothing congests).
  std::int64_t pod_nodes = 0;
  double oversubscription = 1;
  // SMs an NCCL collective's kernel holds while it runs beside compute (`cluster.collective_sms`;
  // docs/collectives.md, "SMs a collective takes from compute"): 0, the default, for none.
  std::int64_t collective_sms = 0;
};

// Most ops a step's lowered plan may hold (`limits.max_ops` raises it). A plan and its play take
// 300-500 bytes per op (docs/robustness.md), so the default bounds one simulation to about
// 2.5 GB. The plan's real size is what counts: macro ops fold a unit's repeated layers into one
// op (GPT-3 175B, 6,144 micro-batches on 16 stages: 199,147 ops, 66 MB) while ZeRO-3's per-layer
// gathers do not fold (Llama 2 7B, 4,096 micro-batches on 8 GPUs: 3.2 million ops, 1.5 GB).
inline constexpr std::int64_t kDefaultMaxOps = 5'000'000;

struct Limits {
  std::int64_t max_ops = kDefaultMaxOps;
  // Most layers the model may hold in all (`limits.max_layers`; models::kDefaultMaxLayers).
  std::int64_t max_layers = models::kDefaultMaxLayers;
  // Where a refusal points: the key that set the step's micro-batch count, as written.
  core::SourceLocation ops_at;
  std::string ops_key = "training.gradient_accumulation";

  // The refusal of a step over the limit, located at ops_at: `what` was found, then how to
  // raise the limit, then `note`.
  core::ConfigError refusal(const std::string& what, const std::string& note = "") const;
};

struct Scenario {
  std::string name;
  std::string file;  // where it came from ("" when built in code)
  models::Model model;
  hw::DeviceSpec device;
  TrainingSpec training;
  ParallelSpec parallel;
  ClusterSpec cluster;
  Limits limits;
  // The device pipeline stage `stage` runs on: its `parallel.stage_devices` override, else
  // `device`.
  const hw::DeviceSpec& stage_device(std::int64_t stage) const;
  // Whether data-parallel buckets are reduced in memory that outlives them (the gradients, or
  // DDP's kept copy of them: parallel.bucket_buffers in_place or persistent) rather than in
  // transient buffers: only where each device holds whole gradients, ZeRO 0 and 1 without
  // optimizer offload. Under ZeRO-2/3 a bucket's full gradients live only until they are
  // reduce-scattered, and with offload until they are copied to the host.
  bool buckets_kept() const;
  // Whether a device holds PyTorch DDP's copy of its gradients (bucket_buffers: persistent,
  // kept, with data parallelism).
  bool ddp_gradient_copy() const {
    return parallel.data > 1 && !parallel.fsdp.enabled &&
           parallel.bucket_buffers == BucketBuffers::persistent && buckets_kept();
  }
  // Bytes per parameter of the model states as the precision, the optimizer and the gradients'
  // buffer keep them: state_bytes_per_param, with 4-byte gradients under accumulate_grads:
  // fused-fp32 (Megatron-Core's fp32 main_grad buffer).
  StateBytes state_bytes() const;
};

// Loads and validates `path`, applying `sets` ("key.path=value", same parsing and errors as the
// file). Throws core::ConfigError on any problem.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& sets = {});

// Models built for earlier points, kept for later ones (a sweep's points mostly share a few
// models, and building a 96-block graph cost a sweep point as much as playing it). Only preset
// models are kept: they read no file, so the same key (the model node as YAML, the build
// options and the path) builds the same model. The last `kCapacity` models handed back are
// kept, the least recently used dropped first: a sweep whose inner axes cycle through a few
// sequence lengths and attention kinds builds each once per thread. One per thread; not shared.
struct ModelCache {
  static constexpr std::size_t kCapacity = 8;
  struct Entry {
    std::string key;
    models::Model model;
  };
  std::vector<Entry> held;  // most recently handed back last
  std::string last_key;     // of the last scenario loaded with this cache ("" when not a preset)
  // The model node as YAML text when the caller knows it (a sweep's base model that no override
  // touches, dumped once), so loading need not dump the node again; "" to dump it.
  std::string node_text;

  // The held model under `key`, moved out (the entry goes), or nullopt.
  std::optional<models::Model> take(const std::string& key);
  // Keeps the model of the last scenario loaded with this cache under its key.
  void give_back(models::Model&& m);
};

// The same from an already-parsed tree (sweeps parse a file once and load many points). `root`
// is modified by the overrides: pass a tree of your own. `path` names it in error messages and
// anchors relative model files; marks in `root` locate errors in that file. With `cache`, a
// preset model whose key matches the held one is taken from it instead of being built (the
// cache's key is set either way).
class ScenarioMemo;
Scenario load_scenario_tree(YAML::Node root, const std::string& path,
                            const std::vector<std::string>& sets = {}, ModelCache* cache = nullptr,
                            ScenarioMemo* memo = nullptr);

// Scenarios of one base under many override sets (a sweep's points), kept by section. Each
// top-level section (name, device, training, parallel, cluster, limits) is read from its own
// mapping alone, and only the overrides under its key change that mapping; the cluster's
// defaults depend on the device and the device count too. So a point whose every section was
// read before under the same overrides (in an earlier point, with any other sections) is put
// together from those readings without building a tree: the model from the ModelCache, then the
// batch arithmetic and the layout's checks as load_scenario_tree runs them. Anything else —
// an override of the model or of an unknown key, a section not met yet, a model not held, any
// check that fails — returns nullopt, and the caller loads the point the slow way, which
// locates its errors in the tree and fills the memo (pass it to load_scenario_tree). Sections
// that read a device file are not kept. One memo serves one base (path and text): clear() it
// when the base changes.
class ScenarioMemo {
 public:
  std::optional<Scenario> load(const std::string& path, const std::vector<std::string>& sets,
                               ModelCache* cache);
  void clear() { *this = ScenarioMemo{}; }

  // What loading read of the training section, and what its later steps take from that mapping.
  struct Training {
    TrainingSpec spec;
    bool seq_len_given = false;
    // Limits::ops_at and ops_key: where the step's micro-batch count was written.
    core::SourceLocation ops_at;
    std::string ops_key;
  };
  struct Cluster {
    ClusterSpec spec;
    bool given = false;  // a cluster mapping was written (validate_layout checks its size)
  };
  // One slow load's sections, as read (before the batch arithmetic fills the training's).
  struct Reading {
    std::string name;
    hw::DeviceSpec device;
    Training training;
    ParallelSpec parallel;
    Cluster cluster;
    std::int64_t max_ops = kDefaultMaxOps;
    std::int64_t max_layers = models::kDefaultMaxLayers;
    bool model_preset = false;  // the base's model node names a preset (ModelCache keys it)
  };
  void remember(const std::vector<std::string>& sets, const Reading& r);

 private:
  // Per section, the overrides under its key joined (the cluster's with the device's and the
  // device count), or false when an override reaches another key.
  static bool section_keys(const std::vector<std::string>& sets, std::array<std::string, 6>& keys);
  static std::string cluster_key(const std::array<std::string, 6>& keys, std::int64_t devices);
  template <class T>
  struct Section {
    std::vector<std::pair<std::string, T>> held;  // few: a sweep's values of the section's axes
    const T* find(const std::string& key) const {
      for (const auto& [k, v] : held)
        if (k == key) return &v;
      return nullptr;
    }
    void keep(const std::string& key, const T& v) {
      if (find(key)) return;
      if (held.size() == 64) held.erase(held.begin());
      held.emplace_back(key, v);
    }
  };
  Section<std::string> names_;
  Section<hw::DeviceSpec> devices_;
  Section<Training> trainings_;
  Section<ParallelSpec> parallels_;
  Section<Cluster> clusters_;
  Section<std::pair<std::int64_t, std::int64_t>> limits_;  // max_ops, max_layers
  std::optional<bool> model_preset_;
};

}  // namespace trainsim::scenario
