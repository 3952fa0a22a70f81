// Context parallelism (pass_context.cpp) against hand counts on GPT-2 small (h = 768, 12 heads,
// 12 blocks, bf16, flash attention): per-rank activations and attention FLOPs fall by C, the
// ring's K/V steps and bytes, the all-gather's bytes, the gradient group, located errors.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;
using parallel::CommPurpose;
using parallel::OpKind;

namespace {

scenario::Scenario load(const std::string& parallel, const std::string& training_extra = "") {
  const std::string text =
      "model: gpt2\n"
      "device: h100-80gb\n"
      "training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 1024, attention: flash, "
      "allocator: none" +
      training_extra + "}\n" + "parallel: " + parallel + "\n";
  return scenario::load_scenario_tree(YAML::Load(text), "context.yaml");
}

std::string refusal(const std::string& text) {
  try {
    scenario::load_scenario_tree(YAML::Load(text), "context.yaml");
  } catch (const core::ConfigError& e) {
    return e.key_path() + ": " + e.what();
  }
  return "loaded";
}

// Sums over the plan's ops (no macro ops: context parallelism keeps every unit expanded).
struct Counts {
  core::Bytes saved{};
  double attention_forward_flops = 0;
  int ring_steps_forward = 0, ring_steps_backward = 0;
  core::Bytes ring_bytes_forward{}, ring_bytes_backward{};
  int gathers = 0, scatters = 0;
  core::Bytes gather_bytes{}, scatter_bytes{};
  std::int32_t reduction_ranks = 0;
};

Counts count(const scenario::Scenario& s) {
  const parallel::Plan plan = parallel::lower(s, {});
  Counts c;
  const auto& P = plan.programs.at(0);
  for (const auto& op : P.ops) {
    REQUIRE(op.macro < 0);
    for (auto k = op.alloc_begin; k < op.alloc_end; ++k)
      if (P.effects[k].tensor == parallel::TensorKind::saved) c.saved += P.effects[k].bytes;
    const bool attention =
        op.layer >= 0 && s.model.graph[s.model.order[op.layer]].kind == models::LayerKind::attention;
    if (op.kind == OpKind::forward && attention) c.attention_forward_flops += op.work.flops;
    if (op.purpose == CommPurpose::data) c.reduction_ranks = op.comm.ranks;
    if (op.purpose != CommPurpose::context_kv) continue;
    if (op.kind == OpKind::all_gather) ++c.gathers, c.gather_bytes = op.comm.bytes;
    if (op.kind == OpKind::reduce_scatter) ++c.scatters, c.scatter_bytes = op.comm.bytes;
    if (op.kind == OpKind::p2p) {
      // Forward steps carry K/V, backward steps K/V and dK/dV (twice the bytes).
      if (c.ring_bytes_forward.value == 0 || op.comm.bytes == c.ring_bytes_forward) {
        ++c.ring_steps_forward;
        c.ring_bytes_forward = op.comm.bytes;
      } else {
        ++c.ring_steps_backward;
        c.ring_bytes_backward = op.comm.bytes;
      }
    }
  }
  return c;
}

}  // namespace

TEST_CASE("context parallelism divides activations and attention work by C", "[parallel][context]") {
  const Counts one = count(load("{data: 1}"));
  const Counts four = count(load("{data: 1, context: 4}"));
  // With flash attention every saved tensor is linear in the tokens (no s x s term), and each
  // rank holds 1024 / 4 = 256 tokens: exactly a quarter of the saved bytes.
  REQUIRE(one.saved.value > 0);
  CHECK(four.saved.value * 4 == one.saved.value);
  // Attention forward: linear part 2sh(h + 2h) + 2sh^2 at s/4 is a quarter; the core at s/4 is
  // 4(s/4)^2 h, times C = 4 for the queries against every chunk's keys: 4 s^2 h / 4, a quarter.
  CHECK(four.attention_forward_flops == Approx(one.attention_forward_flops / 4).epsilon(1e-12));
  CHECK(one.ring_steps_forward == 0);
}

TEST_CASE("ring attention passes C-1 K/V chunks per attention layer each way", "[parallel][context]") {
  const Counts c = count(load("{data: 1, context: 4}"));
  // 12 attention layers x (C - 1) = 3 steps, in forward and in backward.
  CHECK(c.ring_steps_forward == 36);
  CHECK(c.ring_steps_backward == 36);
  // One K/V chunk per sample: 2 (K and V) x 256 tokens x 768 (12 heads x 64) x 2 bytes.
  CHECK(c.ring_bytes_forward.value == 2 * 256 * 768 * 2);  // 786,432
  CHECK(c.ring_bytes_backward.value == 2 * 786'432);      // K/V and dK/dV
}

TEST_CASE("ring attention overlaps each step with the chunk at hand", "[parallel][context]") {
  // C = 4 over a 1 GB/s link: a step moves 786,432 bytes (>= 786 us) while a chunk's attention
  // (4 x 256 x 256 x 768 = 201 MFLOP) takes about a microsecond: communication dominates.
  auto s = load("{data: 1, context: 4}");
  s.cluster.intra_node.bandwidth = core::Bandwidth{1e9};
  const parallel::Plan plan = parallel::lower(s, {});
  const auto tl = exec::play(plan);
  const auto& P = plan.programs[0];
  const auto& start = tl.devices[0].start;
  const auto& finish = tl.devices[0].finish;
  // The first attention layer's forward: its op (projections and its own chunk), the ring's
  // steps and the other chunks' ops, in the order built.
  std::int32_t layer = -1;
  std::vector<std::size_t> steps, chunks;
  for (std::size_t k = 0; k < P.ops.size(); ++k) {
    const auto& op = P.ops[k];
    if (op.microbatch != 0 || op.layer < 0) continue;
    if (layer < 0 && op.purpose == CommPurpose::context_kv) layer = op.layer;
    if (op.layer != layer) continue;
    if (op.kind == OpKind::p2p && steps.size() < 3) steps.push_back(k);
    if (op.kind == OpKind::forward && chunks.size() < 4) chunks.push_back(k);
  }
  REQUIRE(steps.size() == 3);
  REQUIRE(chunks.size() == 4);  // chunk 0 is the layer's op
  const core::Duration t = finish[steps[0]] - start[steps[0]];
  const core::Duration a = finish[chunks[1]] - start[chunks[1]];
  CHECK(to_seconds(t) >= 786.432e-6);
  CHECK(a < t);
  // Step 1 starts with the layer's op; chunk k waits for step k, step k+1 for step k; the
  // three chunks run back to back with the steps: the layer ends 3t + a after it starts, of
  // which the compute stream is busy for its own op and 3a.
  CHECK(start[steps[0]] == start[chunks[0]]);
  for (int k = 1; k <= 3; ++k) {
    CHECK(start[chunks[k]] == finish[steps[k - 1]]);
    if (k < 3) CHECK(start[steps[k]] == finish[steps[k - 1]]);
  }
  CHECK(finish[chunks[3]] - start[chunks[0]] == t * 3 + a);
}

TEST_CASE("all-gather attention gathers the whole sequence's K/V", "[parallel][context]") {
  const Counts c = count(load("{data: 1, context: 4, context_attention: allgather}"));
  // One all-gather per attention layer in forward and one in backward, one reduce-scatter of
  // dK/dV in backward; each over C x 786,432 = 3,145,728 bytes (2 x 1024 x 768 x 2).
  CHECK(c.gathers == 24);
  CHECK(c.scatters == 12);
  CHECK(c.gather_bytes.value == 3'145'728);
  CHECK(c.scatter_bytes.value == 3'145'728);
  CHECK(c.ring_steps_forward == 0);
}

TEST_CASE("gradients reduce over data x context ranks", "[parallel][context]") {
  CHECK(count(load("{data: 2, context: 4}")).reduction_ranks == 8);
  CHECK(load("{data: 2, context: 4}").parallel.devices() == 8);
}

TEST_CASE("context parallelism's located errors", "[parallel][context]") {
  const std::string base = "device: h100-80gb\n";
  // 1024 / 2 = 512 is not a multiple of 3.
  CHECK_THAT(refusal(base + "model: gpt2\ntraining: {micro_batch: 1, seq_len: 1024, attention: flash}\n"
                            "parallel: {context: 3}\n"),
             Catch::Contains("parallel.context") && Catch::Contains("seq_len / 2"));
  CHECK_THAT(refusal(base + "model: gpt2\ntraining: {micro_batch: 1, seq_len: 1024}\nparallel: {context: 2}\n"),
             Catch::Contains("training.attention") && Catch::Contains("flash"));
  CHECK_THAT(refusal(base + "model: resnet50\ntraining: {micro_batch: 1}\nparallel: {context: 2}\n"),
             Catch::Contains("parallel.context") && Catch::Contains("has none"));
  CHECK_THAT(refusal(base + "model: gpt2\ntraining: {micro_batch: 1, seq_len: 1024, attention: flash}\n"
                            "parallel: {context: 2, context_attention: star}\n"),
             Catch::Contains("parallel.context_attention"));
}

TEST_CASE("context parallelism leaves the job's model FLOPs as they are", "[parallel][context]") {
  // Per sample: C ranks x (linear / C + C x core(s/C)) = linear + C^2 x 4(s/C)^2 h = linear +
  // 4 s^2 h, the unsplit layer's FLOPs (forward and backward alike).
  const double one = parallel::lower(load("{data: 1}"), {}).model_flops;
  const double four = parallel::lower(load("{data: 1, context: 4}"), {}).model_flops;
  REQUIRE(one > 0);
  CHECK(four == Approx(one).epsilon(1e-12));
}
