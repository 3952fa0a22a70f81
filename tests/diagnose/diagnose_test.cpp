// Diagnosis: the right kind of OOM, and every remedy reproduces its figures when applied
// with `--set` (the contract of the JSON `set` object).
#include <catch2/catch.hpp>

#include <string>

#include "sim/diagnose/diagnose.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;

namespace {
struct Run {
  scenario::Scenario s;
  report::Summary summary;
};
Run run(const std::string& file, const std::vector<std::string>& sets = {}) {
  Run r{scenario::load_scenario(file, sets), {}};
  const auto plan = parallel::lower(r.s);
  const auto tl = exec::play(plan);
  r.summary = report::summarize(r.s, plan, tl, false);
  return r;
}
const std::string kRoot = TRAINSIM_SOURCE_DIR;
}  // namespace

TEST_CASE("an activation OOM is diagnosed as such and its remedies fit when applied", "[diagnose]") {
  const std::string file = kRoot + "/scenarios/single_gpu/02_activation_oom.yaml";
  const Run r = run(file);
  REQUIRE_FALSE(r.summary.fits);
  const auto d = diagnose::diagnose(file, {}, r.s, r.summary);
  CHECK(d.kind == "activations");
  CHECK(d.model_state_bytes < d.capacity);
  REQUIRE_FALSE(d.remedies.empty());
  bool has_micro_batch = false;
  for (const auto& remedy : d.remedies) {
    std::vector<std::string> sets;
    for (const auto& [k, v] : remedy.set) {
      sets.push_back(k + "=" + v);
      has_micro_batch = has_micro_batch || k == "training.micro_batch";
    }
    const Run again = run(file, sets);
    CHECK(again.summary.fits);
    CHECK(again.summary.step_time_s == Approx(remedy.step_time_s).epsilon(1e-12));
    CHECK(again.summary.peak == remedy.peak);
    CHECK(again.summary.training.global_batch == r.summary.training.global_batch);
  }
  CHECK(has_micro_batch);
}

TEST_CASE("a model-state OOM is diagnosed as such and never offered a smaller batch", "[diagnose]") {
  const std::string file = kRoot + "/scenarios/single_gpu/03_model_state_oom.yaml";
  const Run r = run(file);
  const auto d = diagnose::diagnose(file, {}, r.s, r.summary);
  CHECK(d.kind == "model_states");
  CHECK(d.model_state_bytes > d.capacity);
  CHECK(d.summary.find("no batch size can fit") != std::string::npos);
  for (const auto& remedy : d.remedies) {
    for (const auto& [k, v] : remedy.set) CHECK(k != "training.micro_batch");
    CHECK(remedy.fits);
  }
  REQUIRE_FALSE(d.remedies.empty());
}

TEST_CASE("ZeRO on the same GPUs ranks before remedies that need more GPUs", "[diagnose]") {
  const std::string file = kRoot + "/scenarios/parallel/05_zero0.yaml";
  const Run r = run(file);
  const auto d = diagnose::diagnose(file, {}, r.s, r.summary);
  REQUIRE_FALSE(d.remedies.empty());
  CHECK(d.remedies.front().set.front().first == "parallel.zero");
  CHECK(d.remedies.front().devices_total == 8);
}

TEST_CASE("a model-state OOM that needs ZeRO-3 is offered FSDP beside it", "[diagnose][fsdp]") {
  // Llama-3-8B, 8-way DDP on A100-40GB at sequence 4096: ZeRO-1 and 2 leave too little for the
  // activations, ZeRO-3 fits, and so does FSDP (16 B/param / 8 either way).
  const std::string file = kRoot + "/scenarios/parallel/08_llama3_8b_ddp_oom.yaml";
  const std::vector<std::string> sets = {"device=a100-40gb", "training.seq_len=4096"};
  const Run r = run(file, sets);
  const auto d = diagnose::diagnose(file, sets, r.s, r.summary);
  CHECK(d.kind == "model_states");
  bool zero3 = false, fsdp = false;
  for (const auto& remedy : d.remedies) {
    std::vector<std::string> again = sets;
    bool this_fsdp = false;
    for (const auto& [k, v] : remedy.set) {
      again.push_back(k + "=" + v);
      zero3 = zero3 || (k == "parallel.zero" && v == "3");
      this_fsdp = this_fsdp || (k == "parallel.fsdp" && v == "true");
    }
    fsdp = fsdp || this_fsdp;
    if (this_fsdp) {  // the same 8 GPUs: re-simulated, it fits with the peak it was offered at
      CHECK(remedy.devices_total == 8);
      const Run applied = run(file, again);
      CHECK(applied.summary.fits);
      CHECK(applied.summary.peak == remedy.peak);
    }
  }
  CHECK(zero3);
  CHECK(fsdp);
}

TEST_CASE("a model-state OOM is offered offloading the optimizer to host memory", "[diagnose][offload]") {
  const std::string file = kRoot + "/scenarios/single_gpu/03_model_state_oom.yaml";
  const Run r = run(file);
  const auto d = diagnose::diagnose(file, {}, r.s, r.summary);
  bool offload = false;
  for (const auto& remedy : d.remedies)
    for (const auto& [k, v] : remedy.set) offload = offload || (k == "training.offload.optimizer" && v == "cpu");
  CHECK(offload);
}

TEST_CASE("a host-memory OOM is diagnosed as such, not as activations", "[diagnose][offload]") {
  const std::string file = kRoot + "/scenarios/single_gpu/04_zero_offload.yaml";
  const std::vector<std::string> sets = {"cluster.host_memory=100GiB"};
  const Run r = run(file, sets);
  REQUIRE_FALSE(r.summary.fits);
  REQUIRE_FALSE(r.summary.host_fits);
  const auto d = diagnose::diagnose(file, sets, r.s, r.summary);
  CHECK(d.kind == "host_memory");
  CHECK(d.model_state_bytes == r.summary.host_per_node);
  CHECK(d.capacity.value == 100 * core::kGiB);
  CHECK(d.summary.find("host memory") != std::string::npos);
  for (const auto& remedy : d.remedies) {
    CHECK(remedy.fits);
    for (const auto& [k, v] : remedy.set) CHECK(k != "training.micro_batch");
  }
}

TEST_CASE("an OOM the tensors alone would not cause is put down to the allocator's fragmentation",
          "[diagnose][allocator]") {
  // tests/exec/allocator_play_test.cpp: the toy's tensors need 21 MiB, the allocator 40 MiB.
  const std::string file = kRoot + "/tests/sweep/data/toy_fit.yaml";
  const std::vector<std::string> sets = {"training.allocator=caching", "training.micro_batch=5", "device.memory=30MiB"};
  const Run r = run(file, sets);
  REQUIRE_FALSE(r.summary.fits);
  const auto d = diagnose::diagnose(file, sets, r.s, r.summary);
  CHECK(d.kind == "activations");
  CHECK_THAT(d.summary, Catch::Contains("the tensors alone would fit, fragmentation does not"));
  REQUIRE_FALSE(d.remedies.empty());
  for (const auto& rem : d.remedies) CHECK(rem.fits);
}

TEST_CASE("PyTorch DDP's bucket copy is named and dropping it is offered", "[diagnose]") {
  // LLaMA-2 7B, ZeRO-1 over 8 A100-80GB, micro-batch 4: DDP's copy of the gradients (12.6 GiB)
  // pushes the step over; buckets as views into the gradients fit (76.2 GiB peak).
  const std::string file = kRoot + "/scenarios/parallel/05_zero0.yaml";
  const std::vector<std::string> sets = {"parallel.zero=1", "device=a100-80gb", "training.micro_batch=4",
                                         "parallel.bucket_buffers=persistent"};
  const Run r = run(file, sets);
  REQUIRE_FALSE(r.summary.fits);
  const auto d = diagnose::diagnose(file, sets, r.s, r.summary);
  CHECK(d.summary.find("half of them PyTorch DDP's bucket copy") != std::string::npos);
  bool offered = false;
  for (const auto& remedy : d.remedies)
    if (remedy.set.size() == 1 && remedy.set.front().first == "parallel.bucket_buffers") {
      offered = remedy.set.front().second == "in_place";
      CHECK_FALSE(remedy.changes_workload);
      CHECK(remedy.devices_total == 8);
    }
  CHECK(offered);
}

TEST_CASE("a full fine-tune whose states exceed one GPU is offered LoRA and QLoRA, flagged as changing the workload",
          "[diagnose][finetune]") {
  // Llama-2-7B full fine-tune on a 24 GiB card: 16 B/param x 6.74e9 = 108 GB of states.
  // LoRA keeps 2 B/param of frozen weights (13.5 GB) and QLoRA about 0.52 B/param for the
  // linear weights: both fit, both train something else.
  const std::string file = kRoot + "/scenarios/finetune/01_full_finetune_oom.yaml";
  const Run r = run(file);
  const auto d = diagnose::diagnose(file, {}, r.s, r.summary);
  REQUIRE(d.kind == "model_states");
  int finetune = 0;
  for (const auto& remedy : d.remedies) {
    bool sets_lora = false;
    for (const auto& [k, v] : remedy.set) sets_lora = sets_lora || k.starts_with("training.lora.");
    CHECK(sets_lora == remedy.changes_workload);
    if (!sets_lora) continue;
    ++finetune;
    std::vector<std::string> sets;
    for (const auto& [k, v] : remedy.set) sets.push_back(k + "=" + v);
    const Run applied = run(file, sets);
    CHECK(applied.summary.fits);
    CHECK(applied.summary.trainable_parameters < applied.summary.parameters);
  }
  CHECK(finetune == 2);
  // Remedies that keep the job rank before those that change it.
  REQUIRE(d.remedies.size() >= 3);
  CHECK_FALSE(d.remedies.front().changes_workload);
  CHECK(d.remedies.back().changes_workload);
}

TEST_CASE("an MoE model-state OOM is offered expert parallelism on the same GPUs", "[diagnose][expert]") {
  // Mixtral 8x7B on 16 H100 with tensor 2 and data 8 but no expert parallelism: every device
  // holds 46.7B / 2 parameters, 16 B each: 373 GB of model states. Expert degree 8 leaves
  // 0.80B dense + 45.1B / 16 routed parameters per device (55.7 GiB of states): it fits.
  const std::string file = kRoot + "/scenarios/parallel/09_mixtral_8x7b_expert8.yaml";
  const std::vector<std::string> sets = {"parallel.expert=1"};
  const Run r = run(file, sets);
  REQUIRE_FALSE(r.summary.fits);
  const auto d = diagnose::diagnose(file, sets, r.s, r.summary);
  CHECK(d.kind == "model_states");
  bool expert = false;
  for (const auto& remedy : d.remedies) {
    std::vector<std::string> again = sets;
    bool this_expert = false;
    for (const auto& [k, v] : remedy.set) {
      again.push_back(k + "=" + v);
      this_expert = this_expert || k == "parallel.expert";
    }
    if (!this_expert) continue;
    expert = true;
    // Degrees 2 and 4 leave 1/2 and 1/4 of the routed experts: too much; 8 is the one offered.
    CHECK(remedy.set.front() == std::pair<std::string, std::string>{"parallel.expert", "8"});
    CHECK(remedy.devices_total == 16);
    CHECK(remedy.command.find("--set parallel.expert=8") != std::string::npos);
    const Run applied = run(file, again);
    CHECK(applied.summary.fits);
    CHECK(applied.summary.peak == remedy.peak);
  }
  CHECK(expert);
}

TEST_CASE("8-bit remedies of a scenario naming optimizer_impl switch it to fused, and reproduce",
          "[diagnose]") {
  // HF bert-large fp32 (optimizer_impl: for-loop, zero_grad: zeros) on 6 GiB: the model states
  // (1.25 GiB weights + 1.25 GiB gradients + 2.5 GiB AdamW states + 1.32 GiB context) exceed it.
  // Without optimizer_impl=fused the 8-bit remedies would be invalid (bitsandbytes has one
  // implementation) and silently dropped.
  const std::string file = kRoot + "/scenarios/validation/memory/hf_bert_large_v100_fp32.yaml";
  const std::vector<std::string> base = {"device.memory=6GiB", "training.micro_batch=1"};
  const Run r = run(file, base);
  REQUIRE_FALSE(r.summary.fits);
  const auto d = diagnose::diagnose(file, base, r.s, r.summary);
  CHECK(d.kind == "model_states");
  bool eight_bit = false;
  for (const auto& remedy : d.remedies) {
    std::vector<std::string> sets = base;
    bool is_8bit = false, fused = false;
    for (const auto& [k, v] : remedy.set) {
      sets.push_back(k + "=" + v);
      is_8bit = is_8bit || (k == "training.optimizer" && v.find("8bit") != std::string::npos);
      fused = fused || (k == "training.optimizer_impl" && v == "fused");
    }
    if (is_8bit) CHECK(fused);
    eight_bit = eight_bit || is_8bit;
    const Run again = run(file, sets);
    CHECK(again.summary.fits);
    CHECK(again.summary.peak == remedy.peak);
  }
  CHECK(eight_bit);
}

TEST_CASE("remedies of a lazy-states scenario say eager exactly where lazy would be refused, and "
          "reproduce", "[diagnose][lazy_states]") {
  // The fp32 bert-large of the 8-bit test with torch.optim creating its states in the first step
  // (training.optimizer_states: lazy). Lazy stays valid for a remedy that keeps torch.optim's
  // AdamW over the parameters on the GPU's side of things; 8-bit optimizers (bitsandbytes),
  // ZeRO's partitioned optimizer, LoRA and optimizer_in_backward make the states otherwise, so
  // those remedies say training.optimizer_states=eager (docs/finetuning.md).
  const std::string file = kRoot + "/scenarios/validation/memory/hf_bert_large_v100_fp32.yaml";
  const std::vector<std::string> base = {"device.memory=6GiB", "training.micro_batch=1",
                                         "training.optimizer_states=lazy"};
  const Run r = run(file, base);
  REQUIRE(r.s.training.lazy_optimizer_states);
  REQUIRE_FALSE(r.summary.fits);
  const auto d = diagnose::diagnose(file, base, r.s, r.summary);
  int eager = 0, lazy = 0;
  for (const auto& remedy : d.remedies) {
    std::vector<std::string> sets = base;
    bool hands_over = false, says_eager = false;
    for (const auto& [k, v] : remedy.set) {
      sets.push_back(k + "=" + v);
      hands_over = hands_over || (k == "training.optimizer" && v != "adamw") ||
                   (k == "parallel.zero" && v != "0") || k.starts_with("training.lora") ||
                   (k == "training.optimizer_in_backward" && v == "true");
      says_eager = says_eager || (k == "training.optimizer_states" && v == "eager");
    }
    CHECK(says_eager == hands_over);
    (says_eager ? eager : lazy) += 1;
    const Run again = run(file, sets);
    CHECK(again.s.training.lazy_optimizer_states == !says_eager);
    CHECK(again.summary.fits);
    CHECK(again.summary.peak == remedy.peak);
  }
  CHECK(eager > 0);
  CHECK(lazy > 0);
}

TEST_CASE("when 8-bit states do not fit, 4-bit AdamW is offered before paged 8-bit", "[diagnose]") {
  // The same bert-large fp32 on 6.25 GiB: 8-bit states (2 B per parameter) peak at 6.55 GiB,
  // torchao's 4-bit ones (1.0625 B) at 6.24 GiB, so 4-bit is the optimizer remedy, with
  // optimizer_impl=fused as the scenario names an implementation, and the paged one is not tried.
  const std::string file = kRoot + "/scenarios/validation/memory/hf_bert_large_v100_fp32.yaml";
  const std::vector<std::string> base = {"device.memory=6.25GiB", "training.micro_batch=1"};
  const Run r = run(file, base);
  REQUIRE_FALSE(r.summary.fits);
  const auto d = diagnose::diagnose(file, base, r.s, r.summary);
  CHECK(d.kind == "model_states");
  bool four_bit = false;
  for (const auto& remedy : d.remedies) {
    std::vector<std::string> sets = base;
    std::string optimizer;
    bool fused = false;
    for (const auto& [k, v] : remedy.set) {
      sets.push_back(k + "=" + v);
      if (k == "training.optimizer") optimizer = v;
      fused = fused || (k == "training.optimizer_impl" && v == "fused");
    }
    CHECK(optimizer != "adamw-8bit");
    CHECK(optimizer != "paged-adamw-8bit");
    if (optimizer != "adamw-4bit") continue;
    four_bit = true;
    CHECK(fused);
    const Run again = run(file, sets);
    CHECK(again.summary.fits);
    CHECK(again.summary.peak == remedy.peak);
  }
  CHECK(four_bit);
}

TEST_CASE("an FSDP1 LoRA run whose frozen weights carry gradients is offered FSDP1's levers",
          "[diagnose][fsdp]") {
  // LitGPT's Llama-2-13B on 2 A100-40GB (flat_parameter, gradient_sync: last-micro-batch) runs
  // out of memory as measured. The adapters in units of their own leave the frozen weights
  // without gradients; reducing every micro-batch shards them between micro-batches. Both are
  // the same training, and each fits when re-simulated.
  const std::string file = kRoot + "/scenarios/validation/litgpt/l2_13b_lora_fsdp2_mb1.yaml";
  const Run r = run(file);
  REQUIRE_FALSE(r.summary.fits);
  const auto d = diagnose::diagnose(file, {}, r.s, r.summary);
  bool apart = false, every = false;
  for (const auto& remedy : d.remedies) {
    if (remedy.set.size() != 1) continue;
    const auto& [k, v] = remedy.set[0];
    if (k == "parallel.fsdp.flat_parameter") apart = v == "false";
    if (k == "parallel.fsdp.gradient_sync") every = v == "every-micro-batch";
    if (k != "parallel.fsdp.flat_parameter" && k != "parallel.fsdp.gradient_sync") continue;
    CHECK_FALSE(remedy.changes_workload);
    const Run again = run(file, {k + "=" + v});
    CHECK(again.summary.fits);
    CHECK(again.summary.peak == remedy.peak);
  }
  CHECK(apart);
  CHECK(every);
  // Without the FSDP1 keys (FSDP2's defaults) neither is offered.
  const std::vector<std::string> fsdp2 = {"parallel.fsdp.flat_parameter=false",
                                          "parallel.fsdp.gradient_sync=every-micro-batch",
                                          "device.memory=14GiB"};
  const Run small = run(file, fsdp2);
  REQUIRE_FALSE(small.summary.fits);
  for (const auto& remedy : diagnose::diagnose(file, fsdp2, small.s, small.summary).remedies)
    for (const auto& [k, v] : remedy.set) CHECK(k.rfind("parallel.fsdp.", 0) != 0);
}

TEST_CASE("an interleaved group above the pipeline size is offered Megatron-Core's default", "[diagnose]") {
  // 32 micro-batches in one group of 32 over 4 stages: every stage runs (2 - 1) x 32 = 32 more
  // warm-up forwards than (2 - 1) x 4; the default groups fit the same training.
  const std::string file = kRoot + "/scenarios/parallel/04_pipeline_fits.yaml";
  const std::vector<std::string> base = {"parallel.schedule=interleaved", "parallel.virtual_stages=2",
                                         "parallel.microbatch_group_size=32"};
  const Run r = run(file, base);
  REQUIRE_FALSE(r.summary.fits);
  const auto d = diagnose::diagnose(file, base, r.s, r.summary);
  CHECK(d.kind == "activations");
  bool offered = false;
  for (const auto& remedy : d.remedies)
    for (const auto& [k, v] : remedy.set)
      if (k == "parallel.microbatch_group_size" && v == "0") {
        offered = true;
        CHECK_FALSE(remedy.changes_workload);
        std::vector<std::string> sets = base;
        sets.push_back(k + "=" + v);
        const Run again = run(file, sets);
        CHECK(again.summary.fits);
        CHECK(again.summary.peak == remedy.peak);
      }
  CHECK(offered);
  // At the default group (micro-batch 3, out of memory all the same) the lever is not offered.
  const std::vector<std::string> plain = {"parallel.schedule=interleaved", "parallel.virtual_stages=2",
                                          "training.micro_batch=3", "training.global_batch=96"};
  const Run p = run(file, plain);
  REQUIRE_FALSE(p.summary.fits);
  const auto dp = diagnose::diagnose(file, plain, p.s, p.summary);
  REQUIRE_FALSE(dp.remedies.empty());
  for (const auto& remedy : dp.remedies)
    for (const auto& [k, v] : remedy.set) CHECK(k != "parallel.microbatch_group_size");
}
