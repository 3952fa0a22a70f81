// What `plan` searches besides data x tensor x pipeline — FSDP and HSDP for every model, expert
// degrees for mixture-of-experts models, context degrees for long sequences — and sweep axes
// over parallel.expert, parallel.context and parallel.fsdp.shard_size, on small models.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/core/units.hpp"
#include "sim/sweep/plan.hpp"
#include "sim/sweep/runner.hpp"
#include "sim/sweep/spec.hpp"
#include "tests/scenario/scenario_files.hpp"

using namespace trainsim;

namespace {

// Mixtral's shape cut to 2 blocks of h 256, 4 heads (2 K/V), 8 SwiGLU experts of f 512, top-2:
// one MoE layer's routed experts hold 8 x 3 x 256 x 512 = 3,145,728 parameters.
const char* kMoe = R"(name: moe
model: {preset: mixtral-8x7b, layers: 2, hidden: 256, heads: 4, kv_heads: 2, ffn: 512, vocab: 1000}
device: h100-80gb
training: {micro_batch: 1, global_batch: 8, seq_len: 512, attention: flash}
parallel: {data: 8}
)";

// Llama 2's shape cut likewise, dense; long sequences allowed.
const char* kDense = R"(name: dense
model: {preset: llama2-7b, layers: 2, hidden: 256, heads: 4, kv_heads: 4, ffn: 512, vocab: 1000, max_positions: 65536}
device: h100-80gb
training: {micro_batch: 1, global_batch: 8, seq_len: 512, attention: flash}
parallel: {data: 8}
)";

sweep::PlanOptions every_fit(std::int64_t gpus) {
  sweep::PlanOptions o;
  o.gpus = gpus;
  o.jobs = 1;
  o.max_micro_batch = 1;
  o.confirm = 1000;  // confirm every layout that fits, so `ranked` holds them all
  return o;
}

bool any(const sweep::PlanResult& r, auto pred) {
  return std::any_of(r.ranked.begin(), r.ranked.end(), pred);
}

}  // namespace

TEST_CASE("plan searches expert degrees and FSDP for a mixture-of-experts model", "[sweep][plan]") {
  const test::TempDir dir;
  const auto base = sweep::BaseScenario::from_file(dir.write("moe.yaml", kMoe));
  const sweep::PlanResult r = sweep::plan(base, {}, every_fit(8));
  // Data 8 (tensor 1, pipeline 1): the expert degree is gcd(8, 8 experts) = 8.
  CHECK(any(r, [](const sweep::Candidate& c) {
    return c.layout.data == 8 && c.layout.expert == 8 &&
           std::count(c.sets.begin(), c.sets.end(), "parallel.expert=8") == 1;
  }));
  // FSDP over the 8 data ranks with expert degree gcd(8 x context 1, 8) = 8: the experts
  // sharded over the 8 / 8 = 1 rank holding each.
  CHECK(any(r, [](const sweep::Candidate& c) {
    return c.layout.data == 8 && c.layout.fsdp_shard == 8 && c.layout.expert == 8 &&
           std::count(c.sets.begin(), c.sets.end(), "parallel.expert=8") == 1;
  }));
  // FSDP on a pipeline: 2 stages (one block each) x data 4, experts over gcd(4, 8) = 4.
  CHECK(any(r, [](const sweep::Candidate& c) {
    return c.layout.pipeline == 2 && c.layout.data == 4 && c.layout.fsdp_shard == 4 &&
           c.layout.expert == 4;
  }));
}

TEST_CASE("plan's expert-parallel candidates reduce overlapped over a base that reduces after the backward", "[sweep][plan]") {
  // grad_reduce: after_backward_in_place refuses parallel.expert > 1 (the routed experts reduce
  // over their own group), so each expert candidate sets overlapped; expert 1 keeps the base's.
  const test::TempDir dir;
  const auto base = sweep::BaseScenario::from_file(dir.write("moe.yaml", kMoe));
  const auto r = sweep::plan(base, {"parallel.grad_reduce=after_backward_in_place"}, every_fit(8));
  const auto overlapped = [](const sweep::Candidate& c) {
    return std::count(c.sets.begin(), c.sets.end(), "parallel.grad_reduce=overlapped") == 1;
  };
  CHECK(any(r, [&](const sweep::Candidate& c) {
    return c.layout.expert == 8 && c.layout.fsdp_shard == 0 && c.layout.zero <= 1 && overlapped(c);
  }));
  CHECK_FALSE(any(r, [&](const sweep::Candidate& c) {
    return c.layout.expert > 1 && !overlapped(c);
  }));
  CHECK(any(r, [&](const sweep::Candidate& c) {
    return c.layout.expert == 1 && c.layout.fsdp_shard == 0 && c.layout.zero <= 1 && !overlapped(c);
  }));
}

TEST_CASE("plan searches FSDP and HSDP for a dense model", "[sweep][plan]") {
  const test::TempDir dir;
  const auto base = sweep::BaseScenario::from_file(dir.write("dense.yaml", kDense));
  CHECK(any(sweep::plan(base, {}, every_fit(8)),
            [](const sweep::Candidate& c) { return c.layout.data == 8 && c.layout.fsdp_shard == 8; }));
  // 16 GPUs on 8-GPU nodes, global batch 16: HSDP shards within each node of 8.
  const auto r16 = sweep::plan(base, {"training.global_batch=16"}, every_fit(16));
  CHECK(any(r16, [](const sweep::Candidate& c) { return c.layout.data == 16 && c.layout.fsdp_shard == 8; }));
  CHECK(any(r16, [](const sweep::Candidate& c) { return c.layout.data == 16 && c.layout.fsdp_shard == 16; }));
}

TEST_CASE("plan's FSDP candidates reduce as FSDP does, not with the base's fp32 main_grad", "[sweep][plan]") {
  // A Megatron-style base (accumulate_grads: fused-fp32, which parallel.fsdp refuses): its ZeRO
  // candidates keep the fp32 gradients, its FSDP ones set fused and still fit.
  const test::TempDir dir;
  const auto base = sweep::BaseScenario::from_file(dir.write("dense.yaml", kDense));
  const auto r = sweep::plan(base, {"training.precision=bf16", "training.accumulate_grads=fused-fp32"}, every_fit(8));
  const auto fused = [](const sweep::Candidate& c) {
    return std::count(c.sets.begin(), c.sets.end(), "training.accumulate_grads=fused") == 1;
  };
  CHECK(any(r, [&](const sweep::Candidate& c) { return c.layout.fsdp_shard == 8 && fused(c); }));
  CHECK(any(r, [&](const sweep::Candidate& c) { return c.layout.fsdp_shard == 0 && c.layout.data == 8; }));
  CHECK_FALSE(any(r, [&](const sweep::Candidate& c) { return c.layout.fsdp_shard == 0 && fused(c); }));
  // Megatron-Core's reduction after the backward (grad_reduce: after_backward_in_place) holds for
  // ZeRO 0 and 1; the ZeRO-3 and FSDP candidates reduce as they shard (overlapped).
  auto climb = every_fit(8);
  climb.objective = sweep::Objective::memory;  // every rung that fits is ranked, ZeRO-3's too
  const auto g = sweep::plan(base, {"parallel.grad_reduce=after_backward_in_place"}, climb);
  const auto overlapped = [](const sweep::Candidate& c) {
    return std::count(c.sets.begin(), c.sets.end(), "parallel.grad_reduce=overlapped") == 1;
  };
  CHECK(any(g, [&](const sweep::Candidate& c) { return c.layout.fsdp_shard == 8 && overlapped(c); }));
  CHECK(any(g, [&](const sweep::Candidate& c) { return c.layout.zero == 3 && overlapped(c); }));
  CHECK(any(g, [&](const sweep::Candidate& c) { return c.layout.zero == 1 && c.layout.data == 8; }));
  CHECK_FALSE(any(g, [&](const sweep::Candidate& c) { return c.layout.zero <= 1 && c.layout.fsdp_shard == 0 && overlapped(c); }));
}

TEST_CASE("plan searches context degrees for a long sequence only", "[sweep][plan]") {
  const test::TempDir dir;
  const auto base = sweep::BaseScenario::from_file(dir.write("dense.yaml", kDense));
  auto has_context = [](const sweep::Candidate& c) { return c.layout.context > 1; };
  CHECK_FALSE(any(sweep::plan(base, {}, every_fit(8)), has_context));
  // 32,768 tokens and global batch 1 on 8 GPUs: data 1, so tensor x pipeline x context = 8,
  // context 2, 4 or 8 (each divides 32,768 / 2).
  const auto r = sweep::plan(base, {"training.seq_len=32768", "training.global_batch=1", "parallel.data=1"}, every_fit(8));
  CHECK(any(r, [](const sweep::Candidate& c) { return c.layout.context == 8 && c.layout.tensor == 1; }));
  // With FSDP too: 32,768 tokens, global batch 2 on 8 GPUs: data 2 x context 4, FSDP over the
  // 2 data ranks (a shard group of 2 x 4 ranks).
  const auto f = sweep::plan(base, {"training.seq_len=32768", "training.global_batch=2", "parallel.data=2"},
                             every_fit(8));
  CHECK(any(f, [](const sweep::Candidate& c) {
    return c.layout.context == 4 && c.layout.data == 2 && c.layout.fsdp_shard == 2;
  }));
}

TEST_CASE("sweep axes take expert, context and FSDP shard degrees", "[sweep]") {
  const test::TempDir dir;
  dir.write("moe.yaml", kMoe);
  dir.write("dense.yaml", kDense);
  auto run = [&](const std::string& name, const std::string& text) {
    const auto spec = sweep::load_sweep(dir.write(name, text));
    std::vector<report::Summary> out;
    for (const auto& p : sweep::expand(spec)) {
      const auto r = sweep::run_point(spec, p);
      REQUIRE(r.status == sweep::Status::fits);
      out.push_back(*r.summary);
    }
    return out;
  };
  // Expert degree E leaves 1/E of each of the 2 MoE layers' 3,145,728 routed parameters.
  const auto e = run("experts.yaml", "base: {file: moe.yaml}\naxes:\n  parallel.expert: [1, 2, 4]\n");
  REQUIRE(e.size() == 3);
  CHECK(e[0].devices[0].parameters - e[1].devices[0].parameters == 2 * 3'145'728 / 2);
  CHECK(e[0].devices[0].parameters - e[2].devices[0].parameters == 2 * 3'145'728 * 3 / 4);
  // Context degree C: K/V exchanged (comm kind context_kv) once C > 1.
  const auto c = run("context.yaml",
                     "base: {file: dense.yaml}\naxes:\n  parallel.context: [1, 4]\n");
  REQUIRE(c.size() == 2);
  auto kv = [](const report::Summary& s) {
    return std::any_of(s.comm.begin(), s.comm.end(), [](const auto& k) { return k.kind == "context_kv"; });
  };
  CHECK_FALSE(kv(c[0]));
  CHECK(kv(c[1]));
  // FSDP shard group S: 4 + 4 + 8 bytes per parameter (fp32 weights, gradients, Adam) over S.
  std::string fsdp = kDense;
  fsdp.replace(fsdp.find("{data: 8}"), 9, "{data: 8, fsdp: {shard_size: 8}}");
  dir.write("fsdp_base.yaml", fsdp);
  const auto f = run("fsdp.yaml",
                     "base: {file: fsdp_base.yaml}\naxes:\n  parallel.fsdp.shard_size: [2, 8]\n");
  REQUIRE(f.size() == 2);
  const std::int64_t params = f[0].parameters;
  for (std::size_t k = 0; k < 2; ++k) {
    const std::int64_t s = k == 0 ? 2 : 8;
    const std::int64_t states = 2 * core::ceil_div(core::Bytes{4 * params}, s).value +
                                core::ceil_div(core::Bytes{8 * params}, s).value;
    const auto& ms = f[k].devices[0].model_states;
    CHECK((ms[hw::MemCategory::weights] + ms[hw::MemCategory::gradients] +
           ms[hw::MemCategory::optimizer_states]).value == states);
  }
}

TEST_CASE("plan's candidates run the default interleaved groups, not the base's", "[sweep][plan]") {
  // The base's microbatch_group_size (4, over pipeline 2) need not hold for a candidate's
  // pipeline and micro-batches: every candidate resets it, and the interleaved ones still run.
  const test::TempDir dir;
  const auto base = sweep::BaseScenario::from_file(dir.write("dense.yaml", kDense));
  const auto r = sweep::plan(base, {"model.layers=4", "parallel.data=1", "parallel.pipeline=2",
                                    "parallel.schedule=interleaved", "parallel.virtual_stages=2",
                                    "parallel.microbatch_group_size=4"},
                             every_fit(2));
  REQUIRE_FALSE(r.ranked.empty());
  CHECK_FALSE(any(r, [](const sweep::Candidate& c) {
    return std::count(c.sets.begin(), c.sets.end(), "parallel.microbatch_group_size=0") != 1;
  }));
  CHECK(any(r, [](const sweep::Candidate& c) { return c.layout.virtual_stages == 2; }));
  // Likewise a base's uneven pipeline split (4 blocks: first 1, last 3 over pipeline 2).
  const auto u = sweep::plan(base, {"model.layers=4", "parallel.data=1", "parallel.pipeline=2",
                                    "parallel.first_stage_blocks=1", "parallel.last_stage_blocks=3"},
                             every_fit(2));
  REQUIRE_FALSE(u.ranked.empty());
  CHECK_FALSE(any(u, [](const sweep::Candidate& c) {
    return std::count(c.sets.begin(), c.sets.end(), "parallel.first_stage_blocks=0") != 1 ||
           std::count(c.sets.begin(), c.sets.end(), "parallel.last_stage_blocks=0") != 1;
  }));
}
