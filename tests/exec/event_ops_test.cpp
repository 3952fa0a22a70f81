// The event loop's compact op records (sim/exec/event_ops.hpp): what Player::start, finish and
// start_macro read of an op, 16 bytes per op in the play layout instead of the op's 128. A play
// reading the records must report byte for byte as a play reading each op from the plan (the
// plain path, ReadEventOps(false)) — step time, peaks and their breakdown, OOM points (the first
// per device and every one), communication, events — on compressed plans (macro ops with folded
// transfers, ZeRO-2 taps), on expanded units (ZeRO-3, FSDP, experts, context), on the expanded
// plan, and on a plan digest's kept layout whichever way the play that made it read.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "sim/exec/event_ops.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/summary.hpp"
#include "sim/report/writers.hpp"
#include "sim/scenario/scenario.hpp"

namespace {

using namespace trainsim;

const std::string kRoot = TRAINSIM_SOURCE_DIR;
const std::string kGpt = kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml";

std::string json(const scenario::Scenario& s, const parallel::Plan& plan, const exec::Timeline& tl,
                 bool all_ooms) {
  std::ostringstream out;
  report::write_json(out, report::summarize(s, plan, tl, all_ooms));
  return out.str();
}

// Plays `sets` on `file` with the records and without, compressed and expanded; returns the
// compressed play's report.
std::string check_same(const std::string& file, const std::vector<std::string>& sets,
                       bool all_ooms = false) {
  const auto s = scenario::load_scenario(file, sets);
  std::string what = file;
  for (const auto& k : sets) what += " --set " + k;
  INFO(what << (all_ooms ? " (every OOM point)" : ""));
  std::string compressed;
  for (const bool compress : {true, false}) {
    const parallel::Plan plan = parallel::lower(s, {.compress = compress});
    exec::PlayOptions opt;
    opt.all_ooms = all_ooms;
    std::string plain, records;
    {
      const exec::ReadEventOps off(false);
      CHECK_FALSE(exec::read_event_ops());
      plain = json(s, plan, exec::play(plan, opt), all_ooms);
    }
    CHECK(exec::read_event_ops());  // back to the default
    records = json(s, plan, exec::play(plan, opt), all_ooms);
    INFO((compress ? "compressed" : "expanded"));
    CHECK(records == plain);
    if (compress) compressed = records;
  }
  return compressed;
}

}  // namespace

TEST_CASE("event ops: a record says what the event loop reads of its op") {
  parallel::Op plain;
  plain.alloc_begin = 7;
  plain.alloc_end = 9;
  plain.free_begin = 3;
  plain.free_end = 12;
  const exec::EventOp a = exec::EventOp::of(plain);
  CHECK_FALSE(a.is_macro());
  CHECK(a.macro() == -1);
  CHECK_FALSE(a.arrival());
  CHECK(a.alloc_begin == 7);
  CHECK(a.alloc_end == 9);
  CHECK(a.free_begin == 3);
  CHECK(a.free_end == 12);
  // A macro op's own ranges are empty: its record names its template and folded transfer.
  parallel::Op macro;
  macro.macro = 5;
  macro.arrival = true;
  const exec::EventOp b = exec::EventOp::of(macro);
  CHECK(b.is_macro());
  CHECK(b.macro() == 5);
  CHECK(b.arrival());
  macro.macro = 0;
  macro.arrival = false;
  const exec::EventOp c = exec::EventOp::of(macro);
  CHECK(c.is_macro());
  CHECK(c.macro() == 0);
  CHECK_FALSE(c.arrival());
  // An op without effects and a plain op whose ranges start at 0 are not macro ops.
  CHECK_FALSE(exec::EventOp::of(parallel::Op{}).is_macro());
}

TEST_CASE("event ops: plays read the records and report as plays that read the ops") {
  // ZeRO-1 on the Megatron layout: macro ops with folded transfers.
  check_same(kGpt, {"training.global_batch=256"});
  // ZeRO-2: backward units as macro ops, their reduce-scatters as taps; out of memory, the
  // first point per stage and every one.
  const std::vector<std::string> zero2 = {"parallel.zero=2",
                                          "parallel.tensor=4",
                                          "parallel.pipeline=4",
                                          "parallel.data=64",
                                          "training.recompute=selective",
                                          "device=a100-40gb",
                                          "training.micro_batch=4",
                                          "training.global_batch=2048"};
  check_same(kGpt, zero2);
  check_same(kGpt, zero2, /*all_ooms=*/true);
  // ZeRO-3 on tensor 8 / pipeline 16 / data 8: every unit expanded (copied units, the steady
  // state written down); out of memory on A100-40GB.
  check_same(kGpt, {"parallel.zero=3", "training.global_batch=512"});
  check_same(kGpt, {"parallel.zero=3", "training.global_batch=512", "device=a100-40gb"},
             /*all_ooms=*/true);
  // Interleaved schedule.
  check_same(kGpt, {"parallel.zero=3", "training.global_batch=512", "parallel.schedule=interleaved",
                    "parallel.virtual_stages=2"});
  // FSDP, experts, context parallelism.
  check_same(kRoot + "/scenarios/parallel/08_llama3_8b_fsdp.yaml",
             {"training.gradient_accumulation=16", "training.global_batch=128"});
  check_same(kRoot + "/scenarios/parallel/09_mixtral_8x7b_expert8.yaml",
             {"parallel.pipeline=2", "cluster.nodes=4", "training.global_batch=256"});
  check_same(kRoot + "/scenarios/context/02_llama3_8b_128k_context8.yaml",
             {"parallel.pipeline=2", "cluster.nodes=2", "training.global_batch=16"});
  // A single GPU out of memory (activations) and offload.
  check_same(kRoot + "/scenarios/single_gpu/02_activation_oom.yaml", {}, /*all_ooms=*/true);
  check_same(kRoot + "/scenarios/single_gpu/04_zero_offload.yaml", {});
}

TEST_CASE(
    "event ops: a digest's kept layout serves plays that read records and plays that do not") {
  // A sweep's later points take the layout its plan's first play made (PlanDigest::layout): made
  // by a play without records, it must still carry them for a play with, and the other way round.
  const auto s = scenario::load_scenario(
      kGpt, {"parallel.zero=3", "training.global_batch=512", "device=a100-40gb"});
  const parallel::Plan plan = parallel::lower(s, {});
  std::string alone;
  {
    const exec::ReadEventOps off(false);
    alone = json(s, plan, exec::play(plan), false);
  }
  for (const bool first : {false, true}) {
    INFO("the digest's first play " << (first ? "reads records" : "reads ops"));
    exec::PlanDigest digest;
    std::string one, two;
    {
      const exec::ReadEventOps set(first);
      one = json(s, plan, exec::play(plan, {.plan_digest = &digest}), false);
    }
    {
      const exec::ReadEventOps set(!first);
      two = json(s, plan, exec::play(plan, {.plan_digest = &digest}), false);
    }
    CHECK(one == alone);
    CHECK(two == alone);
  }
}
