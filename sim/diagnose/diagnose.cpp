#include "sim/diagnose/diagnose.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "sim/core/error.hpp"
#include "sim/exec/player.hpp"
#include "sim/report/command_line.hpp"
#include "sim/scenario/lazy_states.hpp"
#include "sim/scenario/levers_read.hpp"
#include "sim/parallel/lower.hpp"

namespace trainsim::diagnose {

namespace {

using report::Remedy;
using Sets = std::vector<std::pair<std::string, std::string>>;

std::string gib(core::Bytes b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", core::to_gib(b));
  return buf;
}
std::string str(std::int64_t v) { return std::to_string(v); }

class Trier {
 public:
  Trier(const Loader& load, const std::string& file, const std::vector<std::string>& sets,
        const std::function<void(int)>& on_progress)
      : load_(load), file_(file), base_(sets), on_progress_(on_progress) {}

  // A scenario whose torch.optim creates its states in the first step
  // (training.optimizer_states: lazy): each remedy keeps lazy where the validator would accept
  // it for the remedied scenario (scenario::lazy_states_refusal), and says eager where it hands
  // the states to ZeRO, LoRA, another optimizer or the backward's hooks, which create them
  // otherwise.
  void lazy_states(bool lazy) { lazy_ = lazy; }

  // Simulates the scenario with `extra` overrides; false when the combination is invalid.
  bool run(Remedy& r) {
    ++tried_;
    // Told after the attempt, whether it simulated or was an invalid combination.
    struct Tell {
      const std::function<void(int)>& f;
      ~Tell() {
        if (f) f(1);
      }
    } tell{on_progress_};
    r.command = report::run_command(file_, overrides(r.set));
    try {
      const auto s = load(r);
      const auto plan = parallel::lower(s, {.compress = true});
      const auto tl = exec::play(plan);
      r.fits = tl.host_fits &&
               std::all_of(tl.devices.begin(), tl.devices.end(), [](const auto& d) { return d.fits; });
      r.step_time_s = core::to_seconds(tl.step_time);
      r.peak = {};
      for (const auto& d : tl.devices) r.peak = std::max(r.peak, d.peak);
      r.devices_total = plan.devices_total;
      return true;
    } catch (const core::ConfigError&) {
      return false;
    }
  }
  int tried() const { return tried_; }

 private:
  std::vector<std::string> overrides(const Sets& set) const {
    std::vector<std::string> all = base_;
    for (const auto& [k, v] : set) all.push_back(k + "=" + v);
    return all;
  }

  // The remedied scenario. Under lazy states it is first read with eager ones (the validator
  // then leaves them be) and asked whether lazy is still valid: if so it is read as the remedy
  // gives it, lazy; if not the remedy says eager, on its command line too.
  scenario::Scenario load(Remedy& r) const {
    if (!lazy_) return load_(overrides(r.set));
    Sets eager = r.set;
    eager.push_back({"training.optimizer_states", "eager"});
    scenario::Scenario s = load_(overrides(eager));
    if (!scenario::lazy_states_refusal(s)) return load_(overrides(r.set));
    r.set = std::move(eager);
    r.command = report::run_command(file_, overrides(r.set));
    return s;
  }

  const Loader& load_;
  std::string file_;  // named in each remedy's command line
  std::vector<std::string> base_;
  const std::function<void(int)>& on_progress_;
  int tried_ = 0;
  bool lazy_ = false;
};

// Overrides that grow the job to `devices` GPUs on nodes like the scenario's.
Sets cluster_for(const scenario::Scenario& s, std::int64_t devices) {
  const std::int64_t gpn = std::min<std::int64_t>(std::max<std::int64_t>(s.cluster.gpus_per_node, 8), devices);
  return {{"cluster.gpus_per_node", str(gpn)}, {"cluster.nodes", str((devices + gpn - 1) / gpn)}};
}

bool has_attention(const models::Model& m) {
  for (auto v : m.order)
    if (m.graph[v].saved_attention_core.value > 0) return true;
  return false;
}

void append(Sets& a, const Sets& b) { a.insert(a.end(), b.begin(), b.end()); }

// Simulates candidate remedies and keeps the ones that fit, in the order they were tried.
class Search {
 public:
  Search(const Loader& load, const std::string& file, const std::vector<std::string>& sets,
         const std::function<void(int)>& on_progress)
      : trier_(load, file, sets, on_progress) {}

  // training.optimizer_states: lazy (Trier::lazy_states).
  void lazy_states(bool lazy) { trier_.lazy_states(lazy); }

  // True when `r` is a valid combination that fits (it is then kept).
  bool consider(Remedy r) {
    if (trier_.run(r) && r.fits) {
      found_.push_back(r);
      return true;
    }
    return false;
  }
  bool none_found() const { return found_.empty(); }

  // Same job on the same GPUs first, then remedies that need more GPUs, then ones that change
  // the training itself; within each, by step time.
  report::Diagnosis ranked(report::Diagnosis diag, std::int64_t gpus, int max_remedies) {
    std::vector<Remedy> kept = std::move(found_);
    std::stable_sort(kept.begin(), kept.end(), [gpus](const Remedy& a, const Remedy& b) {
      if (a.changes_workload != b.changes_workload) return !a.changes_workload;
      const bool more_a = a.devices_total > gpus, more_b = b.devices_total > gpus;
      if (more_a != more_b) return !more_a;
      return a.step_time_s < b.step_time_s;
    });
    if (static_cast<int>(kept.size()) > max_remedies) kept.resize(max_remedies);
    diag.remedies = std::move(kept);
    diag.tried = trier_.tried();
    return diag;
  }

 private:
  Trier trier_;
  std::vector<Remedy> found_;
};

// The fullest device tells the story; a device whose model states alone exceed it tells it first.
struct Fullest {
  const report::DeviceSummary* device = nullptr;
  bool states_exceed = false;
};

Fullest fullest_device(const report::Summary& summary) {
  Fullest f{&summary.devices.front()};
  for (const auto& dev : summary.devices)
    if (dev.peak > f.device->peak) f.device = &dev;
  for (const auto& dev : summary.devices)
    if (dev.model_states.total() > dev.capacity) {
      f.states_exceed = true;
      f.device = &dev;
      break;
    }
  return f;
}

// Every GPU fits; a node's DRAM does not hold the states its GPUs offload.
void describe_host_memory(report::Diagnosis& d, const report::Summary& summary) {
  d.kind = "host_memory";
  d.model_state_bytes = summary.host_per_node;
  d.capacity = summary.host_capacity;
  d.summary = "the offloaded states of the fullest node's GPUs need " + gib(summary.host_per_node) +
              " of host memory, the node has " + gib(summary.host_capacity) +
              " (cluster.host_memory).";
  d.data_parallel_note =
      "Host memory is per node: each GPU keeps its share of the optimizer states and fp32 "
      "gradients (and offloaded parameters) there; ZeRO shards them over data-parallel ranks, "
      "fewer GPUs per node divide a node's load.";
}

void host_memory_remedies(const scenario::Scenario& s, Search& search) {
  const auto& off = s.training.offload;
  const auto& p = s.parallel;
  if (off.parameters_on_cpu())
    search.consider({"keep the parameters on the GPU (offload the optimizer only)",
                     {{"training.offload.parameters", "none"}}});
  if (p.data > 1 && p.zero < 1)
    search.consider({"ZeRO stage 1: shard the offloaded states over the " + str(p.data) +
                         " data-parallel replicas",
                     {{"parallel.zero", "1"}}});
  for (std::int64_t gpn = s.cluster.gpus_per_node / 2; gpn >= 1; gpn /= 2) {
    if (s.parallel.devices() % gpn != 0) continue;
    Remedy r;
    r.description = str(gpn) + " GPUs per node (" + str(s.parallel.devices() / gpn) + " nodes)";
    r.set = {{"cluster.gpus_per_node", str(gpn)},
             {"cluster.nodes", str(s.parallel.devices() / gpn)}};
    if (search.consider(r)) break;
  }
  search.consider(
      {"no offload (optimizer and parameters on the GPU)",
       {{"training.offload.optimizer", "none"}, {"training.offload.parameters", "none"}}});
}

// `detail` breaks the model states down, `where` names the stage when there are several.
void describe_model_states(report::Diagnosis& d, const scenario::Scenario& s,
                           const std::string& detail, const std::string& where) {
  d.kind = "model_states";
  d.summary = "model states need " + gib(d.model_state_bytes) + where + " (" + detail +
              "), the device has " + gib(d.capacity) + ": no batch size can fit.";
  d.data_parallel_note =
      s.parallel.zero == 0
          ? "Data parallelism alone does not help: every data-parallel replica keeps a full "
            "copy of the weights, gradients and optimizer states. Split the model (pipeline or "
            "tensor parallelism) or shard its states across replicas (ZeRO)."
          : "ZeRO-" + str(s.parallel.zero) + " over " + str(s.parallel.data) +
                " replicas is not enough on its own: shard further, or split the model.";
}

void describe_activations(report::Diagnosis& d, const scenario::Scenario& s,
                          const report::DeviceSummary& worst, const std::string& detail,
                          const std::string& where) {
  d.kind = "activations";
  d.summary = "model states take " + gib(d.model_state_bytes) + " of " + gib(d.capacity) + where +
              " (" + detail + "); the activations of micro-batch " + str(s.training.micro_batch) +
              " push the peak to " + gib(d.peak) + ".";
  // With the caching-allocator model part of the peak is what it holds beyond the tensors.
  const core::Bytes cache = worst.peak_breakdown[hw::MemCategory::allocator_cache];
  if (cache.value > 0) {
    d.summary +=
        " Of that, " + gib(cache) + " is the caching allocator's rounding and cached blocks";
    d.summary += d.peak - cache <= d.capacity
                     ? ": the tensors alone would fit, fragmentation does not."
                     : ".";
  }
  if (s.model.sequence_model && s.model.seq_len > 0)
    d.summary += " Activations grow with seq_len " + str(s.training.seq_len) +
                 ", the padded length of a micro-batch (its longest sample, or the packed length).";
  d.data_parallel_note =
      "Data parallelism does not help: each replica still processes a whole micro-batch and "
      "keeps its activations; only a smaller micro-batch, recomputation or a leaner attention "
      "kernel lowers them.";
}

// The largest micro-batch below the scenario's that fits with `extra`, same global batch.
bool largest_micro_batch(const scenario::Scenario& s, Search& search, const Sets& extra,
                         const std::string& suffix) {
  const auto& t = s.training;
  const std::int64_t per_replica = t.global_batch / s.parallel.data;
  for (std::int64_t mb = t.micro_batch - 1; mb >= 1; --mb) {
    if (per_replica % mb != 0) continue;
    Remedy r;
    r.description = "micro-batch " + str(mb) + " with " + str(per_replica / mb) +
                    " accumulation steps (same global batch)" + suffix;
    r.set = {{"training.micro_batch", str(mb)},
             {"training.gradient_accumulation", str(per_replica / mb)}};
    append(r.set, extra);
    if (search.consider(r)) return true;
  }
  return false;
}

// Long sequences (seq_len >= kLongSequence): context parallelism, C in {2, 4, 8} dividing
// seq_len / 2 — first on the same GPUs, trading data-parallel ranks for context ranks (the
// accumulation grows by C, so the global batch stays), then on C times the GPUs. Each rank then
// holds seq_len / C tokens (docs/scenarios.md, "Context parallelism"); it needs flash attention.
constexpr std::int64_t kLongSequence = 32768;
void context_remedies(const scenario::Scenario& s, Search& search) {
  const auto& t = s.training;
  const auto& p = s.parallel;
  bool attention = false;
  for (auto v : s.model.order) attention |= s.model.graph[v].kind == models::LayerKind::attention;
  if (t.seq_len < kLongSequence || !attention) return;
  const Sets flash = t.flash_attention ? Sets{} : Sets{{"training.attention", "flash"}};
  for (std::int64_t c = p.context * 2; c <= 8 * p.context; c *= 2) {
    if (t.seq_len % (2 * c) != 0 || p.data % (c / p.context) != 0) continue;
    const std::int64_t k = c / p.context;
    Remedy r;
    r.description = "context parallelism over " + str(c) + " GPUs per sequence, in place of " +
                    str(k) + "x data parallelism (same GPUs, same global batch)";
    r.set = {{"parallel.context", str(c)}, {"parallel.data", str(p.data / k)},
             {"training.gradient_accumulation", str(t.gradient_accumulation * k)},
             {"training.global_batch", str(t.global_batch)}};
    append(r.set, flash);
    if (search.consider(r)) return;
  }
  for (std::int64_t c = p.context * 2; c <= 8 * p.context; c *= 2) {
    if (t.seq_len % (2 * c) != 0) continue;
    const std::int64_t devices = p.devices() / p.context * c;
    Remedy r;
    r.description = "context parallelism over " + str(c) + " GPUs per sequence (" + str(devices) + " GPUs)";
    r.set = {{"parallel.context", str(c)}};
    append(r.set, flash);
    append(r.set, cluster_for(s, devices));
    if (search.consider(r)) return;
  }
}

// A loss with an LM head (its logits, docs/finetuning.md "The loss and its logits").
bool has_lm_head(const models::Model& m) {
  for (auto v : m.order)
    if (m.graph[v].kind == models::LayerKind::loss && m.graph[v].gemm_params > 0) return true;
  return false;
}

// Fine-tuners' levers for activations, each the same training (changes_workload false): the
// loss over chunks of the sequence (torchtune's CEWithChunkedOutputLoss, its default of 8
// chunks) and saved activations offloaded to host memory (torchtune's OffloadActivations; a
// layout it is not modelled with is refused, and so not listed).
void lever_remedies(const scenario::Scenario& s, Search& search) {
  constexpr std::int64_t kChunks = 8;
  if (scenario::effective_loss_chunks(s.training) == 1 && s.model.seq_len >= kChunks &&
      has_lm_head(s.model))
    search.consider({"cross-entropy over " + str(kChunks) +
                         " chunks of the sequence (one chunk's fp32 logits at a time)",
                     {{"training.loss_chunks", str(kChunks)}}});
  if (!s.training.activation_offload)
    search.consider({"activation offload (saved activations copied to host memory and back)",
                     {{"training.activation_offload", "true"}}});
}

// Smaller micro-batches, recomputation, flash attention, the fine-tuners' levers; a shorter
// sequence only as a last resort.
void activation_remedies(const scenario::Scenario& s, Search& search) {
  const auto& t = s.training;
  const bool seq = s.model.sequence_model;
  // Megatron-Core's interleaved groups above the pipeline size (the loader accepts the key only
  // with virtual stages) warm each stage up with (virtual_stages - 1) x (N - pipeline) more
  // forwards; its default group holds fewer.
  const auto& p = s.parallel;
  if (p.microbatch_group_size > p.pipeline)
    search.consider({"interleaved groups of " + str(p.pipeline) +
                         " micro-batches (Megatron-Core's default; fewer warm-up forwards)",
                     {{"parallel.microbatch_group_size", "0"}}});
  largest_micro_batch(s, search, {}, "");
  if (t.recompute == scenario::Recompute::none && seq)
    search.consider(
        {"selective recomputation of the attention core", {{"training.recompute", "selective"}}});
  if (t.recompute != scenario::Recompute::full)
    search.consider({"full recomputation (keep each block's input, replay its forward)",
                     {{"training.recompute", "full"}}});
  if (!t.flash_attention && has_attention(s.model)) {
    if (!search.consider(
            {"flash attention (no s x s scores kept)", {{"training.attention", "flash"}}}))
      search.consider({"flash attention with selective recomputation",
                       {{"training.attention", "flash"}, {"training.recompute", "selective"}}});
  }
  if (seq) lever_remedies(s, search);
  if (search.none_found())
    largest_micro_batch(s, search, {{"training.recompute", "full"}}, " and full recomputation");
  if (seq && search.none_found()) context_remedies(s, search);
  if (seq && search.none_found()) {
    for (std::int64_t len = t.seq_len / 2; len >= 128; len /= 2) {
      Remedy r;
      r.description = "a shorter sequence of " + str(len) + " tokens (changes the training)";
      r.set = {{"training.seq_len", str(len)}};
      r.changes_workload = true;
      if (search.consider(r)) break;
    }
  }
}

// Remedies on the same GPUs: leaner DDP buckets, offloading the states, sharding them (ZeRO).
void state_remedies(const scenario::Scenario& s, Search& search, bool states_exceed) {
  const auto& p = s.parallel;
  // PyTorch DDP's bucket copies hold the gradients a second time: buckets as views into the
  // gradients (gradient_as_bucket_view=True) drop them, same GPUs, same training.
  if (s.ddp_gradient_copy())
    search.consider({"DDP buckets as views into the gradients (gradient_as_bucket_view)",
                     {{"parallel.bucket_buffers", "in_place"}}});
  if (states_exceed && !s.training.offload.optimizer_on_cpu()) {
    if (!search.consider({"offload the optimizer states to host memory (ZeRO-Offload)",
                          {{"training.offload.optimizer", "cpu"}}}) &&
        s.parallel.zero == 3)
      search.consider(
          {"offload the optimizer states and the parameters to host memory (ZeRO-Infinity)",
           {{"training.offload.optimizer", "cpu"}, {"training.offload.parameters", "cpu"}}});
  }
  int zero_tried = p.zero;
  if (p.data > 1)
    for (int z = p.zero + 1; z <= 3; ++z) {
      zero_tried = z;
      if (search.consider(
              {"ZeRO stage " + str(z) + " over the " + str(p.data) + " data-parallel replicas",
               {{"parallel.zero", str(z)}}}))
        break;
    }
  // PyTorch's FSDP2 shards every state as ZeRO-3 does (pass_fsdp.cpp): offered for a
  // model-state OOM where ZeRO-3 was; not with offload yet.
  if (states_exceed && zero_tried == 3 && p.zero < 3 && p.data > 1 && !p.fsdp.enabled &&
      !s.training.offload.optimizer_on_cpu())
    search.consider({"FSDP (PyTorch fully_shard) over the " + str(p.data) +
                         " data-parallel replicas",
                     {{"parallel.zero", "0"}, {"parallel.fsdp", "true"}}});
}

// FSDP1's levers where a unit's frozen weights carry gradients (docs/fsdp.md, "Gradient
// accumulation without sync, and FSDP1's flat parameters"), each the same training: the LoRA
// adapters in FSDP units of their own (torchtune's lora_fsdp_wrap_policy), so no FlatParameter
// mixes frozen and trained parameters and the frozen ones get no gradient; and a reduce-scatter
// every micro-batch instead of no_sync's unsharded accumulation; then both.
void fsdp1_remedies(const scenario::Scenario& s, Search& search) {
  const auto& f = s.parallel.fsdp;
  if (!f.enabled) return;
  const bool flat = f.flat_parameter && s.training.lora;
  const Sets apart = {{"parallel.fsdp.flat_parameter", "false"}};
  const Sets every = {{"parallel.fsdp.gradient_sync", "every-micro-batch"}};
  const bool a = flat && search.consider({"FSDP: the LoRA adapters in units of their own (frozen "
                                          "weights get no gradient)", apart});
  const bool e = f.sync_last_microbatch &&
                 search.consider({"FSDP: reduce-scatter every micro-batch (no no_sync: gradients "
                                  "sharded between micro-batches)", every});
  if (flat && f.sync_last_microbatch && !a && !e)
    search.consider({"FSDP: the LoRA adapters in units of their own, reduce-scatter every "
                     "micro-batch", {apart[0], every[0]}});
}

// Mixture-of-experts model states: expert parallelism holds 1/E of each MoE layer's routed
// experts, most of such a model's parameters, per device (pass_expert.cpp): E a power of two
// dividing every MoE layer's experts, first over the scenario's data-parallel ranks (data x
// context, or an FSDP shard group: same GPUs, ZeRO off: the two are not modelled together),
// then, with one replica, over E GPUs for the same global batch. Not with offload or LoRA
// (refused together).
void expert_remedies(const scenario::Scenario& s, Search& search, bool states_exceed) {
  const auto& p = s.parallel;
  const auto& t = s.training;
  if (!states_exceed || t.lora || t.offload.optimizer_on_cpu() || t.offload.parameters_on_cpu())
    return;
  std::int64_t experts = 0;
  for (auto v : s.model.order)
    if (s.model.graph[v].experts > 1) experts = std::gcd(experts, s.model.graph[v].experts);
  // The ranks an expert group may take (validate_expert.cpp).
  const std::int64_t ranks = (p.fsdp.enabled ? p.fsdp_shard() : p.data) * p.context;
  for (std::int64_t e = p.expert * 2; experts > 0 && e <= experts && e <= ranks; e *= 2) {
    if (experts % e != 0 || ranks % e != 0) continue;
    Remedy r;
    r.description = "expert parallelism: each MoE layer's experts split over " + str(e) + " of the " +
                    str(ranks) + " data-parallel ranks";
    r.set = {{"parallel.expert", str(e)}};
    if (p.zero != 0) r.set.push_back({"parallel.zero", "0"});
    if (search.consider(r)) return;
  }
  for (std::int64_t e = 2; experts > 0 && p.data == 1 && p.context == 1 && !p.fsdp.enabled &&
                          e <= experts;
       e *= 2) {
    if (experts % e != 0) continue;
    if (t.global_batch % (e * t.micro_batch) != 0) break;
    const std::int64_t devices = e * p.tensor * p.pipeline;
    Remedy r;
    r.description = "expert parallelism over " + str(e) + " GPUs (same global batch)";
    r.set = {{"parallel.data", str(e)}, {"parallel.expert", str(e)}, {"parallel.zero", "0"},
             {"training.gradient_accumulation", str(t.global_batch / (e * t.micro_batch))}};
    append(r.set, cluster_for(s, devices));
    if (search.consider(r)) return;
  }
}

// Fine-tuning remedies for model states that do not fit: train LoRA adapters instead of every
// parameter (frozen weights keep no gradient and no optimizer state), then QLoRA (the frozen
// linear weights in 4-bit NF4 with double-quantized constants). Both train something other than
// the scenario's job, so they are flagged changes_workload and listed after the others. Rank 16
// on every linear layer is the QLoRA paper's recipe (Dettmers et al. 2023, section 4: adapters on
// all linear layers are needed to match full fine-tuning). The QLoRA remedy runs the base through
// bitsandbytes' Linear4bit, as the paper's code (PEFT) does: its MatMul4Bit keeps each linear's
// input for backward where torchao's NF4 keeps none, so the remedy never fits a torchao run that
// the bitsandbytes one would not (docs/finetuning.md, "Backward and activations").
void finetune_remedies(const scenario::Scenario& s, Search& search, bool states_exceed) {
  if (!states_exceed) return;
  const auto& lora = s.training.lora;
  if (lora && lora->quantized()) return;
  auto finetune = [&](const std::string& what, Sets set) {
    Remedy r;
    r.description = what;
    r.set = std::move(set);
    r.changes_workload = true;
    search.consider(r);
  };
  if (!lora)
    finetune("LoRA rank 16 on all linear layers, base frozen (changes the training)",
             {{"training.lora.rank", "16"}, {"training.lora.targets", "all-linear"}});
  Sets qlora = {{"training.lora.base", "nf4-dq"}, {"training.lora.quantizer", "bitsandbytes"}};
  if (!lora) qlora.insert(qlora.begin(), {{"training.lora.rank", "16"}, {"training.lora.targets", "all-linear"}});
  finetune(std::string(lora ? "QLoRA: the frozen base in NF4" : "QLoRA rank 16 on all linear layers, base in NF4") +
               " (changes the training)",
           qlora);
}

// Optimizer remedies for model states that do not fit where the states are not sharded:
// bitsandbytes' 8-bit AdamW (about 2 bytes of states per parameter instead of 8), else torchao's
// 4-bit AdamW (about 1.06), else bitsandbytes' paged 8-bit AdamW (the states the device cannot
// hold are evicted to host memory), and
// optimizer-in-backward (torchtune: one layer's gradients at a time). Neither changes what is
// trained: 8-bit states change the update's rounding, not the work, so changes_workload stays
// false (docs/diagnosis.md).
void optimizer_remedies(const scenario::Scenario& s, Search& search, bool states_exceed) {
  const auto& t = s.training;
  const auto& p = s.parallel;
  if (!states_exceed || (p.data > 1 && p.zero >= 1) || p.fsdp.enabled ||
      t.offload.optimizer_on_cpu())
    return;
  const bool adam = t.optimizer == scenario::Optimizer::adam || t.optimizer == scenario::Optimizer::adamw;
  // bitsandbytes runs its own kernels (optimizer_impl fused) and torchtune's hooks free each
  // gradient (zero_grad set_to_none): a scenario that names another keeps the remedy valid so.
  Sets eight_bit = {{"training.optimizer", "adamw-8bit"}};
  Sets four_bit = {{"training.optimizer", "adamw-4bit"}};
  Sets paged = {{"training.optimizer", "paged-adamw-8bit"}};
  if (t.optimizer_impl) {
    eight_bit.push_back({"training.optimizer_impl", "fused"});
    four_bit.push_back({"training.optimizer_impl", "fused"});
    paged.push_back({"training.optimizer_impl", "fused"});
  }
  if (adam && !search.consider({"8-bit AdamW (bitsandbytes block-wise 8-bit states)", eight_bit}) &&
      !search.consider({"4-bit AdamW (torchao block-wise 4-bit states)", four_bit}))
    search.consider({"paged 8-bit AdamW (states spill to host memory over PCIe)", paged});
  Sets in_backward = {{"training.optimizer_in_backward", "true"}};
  if (t.zero_grad == scenario::ZeroGrad::zeros)
    in_backward.push_back({"training.zero_grad", "set_to_none"});
  if (!t.optimizer_in_backward && t.gradient_accumulation == 1 && p.data == 1 && p.pipeline == 1)
    search.consider({"optimizer in backward (each layer steps and frees its gradients at once)",
                     in_backward});
}

// Remedies that split the model or spread it over more GPUs.
void split_remedies(const scenario::Scenario& s, Search& search, bool states_exceed) {
  const auto& t = s.training;
  const auto& p = s.parallel;
  const int blocks = s.model.num_blocks;
  for (std::int64_t pp = p.pipeline * 2; blocks > 0 && pp <= blocks; pp *= 2) {
    if (blocks % pp != 0) continue;
    const std::int64_t devices = p.data * p.tensor * pp;
    Remedy r;
    r.description = "pipeline parallelism over " + str(pp) + " stages (" + str(devices) + " GPUs)";
    r.set = {{"parallel.pipeline", str(pp)}};
    append(r.set, cluster_for(s, devices));
    if (search.consider(r)) break;
  }
  std::int64_t heads = 0;
  for (auto v : s.model.order) heads = std::max(heads, s.model.graph[v].heads);
  for (std::int64_t tt = p.tensor * 2; heads > 0 && tt <= 8; tt *= 2) {
    if (heads % tt != 0) continue;
    const std::int64_t devices = p.data * tt * p.pipeline;
    Remedy r;
    r.description = "tensor parallelism over " + str(tt) + " GPUs of a node (" + str(devices) + " GPUs)";
    r.set = {{"parallel.tensor", str(tt)}};
    append(r.set, cluster_for(s, devices));
    if (search.consider(r)) break;
  }
  if (p.data == 1 && states_exceed) {
    for (std::int64_t dd = 2; dd <= 64; dd *= 2) {
      if (t.global_batch % (dd * t.micro_batch) != 0) break;
      const std::int64_t devices = dd * p.tensor * p.pipeline;
      Remedy r;
      r.description = "ZeRO-3 data parallelism over " + str(dd) + " GPUs (same global batch)";
      r.set = {{"parallel.data", str(dd)}, {"parallel.zero", "3"},
               {"training.gradient_accumulation", str(t.global_batch / (dd * t.micro_batch))}};
      append(r.set, cluster_for(s, devices));
      if (search.consider(r)) break;
    }
    for (std::int64_t dd = 2; p.pipeline == 1 && dd <= 64; dd *= 2) {
      if (t.global_batch % (dd * t.micro_batch) != 0) break;
      const std::int64_t devices = dd * p.tensor;
      Remedy r;
      r.description = "FSDP over " + str(dd) + " GPUs (same global batch)";
      r.set = {{"parallel.data", str(dd)}, {"parallel.zero", "0"}, {"parallel.fsdp", "true"},
               {"training.gradient_accumulation", str(t.global_batch / (dd * t.micro_batch))}};
      append(r.set, cluster_for(s, devices));
      if (search.consider(r)) break;
    }
  }
  if (states_exceed && search.none_found()) {
    // Split the model and trim activations together.
    for (std::int64_t pp = p.pipeline * 2; blocks > 0 && pp <= blocks; pp *= 2) {
      if (blocks % pp != 0) continue;
      const std::int64_t devices = p.data * p.tensor * pp;
      Remedy r;
      r.description = "pipeline over " + str(pp) + " stages with full recomputation (" + str(devices) + " GPUs)";
      r.set = {{"parallel.pipeline", str(pp)}, {"training.recompute", "full"}};
      append(r.set, cluster_for(s, devices));
      if (search.consider(r)) break;
    }
  }
}

}  // namespace

report::Diagnosis diagnose(const std::string& file, const std::vector<std::string>& sets,
                           const scenario::Scenario& s, const report::Summary& summary,
                           const Options& options) {
  const Loader load = [&file](const std::vector<std::string>& all) { return scenario::load_scenario(file, all); };
  return diagnose(load, sets, s, summary, options);
}

report::Diagnosis diagnose(const Loader& load, const std::vector<std::string>& sets,
                           const scenario::Scenario& s, const report::Summary& summary,
                           const Options& options) {
  report::Diagnosis d;
  const Fullest fullest = fullest_device(summary);
  const report::DeviceSummary& worst = *fullest.device;
  d.device = worst.stage;
  d.capacity = worst.capacity;
  d.peak = worst.peak;
  d.model_state_bytes = worst.model_states.total();
  // Every remedy is simulated; the ones that fit are kept.
  Search search(load, s.file, sets, options.on_progress);
  search.lazy_states(s.training.lazy_optimizer_states);
  const std::int64_t gpus = s.parallel.devices();
  const bool gpus_fit = std::all_of(summary.devices.begin(), summary.devices.end(),
                                    [](const report::DeviceSummary& dev) { return dev.fits; });
  if (!summary.host_fits && gpus_fit) {
    describe_host_memory(d, summary);
    host_memory_remedies(s, search);
    return search.ranked(std::move(d), gpus, options.max_remedies);
  }
  const auto& ms = worst.model_states;
  const std::string states_detail =
      "weights " + gib(ms[hw::MemCategory::weights]) + ", gradients " +
      gib(ms[hw::MemCategory::gradients]) +
      (s.ddp_gradient_copy() ? " (half of them PyTorch DDP's bucket copy)" : "") +
      ", optimizer states " + gib(ms[hw::MemCategory::optimizer_states]) + ", reserved " +
      gib(ms[hw::MemCategory::reserved]);
  const std::string where = summary.devices.size() > 1 ? " on stage " + str(d.device) : "";
  if (fullest.states_exceed) {
    describe_model_states(d, s, states_detail, where);
  } else {
    describe_activations(d, s, worst, states_detail, where);
    activation_remedies(s, search);
  }
  state_remedies(s, search, fullest.states_exceed);
  fsdp1_remedies(s, search);
  expert_remedies(s, search, fullest.states_exceed);
  split_remedies(s, search, fullest.states_exceed);
  optimizer_remedies(s, search, fullest.states_exceed);
  finetune_remedies(s, search, fullest.states_exceed);
  return search.ranked(std::move(d), gpus, options.max_remedies);
}

}  // namespace trainsim::diagnose
