// training.softmax_saves_input (sim/parallel/softmax_input.cpp): PyTorch before 1.11 kept the
// softmax's input beside its output. Computed by hand for bert-large (a = 16 heads, 24 layers)
// at 512 tokens: one layer's masked scores are a x s^2 = 16 x 512 x 512 = 4,194,304 elements
// per sample, 16,777,216 B in fp32 (and under autocast, where softmax runs in fp32), 8,388,608 B
// in true 16-bit training; over 24 layers 402,653,184 B per sample in fp32, 1.5 GiB at batch 4.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "../support/plan_bytes.hpp"
#include "models/presets.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/parallel/softmax_input.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using scenario::Precision;

namespace {

scenario::Scenario bert(Precision p, bool saves_input, bool flash = false, std::int64_t batch = 1) {
  models::BuildOptions o;
  o.seq_len = 512;
  o.activation_dtype = scenario::activation_dtype(p);
  o.autocast = scenario::autocast(p);
  o.flash_attention = flash;
  scenario::TrainingSpec t;
  t.micro_batch = batch;
  t.seq_len = 512;
  t.precision = p;
  t.loss_chunks = 1;
  t.flash_attention = flash;
  t.softmax_saves_input = saves_input;
  return make_scenario(models::build_preset(*models::find_preset("bert-large"), o),
                       ideal_device(1LL << 40), t);
}

}  // namespace

TEST_CASE("softmax's saved input: a x s^2 elements in softmax's input dtype", "[parallel][softmax]") {
  const auto fp32 = bert(Precision::fp32, true);
  const auto& t = fp32.training;
  CHECK(parallel::softmax_input_bytes(layer_named(fp32, "block.0.attn"), t).value == 16'777'216);
  // Not an attention layer: nothing.
  CHECK(parallel::softmax_input_bytes(layer_named(fp32, "block.0.mlp"), t).value == 0);
  // Autocast runs softmax in fp32: 4 bytes; true 16-bit training keeps the 16-bit scores.
  const auto amp = bert(Precision::amp_fp16, true);
  CHECK(parallel::softmax_input_bytes(layer_named(amp, "block.0.attn"), amp.training).value == 16'777'216);
  const auto half = bert(Precision::bf16_true, true);
  CHECK(parallel::softmax_input_bytes(layer_named(half, "block.0.attn"), half.training).value == 8'388'608);
  // Flash attention never materializes the scores.
  const auto flash = bert(Precision::fp32, true, true);
  CHECK(parallel::softmax_input_bytes(layer_named(flash, "block.0.attn"), flash.training).value == 0);
}

TEST_CASE("the plan books the softmax input on every attention forward", "[parallel][softmax]") {
  // 24 layers x 16,777,216 B per sample; batch 4 keeps four times as much.
  CHECK(saved_total(bert(Precision::fp32, true)) - saved_total(bert(Precision::fp32, false)) ==
        24 * 16'777'216LL);
  CHECK(saved_total(bert(Precision::fp32, true, false, 4)) -
            saved_total(bert(Precision::fp32, false, false, 4)) ==
        1'610'612'736LL);
  CHECK(saved_total(bert(Precision::fp32, true, true)) == saved_total(bert(Precision::fp32, false, true)));
}
