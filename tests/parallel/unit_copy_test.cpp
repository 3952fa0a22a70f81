// Expanded units copied from the last of their kind (sim/parallel/unit_copy.cpp) against the
// plain walk, the oracle: the compressed plan lowered with copies must equal the one lowered
// without, field by field (every op, effect, dependency, macro template, GEMM shape, the model
// states), and their reports byte for byte — ZeRO-3 on a pipeline (in and out of memory, the
// first OOM point and every one, full recomputation, micro-batch 2, interleaved, GPipe, no
// allocator model, a limit on the ops that refuses the plan), and the layouts whose passes keep
// state across units (FSDP/HSDP, expert and context parallelism, offload), which copy nothing.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/summary.hpp"
#include "sim/report/writers.hpp"
#include "sim/scenario/scenario.hpp"

namespace {

using namespace trainsim;
using parallel::Plan;
using parallel::Program;

const std::string kRoot = TRAINSIM_SOURCE_DIR;

// Every field of two programs; the first difference is named.
void same_program(const Program& a, const Program& b) {
  INFO("stage " << a.stage);
  CHECK(a.stage == b.stage);
  CHECK(a.count == b.count);
  CHECK(a.straggler == b.straggler);
  CHECK(a.persistent.bytes == b.persistent.bytes);
  CHECK(a.model_states.bytes == b.model_states.bytes);
  CHECK(a.host.bytes == b.host.bytes);
  CHECK(a.parameters == b.parameters);
  CHECK(a.paged == b.paged);
  CHECK(a.load == b.load);
  CHECK(a.first_layer == b.first_layer);
  CHECK(a.last_layer == b.last_layer);
  REQUIRE(a.ops.size() == b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    INFO("op " << i);
    REQUIRE(a.ops[i] == b.ops[i]);
  }
  CHECK(a.effects == b.effects);
  REQUIRE(a.deps.size() == b.deps.size());
  for (std::size_t i = 0; i < a.deps.size(); ++i) {
    INFO("dependency " << i);
    REQUIRE(a.deps[i].program == b.deps[i].program);
    REQUIRE(a.deps[i].index == b.deps[i].index);
  }
  REQUIRE(a.macros.size() == b.macros.size());
  for (std::size_t i = 0; i < a.macros.size(); ++i) {
    CHECK(a.macros[i].begin == b.macros[i].begin);
    CHECK(a.macros[i].end == b.macros[i].end);
    CHECK(a.macros[i].taps_begin == b.macros[i].taps_begin);
    CHECK(a.macros[i].taps_end == b.macros[i].taps_end);
  }
  CHECK(a.macro_ops == b.macro_ops);
  CHECK(a.macro_taps == b.macro_taps);
  CHECK(a.gemm_shapes == b.gemm_shapes);
}

std::string report(const scenario::Scenario& s, const Plan& plan, bool all_ooms) {
  exec::PlayOptions opt;
  opt.all_ooms = all_ooms;
  const exec::Timeline tl = exec::play(plan, opt);
  std::ostringstream out;
  report::write_json(out, report::summarize(s, plan, tl, all_ooms));
  return out.str();
}

// Lowers `sets` on `file` with and without copies, compares the plans and their reports, and
// returns how many units were copied.
std::int64_t check_copies(const std::string& file, const std::vector<std::string>& sets,
                          bool all_ooms = false) {
  const auto s = scenario::load_scenario(file, sets);
  std::string what = file;
  for (const auto& k : sets) what += " --set " + k;
  INFO(what);
  const Plan plain = parallel::lower(s, {.compress = true, .copy_units = false});
  const Plan copied = parallel::lower(s, {.compress = true, .copy_units = true});
  CHECK(plain.units_copied == 0);
  REQUIRE(plain.programs.size() == copied.programs.size());
  for (std::size_t p = 0; p < plain.programs.size(); ++p)
    same_program(plain.programs[p], copied.programs[p]);
  CHECK(plain.model_flops == copied.model_flops);
  CHECK(plain.hardware_flops == copied.hardware_flops);
  CHECK(report(s, plain, all_ooms) == report(s, copied, all_ooms));
  return copied.units_copied;
}

}  // namespace

TEST_CASE("unit copies: ZeRO-3 on a pipeline lowers to the plain walk's plan") {
  const std::string gpt = kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml";
  // Tensor 8, pipeline 16, data 8, global batch 512: 64 micro-batches, 128 units per stage,
  // 2,048 in all. A kind needs two plain units found congruent before it is copied, and the
  // units of a 1F1B stage fall into a few kinds (warm-up forwards, steady forwards after a
  // backward, backwards, the first and the last backward), so all but a few dozen per stage
  // are copies: more than three quarters.
  const std::int64_t z3 = check_copies(gpt, {"parallel.zero=3", "training.global_batch=512"});
  CHECK(z3 * 4 > 2048 * 3);
  CHECK(z3 < 2048);
  check_copies(gpt, {"parallel.zero=3", "training.global_batch=512", "device=a100-40gb"});
  check_copies(gpt, {"parallel.zero=3", "training.global_batch=512", "device=a100-40gb"},
               /*all_ooms=*/true);
  CHECK(check_copies(gpt, {"parallel.zero=3", "training.global_batch=512",
                           "training.recompute=full"}) > 0);
  CHECK(check_copies(gpt, {"parallel.zero=3", "training.global_batch=1024",
                           "training.micro_batch=2"}) > 0);
  CHECK(check_copies(gpt, {"parallel.zero=3", "training.global_batch=512",
                           "parallel.schedule=interleaved", "parallel.virtual_stages=2"}) > 0);
  CHECK(check_copies(gpt, {"parallel.zero=3", "training.global_batch=256",
                           "parallel.schedule=gpipe"}) > 0);
  CHECK(check_copies(gpt, {"parallel.zero=3", "training.global_batch=512",
                           "training.allocator=none"}) > 0);
  // Buckets of several layers (5e8 elements: a block's attention and MLP shards hold 75M and
  // 150M per tensor rank), past max_live_parameters (1e9: a bucket waits for the last layer of
  // the one before), and without data parallelism.
  CHECK(check_copies(gpt, {"parallel.zero=3", "training.global_batch=512",
                           "parallel.zero3={prefetch_bucket_size: 500000000}"}) > 0);
  check_copies(gpt, {"parallel.zero=3", "training.global_batch=256", "parallel.data=1",
                     "cluster.nodes=16"});
  // ZeRO 0-2 keep no unit expanded on this layout past the first and last backward: nothing to
  // copy, the same plan.
  CHECK(check_copies(gpt, {"parallel.zero=1", "training.global_batch=512"}) == 0);
  CHECK(check_copies(gpt, {"parallel.zero=2", "training.global_batch=512"}) == 0);
}

TEST_CASE("unit copies: expert parallelism on a pipeline lowers to the plain walk's plan") {
  // Mixtral 8x7B, tensor 2, pipeline 2, data 8, expert 8: 32 micro-batches; each MoE layer's
  // all-to-alls gate its compute (the pending combine is reset at each unit's start), and the
  // last backward all-reduces the routed experts' gradients (a kind of its own).
  const std::string moe = kRoot + "/scenarios/parallel/09_mixtral_8x7b_expert8.yaml";
  CHECK(check_copies(moe, {"parallel.pipeline=2", "cluster.nodes=4",
                           "training.global_batch=256"}) > 0);
  check_copies(moe, {"parallel.pipeline=2", "cluster.nodes=4", "training.global_batch=256",
                     "training.expert_imbalance=1.5"});
  check_copies(moe, {"parallel.pipeline=2", "cluster.nodes=4", "training.global_batch=1024",
                     "training.micro_batch=4"}, /*all_ooms=*/true);
}

TEST_CASE("unit copies: a limit on the ops refuses the plan where the plain walk does") {
  const std::string gpt = kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml";
  for (const char* limit : {"limits.max_ops=30000", "limits.max_ops=100000"}) {
    const auto s = scenario::load_scenario(
        gpt, {"parallel.zero=3", "training.global_batch=512", limit});
    std::string plain, copied;
    try {
      parallel::lower(s, {.compress = true, .copy_units = false});
    } catch (const core::ConfigError& e) {
      plain = e.what();
    }
    try {
      parallel::lower(s, {.compress = true, .copy_units = true});
    } catch (const core::ConfigError& e) {
      copied = e.what();
    }
    INFO(limit);
    CHECK(!plain.empty());
    CHECK(copied == plain);
  }
}

TEST_CASE("unit copies: passes that keep state across units lower the plain way") {
  const std::string gpt = kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml";
  CHECK(check_copies(gpt, {"parallel.pipeline=1", "parallel.data=128", "parallel.fsdp=true",
                           "training.global_batch=4096", "training.accumulate_grads=fused"}) == 0);
  CHECK(check_copies(kRoot + "/scenarios/parallel/10_llama3_70b_fsdp_pp2.yaml", {}) == 0);
  CHECK(check_copies(gpt, {"parallel.zero=3", "training.global_batch=256",
                           "training.offload={optimizer: cpu, parameters: cpu}"}) == 0);
  CHECK(check_copies(kRoot + "/scenarios/context/02_llama3_8b_128k_context8.yaml",
                     {"parallel.pipeline=2", "cluster.nodes=2", "training.global_batch=16"}) == 0);
}
