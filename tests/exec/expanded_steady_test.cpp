// The steady-state skip on plans whose units stay expanded (ZeRO-3, FSDP/HSDP, expert and
// context parallelism): anchored at the first program's compute ops
// (sim/exec/expanded_anchors.cpp), it must report byte for byte as the expanded plan, which
// never skips, and as the compressed plan played without the skip — step time, peaks and their
// breakdown, every comm kind and its exposed part, OOM points (the first per device and every
// one).
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/summary.hpp"
#include "sim/report/writers.hpp"
#include "sim/scenario/scenario.hpp"

namespace {

using namespace trainsim;

const std::string kRoot = TRAINSIM_SOURCE_DIR;

struct Played {
  std::string json;
  std::uint64_t events = 0, skipped = 0;
};

Played play(const scenario::Scenario& s, bool compress, bool steady_skip, bool all_ooms) {
  const parallel::Plan plan = parallel::lower(s, {.compress = compress});
  exec::PlayOptions opt;
  opt.steady_skip = steady_skip;
  opt.all_ooms = all_ooms;
  const exec::Timeline tl = exec::play(plan, opt);
  std::ostringstream out;
  report::write_json(out, report::summarize(s, plan, tl, all_ooms));
  return {out.str(), tl.events, tl.events_skipped};
}

// Plays `sets` on `file` three ways and returns the fast play (skip on).
Played check_same(const std::string& file, const std::vector<std::string>& sets,
                  bool all_ooms = false) {
  const auto s = scenario::load_scenario(file, sets);
  const Played full = play(s, false, true, all_ooms);
  const Played plain = play(s, true, false, all_ooms);
  const Played fast = play(s, true, true, all_ooms);
  std::string what = file;
  for (const auto& k : sets) what += " --set " + k;
  INFO(what << ": " << fast.skipped << " of " << fast.events << " events written down");
  CHECK(fast.json == full.json);
  CHECK(plain.json == full.json);
  CHECK(full.skipped == 0);
  CHECK(plain.skipped == 0);
  CHECK(fast.skipped < fast.events);
  return fast;
}

}  // namespace

TEST_CASE("expanded units: ZeRO-3 on a pipeline writes down its 1F1B steady state exactly") {
  const std::string gpt = kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml";
  // Tensor 8, pipeline 16, data 8, global batch 512: 64 micro-batches per stage. Every unit
  // stays expanded (each layer's gather gates its compute op).
  const std::vector<std::string> z3 = {"parallel.zero=3", "training.global_batch=512"};
  const Played fast = check_same(gpt, z3);
  // Every stage is in its steady state from micro-batch 16 (the last stage's first forward) to
  // micro-batch 48 (the first stage's cooldown), 32 of 64 micro-batches, less the periods it
  // takes to confirm it (a light mark, a full mark, a period to compare): more than a quarter of
  // the events are written down (39,200 of 125,456 with DeepSpeed's prefetch buckets, whose
  // gathers are issued a layer earlier and skip the persistent norms; 63,342 of 150,160 with a
  // gather per layer one layer ahead).
  CHECK(fast.skipped * 4 > fast.events);
  // Out of memory: the gathered layers on A100-40GB (the OOM points are played, the periods
  // after them written down), the first point per device and every one.
  check_same(gpt, {"parallel.zero=3", "training.global_batch=512", "device=a100-40gb"});
  check_same(gpt, {"parallel.zero=3", "training.global_batch=512", "device=a100-40gb"},
             /*all_ooms=*/true);
  // Recomputation, micro-batch 2, interleaved (a group of 16 micro-batches per period), GPipe.
  check_same(gpt, {"parallel.zero=3", "training.global_batch=512", "training.recompute=full"});
  check_same(gpt, {"parallel.zero=3", "training.global_batch=1024", "training.micro_batch=2"});
  check_same(gpt, {"parallel.zero=3", "training.global_batch=512", "parallel.schedule=interleaved",
                   "parallel.virtual_stages=2"});
  check_same(gpt, {"parallel.zero=3", "training.global_batch=256", "parallel.schedule=gpipe"});
  // Without the allocator model.
  check_same(gpt, {"parallel.zero=3", "training.global_batch=512", "training.allocator=none"});
}

TEST_CASE("expanded units: FSDP and HSDP write down their repeated micro-batches exactly") {
  // The GPT-3 example's Megatron fp32 main_grad is not FSDP's: its reduce_dtype rules there.
  const std::string gpt = kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml";
  const std::vector<std::string> fsdp = {"parallel.pipeline=1", "parallel.data=128", "parallel.fsdp=true",
                                         "training.global_batch=4096", "training.accumulate_grads=fused"};
  check_same(gpt, fsdp);
  check_same(gpt, {"parallel.pipeline=1", "parallel.data=128", "parallel.fsdp={shard_size: 8}",
                   "training.global_batch=4096", "training.accumulate_grads=fused"});
  check_same(gpt, {"parallel.pipeline=1", "parallel.data=128", "parallel.fsdp={reshard_after_forward: false}",
                   "training.global_batch=4096", "training.accumulate_grads=fused"});
  auto oom = fsdp;
  oom.push_back("device=a100-40gb");
  oom.push_back("training.micro_batch=4");
  check_same(gpt, oom);
  check_same(gpt, oom, /*all_ooms=*/true);
  // The Llama-3-8B scenarios as shipped.
  check_same(kRoot + "/scenarios/parallel/08_llama3_8b_fsdp.yaml",
             {"training.gradient_accumulation=16", "training.global_batch=128"});
  check_same(kRoot + "/scenarios/parallel/08_llama3_8b_hsdp_2nodes.yaml",
             {"training.gradient_accumulation=16", "training.global_batch=256"});
  // On a pipeline: the forwards between backwards find their units gathered.
  check_same(kRoot + "/scenarios/parallel/10_llama3_70b_fsdp_pp2.yaml", {});
  check_same(kRoot + "/scenarios/parallel/10_llama3_70b_fsdp_pp2.yaml",
             {"parallel.fsdp=true", "training.global_batch=64"});
}

TEST_CASE("expanded units: expert parallelism on a pipeline writes down its steady state") {
  // Mixtral 8x7B, tensor 2, pipeline 2, data 8 with expert 8: 32 micro-batches per stage; every
  // MoE layer's all-to-all dispatch and combine gate its compute.
  const std::string moe = kRoot + "/scenarios/parallel/09_mixtral_8x7b_expert8.yaml";
  const std::vector<std::string> pp = {"parallel.pipeline=2", "cluster.nodes=4",
                                       "training.global_batch=256"};
  const Played fast = check_same(moe, pp);
  CHECK(fast.skipped * 2 > fast.events);
  auto imbalance = pp;
  imbalance.push_back("training.expert_imbalance=1.5");
  check_same(moe, imbalance);
  auto oom = pp;
  oom.push_back("training.micro_batch=4");
  oom.push_back("training.global_batch=1024");
  check_same(moe, oom);
  check_same(moe, oom, /*all_ooms=*/true);
}

TEST_CASE("expanded units: context parallelism on a pipeline reports as the expanded plan") {
  // Llama-3-8B at 128k tokens, context 8 on 2 stages, 16 micro-batches: every attention layer's
  // K/V exchange keeps its unit expanded; ring and all-gather attention, and out of memory
  // without full recomputation (the first OOM point and every one).
  const std::string cp = kRoot + "/scenarios/context/02_llama3_8b_128k_context8.yaml";
  const std::vector<std::string> pp = {"parallel.pipeline=2", "cluster.nodes=2",
                                       "training.global_batch=16"};
  check_same(cp, pp);
  auto gather = pp;
  gather.push_back("parallel.context_attention=allgather");
  check_same(cp, gather);
  auto oom = pp;
  oom.push_back("training.recompute=selective");
  check_same(cp, oom);
  check_same(cp, oom, /*all_ooms=*/true);
}
TEST_CASE("zz measure") {
  const auto s = scenario::load_scenario(kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml", {"parallel.zero=3"});
  const Played a = play(s, true, true, false);
  WARN("MEASURE " << a.skipped << " of " << a.events);
}
