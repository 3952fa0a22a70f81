// Flash attention's kernels in the compute ops (sim/parallel/flash_core.cpp) against hand counts
// on GPT-2 small (h = 768, 12 heads, 12 causal blocks, bf16, sequence 1024): the causal tile
// fraction, the model's core FLOPs each op hands to the flash kernels, the backward's 2.5x,
// context parallelism's share per rank, and training.fp8_attention.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"
#include "sim/parallel/flash_core.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;
using parallel::OpKind;

namespace {

scenario::Scenario load(const std::string& training, const std::string& parallel = "{data: 1}") {
  const std::string text =
      "model: gpt2\n"
      "device: h100-80gb\n"
      "training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 1024, allocator: none, " +
      training + "}\nparallel: " + parallel + "\n";
  return scenario::load_scenario_tree(YAML::Load(text), "flash.yaml");
}

struct Flash {
  double model_forward = 0, model_backward = 0, forward = 0, backward = 0;
  bool fp8 = false;
};

// Sums the flash parts of every compute op of rank 0's program.
Flash sum(const scenario::Scenario& s) {
  const parallel::Plan plan = parallel::lower(s, {});
  Flash f;
  for (const auto& op : plan.programs.at(0).ops) {
    CHECK(op.work.flash_model_flops <= op.work.flops * (1 + 1e-12));
    (op.kind == OpKind::backward ? f.model_backward : f.model_forward) += op.work.flash_model_flops;
    f.forward += op.work.flash_forward;
    f.backward += op.work.flash_backward;
    f.fp8 = f.fp8 || op.work.fp8_attention;
  }
  return f;
}

// One block's core as the model counts it: 4 s^2 h = 4 x 1024^2 x 768.
constexpr double kCore = 4.0 * 1024 * 1024 * 768;

}  // namespace

TEST_CASE("a causal flash kernel computes the tiles on and below the diagonal",
          "[parallel][flash]") {
  using parallel::flash_square_fraction;
  // n = 8192 / 128 = 64 tiles a side: 64 x 65 / 2 of 64^2 blocks = 65 / 128.
  CHECK(flash_square_fraction(8192, true) == Approx(65.0 / 128));
  CHECK(flash_square_fraction(8192, false) == 1.0);
  // One tile: the whole (masked) block runs; 129 tokens: 2 tiles a side, 3 of 4 blocks.
  CHECK(flash_square_fraction(100, true) == 1.0);
  CHECK(flash_square_fraction(129, true) == Approx(0.75));
  // Context 4 at 256 tokens per rank (sequence 1024): halves of 128 tokens, one tile each;
  // 2C - 1 = 7 blocks below the diagonal and 2 on it of 4C = 16: 9 / 16, the same share of
  // the 8 x 8 grid of the whole sequence (36 of 64 blocks) that one rank computes alone.
  CHECK(flash_square_fraction(256, true, 4) == Approx(9.0 / 16));
  CHECK(flash_square_fraction(1024, true) == Approx(9.0 / 16));
}

TEST_CASE("flash attention hands each block's core to the flash kernels", "[parallel][flash]") {
  const Flash f = sum(load("attention: flash"));
  // 12 blocks: the core forward, and twice it in backward (as the model counts them).
  CHECK(f.model_forward == Approx(12 * kCore));
  CHECK(f.model_backward == Approx(2 * 12 * kCore));
  // The kernels compute 9 / 16 of the square; the backward's five GEMMs to the forward's two.
  CHECK(f.forward == Approx(12 * kCore * 9 / 16));
  CHECK(f.backward == Approx(2.5 * 12 * kCore * 9 / 16));
  CHECK_FALSE(f.fp8);
  // The standard attention's core stays GEMM work.
  const Flash standard = sum(load("attention: standard"));
  CHECK(standard.model_forward == 0);
  CHECK(standard.forward + standard.backward == 0);
}

TEST_CASE("full recomputation replays the flash forward", "[parallel][flash]") {
  const Flash f = sum(load("attention: flash, recompute: full"));
  CHECK(f.forward == Approx(2 * 12 * kCore * 9 / 16));
  CHECK(f.backward == Approx(2.5 * 12 * kCore * 9 / 16));
}

TEST_CASE("context parallelism leaves each rank a C-th of the flash work", "[parallel][flash]") {
  const Flash one = sum(load("attention: flash"));
  for (const char* how : {"ring", "allgather"}) {
    const Flash four =
        sum(load("attention: flash", std::string("{data: 1, context: 4, context_attention: ") +
                                         how + "}"));
    CHECK(four.model_forward == Approx(one.model_forward / 4));
    CHECK(four.forward == Approx(one.forward / 4));
    CHECK(four.backward == Approx(one.backward / 4));
  }
}

TEST_CASE("fp8_attention marks the flash kernels and needs fp8 and flash", "[parallel][flash]") {
  CHECK(sum(load("attention: flash, precision: fp8, fp8_attention: true")).fp8);
  CHECK_FALSE(sum(load("attention: flash, precision: fp8")).fp8);
  for (const char* bad : {"attention: flash, precision: bf16, fp8_attention: true",
                          "attention: standard, precision: fp8, fp8_attention: true"}) {
    try {
      load(bad);
      FAIL("loaded: " << bad);
    } catch (const core::ConfigError& e) {
      CHECK(e.key_path() == "training.fp8_attention");
    }
  }
}
