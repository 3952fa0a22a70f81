// Fast play (LowerOptions::compress) against the expanded plan: for every shipped scenario and
// variants over schedule, ZeRO stage, recomputation, micro-batch and memory pressure, the
// compressed plan must give the same JSON report byte for byte (step time, peaks and their
// breakdown, OOM points, communication, events) — the event simulation is the reference.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/summary.hpp"
#include "sim/report/writers.hpp"
#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"

namespace {

using namespace trainsim;
namespace fs = std::filesystem;

const std::string kRoot = TRAINSIM_SOURCE_DIR;

struct Played {
  std::string json;
  std::size_t ops = 0, macros = 0, taps = 0;
  std::uint64_t events = 0, skipped = 0;  // Timeline::events, events_skipped
};

Played play(const scenario::Scenario& s, bool compress, bool all_ooms = false,
            bool steady_skip = true, bool share_stages = true) {
  const parallel::Plan plan = parallel::lower(s, {.compress = compress});
  exec::PlayOptions opt;
  opt.all_ooms = all_ooms;
  opt.steady_skip = steady_skip;
  opt.share_stages = share_stages;
  const exec::Timeline tl = exec::play(plan, opt);
  std::ostringstream out;
  report::write_json(out, report::summarize(s, plan, tl, all_ooms));
  Played p;
  p.json = out.str();
  p.events = tl.events;
  p.skipped = tl.events_skipped;
  for (const auto& P : plan.programs) {
    p.ops += P.ops.size();
    for (const auto& op : P.ops) {
      p.macros += op.macro >= 0;
      p.taps += op.tap >= 0;
    }
  }
  return p;
}

// The compressed play (its ops, macros and taps), after checking it reports as the expanded one,
// with its speed-ups (steady-state skipping, replays shared between stages) on and off.
Played same_report(const std::string& file, const std::vector<std::string>& sets, bool all_ooms = false) {
  const auto s = scenario::load_scenario(file, sets);
  const Played full = play(s, false, all_ooms), fast = play(s, true, all_ooms);
  const Played plain = play(s, true, all_ooms, /*steady_skip=*/false, /*share_stages=*/false);
  std::string what = file;
  for (const auto& k : sets) what += " --set " + k;
  INFO(what);
  CHECK(fast.json == full.json);
  CHECK(plain.json == full.json);
  CHECK(plain.skipped == 0);
  CHECK(full.skipped == 0);
  CHECK(full.macros == 0);
  CHECK(full.taps == 0);
  CHECK(fast.ops <= full.ops);
  return fast;
}

// Whether the random layout `sets` makes a valid scenario of `base`.
bool loads(const std::string& base, const std::vector<std::string>& sets) {
  try {
    (void)scenario::load_scenario(base, sets);
    return true;
  } catch (const core::ConfigError&) {
    return false;
  }
}

std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(kRoot + "/scenarios")) {
    if (e.path().extension() != ".yaml") continue;
    if (e.path().string().find("/sweeps/") != std::string::npos) continue;
    files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("fast play reports every shipped scenario exactly as the expanded plan") {
  const auto files = shipped_scenarios();
  REQUIRE(files.size() >= 15);
  for (const auto& f : files) same_report(f, {});
}

TEST_CASE("fast play compresses the repeated units of a large pipeline") {
  const auto s = scenario::load_scenario(kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml");
  const Played full = play(s, false), fast = play(s, true);
  CHECK(fast.json == full.json);
  // 16 stages x 192 micro-batches: every unit but the last backward, whose gradient reductions
  // run on the comm stream (the first backward, which allocates the gradients, has a template of
  // its own).
  CHECK(fast.macros == 16 * 192 + 16 * (192 - 1));
  CHECK(fast.ops * 10 < full.ops);
}

TEST_CASE("fast play matches the expanded plan over schedules, ZeRO, recomputation and pressure") {
  const std::string pipe = kRoot + "/scenarios/parallel/04_pipeline_fits.yaml";
  const std::string zero = kRoot + "/scenarios/parallel/05_zero1.yaml";
  const std::string gpt = kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml";
  for (const char* sched : {"gpipe", "1f1b"})
    for (const char* rec : {"none", "selective", "full"})
      same_report(pipe, {std::string("parallel.schedule=") + sched, std::string("training.recompute=") + rec});
  same_report(pipe, {"parallel.schedule=interleaved", "parallel.virtual_stages=2"});
  // Megatron-Core's micro-batch groups: 32 micro-batches in groups of 8, and of 7 (a last
  // group of 32 % 7 = 4, the pipeline: the least Megatron-Core accepts).
  same_report(pipe, {"parallel.schedule=interleaved", "parallel.virtual_stages=2",
                     "parallel.microbatch_group_size=8"});
  same_report(pipe, {"parallel.schedule=interleaved", "parallel.virtual_stages=2",
                     "parallel.microbatch_group_size=7", "training.recompute=full"});
  // PyTorch's Interleaved1F1B: rounds shorter than the pipeline (3 and 2 micro-batches over 4
  // stages), a round of exactly the pipeline, and two rounds of 5.
  for (const char* global : {"3", "2", "4", "10"})
    same_report(pipe, {"parallel.schedule=interleaved", "parallel.virtual_stages=2",
                       "parallel.pipeline_engine=pytorch", std::string("training.global_batch=") + global});
  same_report(pipe, {"parallel.schedule=gpipe", "parallel.pipeline_engine=pytorch"});
  // PyTorch pipelining with accumulation: schedules of 8 (1F1B) and of 4 (interleaved rounds).
  same_report(pipe, {"parallel.pipeline_engine=pytorch", "parallel.microbatches_per_schedule=8"});
  same_report(pipe, {"parallel.schedule=interleaved", "parallel.virtual_stages=2",
                     "parallel.pipeline_engine=pytorch", "parallel.microbatches_per_schedule=4"});
  for (int z = 0; z <= 3; ++z)
    for (const char* mb : {"1", "2"})
      same_report(zero, {"parallel.zero=" + std::to_string(z), std::string("training.micro_batch=") + mb});
  // Offload: gradient copies after every backward keep those units expanded.
  same_report(zero, {"training.offload.optimizer=cpu"});
  same_report(zero, {"training.offload.optimizer=cpu", "parallel.zero=0", "parallel.data=1", "cluster.gpus_per_node=1"});
  // Out of memory inside macro ops: the first OOM point of each stage, and every one.
  same_report(gpt, {"training.micro_batch=4", "training.global_batch=1536"});
  same_report(gpt, {"training.micro_batch=4", "training.global_batch=1536"}, /*all_ooms=*/true);
  same_report(gpt, {"parallel.schedule=interleaved", "parallel.virtual_stages=2", "training.recompute=full",
                    "training.micro_batch=2"});
  same_report(gpt, {"parallel.tensor=4", "parallel.data=16", "parallel.sequence_parallel=true",
                    "parallel.zero=1", "training.recompute=selective"});
  same_report(gpt, {"parallel.schedule=gpipe", "training.global_batch=512"});
  // Megatron-Core's uneven split: stages of 4 and 8 blocks beside six-block ones.
  same_report(gpt, {"parallel.first_stage_blocks=4", "parallel.last_stage_blocks=8"});
}

TEST_CASE("fast play matches the expanded plan under FSDP and HSDP") {
  // FSDP's units stay expanded (their gathers gate the compute ops): the plans agree op for op.
  const std::string zero = kRoot + "/scenarios/parallel/05_zero1.yaml";
  for (const char* f : {"true", "{reshard_after_forward: false}", "{shard_size: 4}",
                        "{shard_size: 2, reduce_dtype: bf16, param_dtype: fp32}"})
    same_report(zero, {"parallel.zero=0", std::string("parallel.fsdp=") + f});
  // Out of memory inside FSDP units, the first point and every one.
  same_report(zero, {"parallel.zero=0", "parallel.fsdp=true", "training.micro_batch=8"});
  same_report(zero, {"parallel.zero=0", "parallel.fsdp=true", "training.micro_batch=8"},
              /*all_ooms=*/true);
  // On a pipeline (each stage's gradients accumulated to its last backward), with context
  // parallelism (shard groups of data x context ranks).
  for (const char* f : {"true", "{reshard_after_forward: false}", "{shard_size: 2}"})
    same_report(zero, {"parallel.zero=0", "parallel.data=4", "parallel.pipeline=2",
                       std::string("parallel.fsdp=") + f});
  same_report(zero, {"parallel.zero=0", "parallel.data=4", "parallel.pipeline=2",
                     "parallel.schedule=interleaved", "parallel.virtual_stages=2",
                     "parallel.fsdp=true"});
  same_report(zero, {"parallel.zero=0", "parallel.data=4", "parallel.context=2",
                     "parallel.fsdp={shard_size: 2}"});
  // Every dimension at once: Mixtral with tensor 2 x pipeline 2 x data 4 x context 2, expert 4
  // inside data x context, FSDP over data x context.
  same_report(kRoot + "/scenarios/parallel/09_mixtral_8x7b_expert8.yaml",
              {"parallel.fsdp=true", "parallel.pipeline=2", "parallel.data=4", "parallel.expert=4",
               "parallel.context=2", "training.seq_len=8192", "training.global_batch=16",
               "cluster.nodes=4"});
}

TEST_CASE("every op plays for its own duration, costed anew when a kept plan's devices change") {
  // A play costs each work class of its plan's layout once (kept with a plan digest, as a sweep
  // does) and gives every op its class's duration: each op must last exactly op_duration on its
  // stage's device, expanded and compressed, on the play that made the layout and on a later one
  // with every stage's device swapped (a sweep's device axis patches a kept plan so).
  const std::string gpt = kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml";
  const std::string zero = kRoot + "/scenarios/parallel/05_zero1.yaml";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {gpt,
       {"parallel.zero=3", "parallel.tensor=4", "parallel.pipeline=4", "parallel.data=64",
        "training.recompute=selective", "training.global_batch=256"}},
      {gpt,
       {"parallel.zero=2", "parallel.tensor=8", "parallel.pipeline=8", "parallel.data=16",
        "parallel.schedule=interleaved", "parallel.virtual_stages=2", "training.global_batch=256"}},
      {zero,
       {"parallel.zero=3", "training.offload.parameters=cpu", "training.offload.optimizer=cpu"}},
  };
  const auto other = scenario::load_scenario(gpt, {"device=h100-80gb"}).stage_device(0);
  for (const auto& [file, sets] : cases)
    for (const bool compress : {false, true}) {
      INFO(file << (compress ? " compressed" : " expanded"));
      parallel::Plan plan =
          parallel::lower(scenario::load_scenario(file, sets), {.compress = compress});
      exec::PlanDigest digest;
      std::size_t checked = 0;
      std::vector<int> kinds(16, 0);
      for (const bool swapped : {false, true}) {
        if (swapped)
          for (auto& P : plan.programs) P.device = other;
        const exec::Timeline tl = exec::play(plan, {.plan_digest = &digest});
        for (std::size_t p = 0; p < plan.programs.size(); ++p) {
          const parallel::Program& P = plan.programs[p];
          for (std::size_t i = 0; i < P.ops.size(); ++i) {
            const parallel::Op& op = P.ops[i];
            if (op.macro >= 0) continue;  // a macro op lasts its template's profile
            INFO("stage " << p << " op " << i << " " << parallel::to_string(op.kind));
            REQUIRE(tl.devices[p].finish[i] - tl.devices[p].start[i] ==
                    exec::op_duration(plan, P, op));
            ++checked;
            ++kinds[static_cast<std::size_t>(op.kind)];
          }
        }
      }
      CHECK(checked > 100);
      // Communication ops of several kinds were among them, and compute ops (compressed, most
      // units are macro ops).
      CHECK(kinds[static_cast<std::size_t>(parallel::OpKind::all_gather)] > 0);
      CHECK(kinds[static_cast<std::size_t>(parallel::OpKind::reduce_scatter)] > 0);
      if (!compress) CHECK(kinds[static_cast<std::size_t>(parallel::OpKind::backward)] > 0);
    }
}

TEST_CASE("fast play: ZeRO-2 backward units repeat as macro ops, their reduce-scatters as taps") {
  const std::string gpt = kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml";
  const std::vector<std::string> zero2 = {"parallel.zero=2", "parallel.tensor=4", "parallel.pipeline=4",
                                          "parallel.data=64", "training.recompute=selective",
                                          "training.attention=flash"};
  // Deep in OOM (the first point per stage, and every one), and fitting with more micro-batches.
  for (const char* device : {"a100-40gb", "h100-80gb"}) {
    auto sets = zero2;
    sets.insert(sets.end(), {std::string("device=") + device, "training.micro_batch=4", "training.global_batch=2048"});
    same_report(gpt, sets);
    same_report(gpt, sets, /*all_ooms=*/true);
  }
  auto fits = zero2;
  fits.insert(fits.end(), {"training.micro_batch=1", "training.global_batch=1024", "training.seq_len=1024"});
  // Every unit is a macro op (4 stages x 16 micro-batches, forward and backward), each backward
  // followed by its taps.
  const Played fast = same_report(gpt, fits);
  CHECK(fast.macros == 4 * 16 * 2);
  CHECK(fast.taps > 0);
}

TEST_CASE("fast play matches the expanded plan on random ZeRO-2 layouts (taps)") {
  // ZeRO-2 with data parallelism: every backward unit reduce-scatters, its buckets (a few per
  // unit, or one per layer with tiny buckets) as taps of the unit's macro op. A fixed seed.
  std::mt19937 rng(20261204);
  auto pick = [&](std::vector<std::string> v) { return v[rng() % v.size()]; };
  const std::string base = kRoot + "/scenarios/quickstart.yaml";
  int played = 0, tapped = 0;
  for (int n = 0; n < 40; ++n) {
    const std::string schedule = pick({"gpipe", "1f1b", "interleaved"});
    std::vector<std::string> sets = {
        "model=" + pick({"gpt2", "bert-base", "gpt2-medium", "mlp"}),
        "device=" + pick({"v100-16gb", "a100-40gb"}),
        "parallel.pipeline=" + pick({"1", "2", "4"}),
        "parallel.tensor=" + pick({"1", "2"}),
        "parallel.data=" + pick({"2", "4"}),
        "parallel.zero=2",
        "parallel.schedule=" + schedule,
        "parallel.bucket_size=" + pick({"1000B", "8MB", "25MB", "1GB"}),
        "training.micro_batch=" + pick({"1", "4", "16"}),
        "training.gradient_accumulation=" + pick({"1", "3", "8"}),
        "training.recompute=" + pick({"none", "selective", "full"}),
        "training.allocator=" + pick({"caching", "none"}),
        "training.seq_len=" + pick({"128", "512"}),
    };
    if (schedule == "interleaved") sets.push_back("parallel.virtual_stages=2");
    if (!loads(base, sets)) continue;  // indivisible degrees, too few layers for the stages
    tapped += same_report(base, sets, /*all_ooms=*/rng() % 3 == 0).taps > 0;
    ++played;
  }
  CHECK(played >= 20);
  CHECK(tapped >= played / 2);
}

TEST_CASE("fast play matches the expanded plan on random layouts of small models") {
  // A fixed seed: the same 60 layouts every run. Invalid combinations (indivisible degrees,
  // too few layers for the stages) are skipped; most are valid.
  std::mt19937 rng(20261202);
  auto pick = [&](std::vector<std::string> v) { return v[rng() % v.size()]; };
  const std::string base = kRoot + "/scenarios/quickstart.yaml";
  int played = 0;
  for (int n = 0; n < 60; ++n) {
    const std::string schedule = pick({"gpipe", "1f1b", "interleaved"});
    std::vector<std::string> sets = {
        "model=" + pick({"gpt2", "bert-base", "vit-b16", "resnet50", "gpt2-medium", "mlp"}),
        "device=" + pick({"v100-16gb", "a100-40gb", "h100-80gb"}),
        "parallel.pipeline=" + pick({"1", "2", "3", "4"}),
        "parallel.tensor=" + pick({"1", "2"}),
        "parallel.data=" + pick({"1", "2"}),
        "parallel.zero=" + pick({"0", "1", "2"}),
        "parallel.schedule=" + schedule,
        "training.micro_batch=" + pick({"1", "2", "4", "16"}),
        "training.gradient_accumulation=" + pick({"1", "2", "3", "8"}),
        "training.recompute=" + pick({"none", "selective", "full"}),
        "training.attention=" + pick({"standard", "flash"}),
        "training.seq_len=" + pick({"128", "512"}),
    };
    if (schedule == "interleaved") sets.push_back("parallel.virtual_stages=2");
    if (rng() % 4 == 0) sets.push_back("parallel.sequence_parallel=true");
    if (!loads(base, sets)) continue;  // indivisible degrees, too few layers for the stages
    same_report(base, sets, /*all_ooms=*/rng() % 3 == 0);
    ++played;
  }
  CHECK(played >= 30);
}

TEST_CASE("fast play writes down the repeated periods of a steady state as it would play them") {
  // A 1F1B pipeline's steady state repeats a micro-batch later: the player writes those periods
  // down (Timeline::events_skipped) and must report as the expanded plan, which plays every op,
  // and as the compressed plan played without the skip. Out of memory (the OOM points are
  // recorded before or after the periods skipped), recomputation, interleaving (which repeats a
  // group of micro-batches later), GPipe (whose memory moves every period; its backward phase
  // is written down), ZeRO-1, without the allocator model, and every OOM point.
  const std::string gpt = kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml";
  struct Variant {
    std::vector<std::string> sets;
    bool skips;  // whether periods are written down
  };
  const std::vector<Variant> variants = {
      {{}, true},
      {{"training.global_batch=3072"}, true},
      {{"device=a100-40gb"}, true},
      {{"training.micro_batch=2", "training.global_batch=3072", "device=a100-40gb"}, true},
      {{"training.recompute=full", "parallel.pipeline=32", "parallel.data=4"}, true},
      {{"parallel.schedule=interleaved", "parallel.virtual_stages=2"}, true},
      {{"parallel.schedule=interleaved", "parallel.virtual_stages=3", "training.global_batch=3072"},
       true},
      {{"parallel.schedule=gpipe", "training.global_batch=768"}, true},
      {{"parallel.schedule=gpipe", "training.global_batch=768", "device=a100-40gb"}, true},
      {{"parallel.zero=1", "training.recompute=selective", "training.allocator=none"}, true},
  };
  for (const auto& v : variants) {
    const Played fast = same_report(gpt, v.sets);
    const auto s = scenario::load_scenario(gpt, v.sets);
    const Played played = play(s, true, false, /*steady_skip=*/false);
    INFO(v.sets.size() << " overrides, " << fast.skipped << " events written down");
    CHECK(played.json == fast.json);
    CHECK(played.skipped == 0);
    CHECK((fast.skipped > 0) == v.skips);
    CHECK(fast.skipped < fast.events);
  }
  // The Megatron layout: 192 micro-batches on 16 stages, most of them in the steady state: the
  // events of more than 150 micro-batches' two units (a macro op's end each) on every stage are
  // written down.
  const Played megatron = play(scenario::load_scenario(gpt), true);
  CHECK(megatron.skipped > 16 * 2 * 150);
  same_report(gpt, {"training.micro_batch=2", "training.global_batch=3072", "device=a100-40gb"},
              /*all_ooms=*/true);
}

TEST_CASE("fast play matches the expanded plan on random long pipelines written down") {
  // Deep accumulation, so most of each step is a steady state: 1F1B, GPipe and interleaved
  // layouts of small models (a fixed seed: the same 60 every run), with and without the
  // allocator model and memory pressure, each reported as the expanded plan reports it; most
  // write periods down.
  std::mt19937 rng(20261205);
  auto pick = [&](std::vector<std::string> v) { return v[rng() % v.size()]; };
  const std::string base = kRoot + "/scenarios/quickstart.yaml";
  int played = 0, written = 0;
  for (int n = 0; n < 60; ++n) {
    const std::string schedule = pick({"1f1b", "gpipe", "interleaved"});
    std::vector<std::string> sets = {
        "model=" + pick({"gpt2", "bert-base", "gpt2-medium"}),
        "device=" + pick({"v100-16gb", "a100-40gb", "h100-80gb"}),
        "parallel.pipeline=" + pick({"2", "3", "4", "6"}),
        "parallel.tensor=" + pick({"1", "2"}),
        "parallel.data=" + pick({"1", "2", "4"}),
        "parallel.zero=" + pick({"0", "1"}),
        "parallel.schedule=" + schedule,
        "training.micro_batch=" + pick({"1", "2", "8"}),
        "training.gradient_accumulation=" + pick({"24", "36", "48"}),
        "training.recompute=" + pick({"none", "selective", "full"}),
        "training.seq_len=" + pick({"256", "1024"}),
        "training.allocator=" + pick({"caching", "caching", "none"}),
    };
    if (schedule == "interleaved") sets.push_back("parallel.virtual_stages=2");
    if (!loads(base, sets)) continue;  // indivisible degrees, too few layers for the stages
    const Played fast = same_report(base, sets, /*all_ooms=*/rng() % 4 == 0);
    ++played;
    written += fast.skipped > 0;
  }
  CHECK(played >= 40);
  CHECK(written * 4 >= played * 3);
}

TEST_CASE("fast play writes down a GPipe phase whose memory grows every period") {
  // ViT-B/16 on two stages: the first (with the patch embedding) is the slower, so the second
  // waits for each forward and the forward phase repeats, each period booking one more
  // micro-batch's activations. The periods written down move the ledger and its peak on; where
  // a device would pass its capacity they stop short, so the OOM point is played. The host's
  // dispatch floor is off: ViT-B's short kernels are host-bound on an A100, which evens the two
  // stages out and leaves the second nothing to wait for. ViT's 197 tokens are not a multiple of
  // 4, so Megatron's fused softmax does not serve them and each micro-batch keeps the fallback's
  // fp32 probabilities: 48 micro-batches in flight fit the A100 (68 GiB), 64 would not (90 GiB).
  const std::string base = kRoot + "/scenarios/quickstart.yaml";
  for (const char* device : {"a100-80gb", "v100-16gb"})
    for (const char* allocator : {"caching", "none"}) {
      const std::vector<std::string> sets = {"model=vit-b16",
                                             std::string("device=") + device,
                                             "device.host_dispatch=0s",
                                             "parallel.pipeline=2",
                                             "parallel.schedule=gpipe",
                                             "training.micro_batch=32",
                                             "training.gradient_accumulation=48",
                                             std::string("training.allocator=") + allocator};
      const Played fast = same_report(base, sets);
      CHECK(fast.skipped > 0);
      // The V100 runs out of memory as the forward phase books its activations.
      CHECK((fast.json.find("\"fits\": false") != std::string::npos) ==
            (std::string(device) == "v100-16gb"));
    }
}
