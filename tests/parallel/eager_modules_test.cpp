// training.modules: eager (sim/parallel/eager_modules.cpp, docs/finetuning.md "Eager modules"):
// what PyTorch's eager Llama modules keep beyond the layer formulas. Computed by hand for
// Llama-3-8B (h = hq = 4,096, hk = 8 x 128 = 1,024, f = 14,336, 32 blocks), one sample of 512
// tokens in bf16 (e = 2):
//   RMSNorm:    4 x 512 x 4,096                                   =  8,388,608
//   attention:  2 x 512 x 4,096 (the contiguous output copy)      =  4,194,304
//               + 2 x 2 x 512 x (4,096 - 1,024) (expanded K, V)   =  6,291,456
//   gated MLP:  2 x 512 x 14,336 (act(gate))                      = 14,680,064
//   per block:  2 x 8,388,608 + 4,194,304 + 6,291,456 + 14,680,064 = 41,943,040, and the final
//               RMSNorm after the blocks another 8,388,608
//   compiled:   the expanded K and V only, 6,291,456 per block.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "../support/plan_bytes.hpp"
#include "models/presets.hpp"
#include "sim/parallel/eager_modules.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

scenario::Scenario llama(const char* preset, bool eager, bool compile,
                         scenario::Precision p = scenario::Precision::bf16_true) {
  models::BuildOptions o;
  o.seq_len = 512;
  o.activation_dtype = scenario::activation_dtype(p);
  o.autocast = scenario::autocast(p);
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.seq_len = 512;
  t.precision = p;
  t.loss_chunks = 1;
  t.compile = compile;
  t.eager_modules = eager;
  t.flash_attention = true;
  return make_scenario(models::build_preset(*models::find_preset(preset), o),
                       ideal_device(1LL << 40), t);
}

}  // namespace

TEST_CASE("eager modules keep the upcast, the output copy, expanded K/V and act(gate)",
          "[parallel][eager]") {
  const auto s = llama("llama3-8b", true, false);
  const auto norm = parallel::eager_extra(layer_named(s, "block.0.ln1"), 2, 2, false);
  CHECK(norm.replicated.value == 8'388'608);
  CHECK(norm.split.value == 0);
  const auto attn = parallel::eager_extra(layer_named(s, "block.0.attn"), 2, 2, false);
  CHECK(attn.split.value == 4'194'304 + 6'291'456);
  CHECK(attn.replicated.value == 0);
  CHECK(parallel::eager_extra(layer_named(s, "block.0.mlp"), 2, 2, false).split.value == 14'680'064);
  // Compiled: only the attention kernel's expanded inputs.
  CHECK(parallel::eager_extra(layer_named(s, "block.0.ln1"), 2, 2, true).replicated.value == 0);
  CHECK(parallel::eager_extra(layer_named(s, "block.0.attn"), 2, 2, true).split.value == 6'291'456);
  CHECK(parallel::eager_extra(layer_named(s, "block.0.mlp"), 2, 2, true).split.value == 0);
}

TEST_CASE("the plan books the eager extras on every block's forward", "[parallel][eager]") {
  const std::int64_t fused = saved_total(llama("llama3-8b", false, false));
  CHECK(saved_total(llama("llama3-8b", true, false)) - fused == 32 * 41'943'040LL + 8'388'608);
  // Compiled against compiled: the compiled loss's own change is the same on both sides.
  const std::int64_t fused_compiled = saved_total(llama("llama3-8b", false, true));
  CHECK(saved_total(llama("llama3-8b", true, true)) - fused_compiled == 32 * 6'291'456LL);
}

TEST_CASE("multi-head attention expands nothing, autocast's fp32 norms keep 4 bytes too",
          "[parallel][eager]") {
  // Llama-2-7B: h = hq = hk = 4,096, f = 11,008, 32 blocks. Per block, 512 tokens in bf16:
  // 2 x (4 x 512 x 4,096) + 2 x 512 x 4,096 + 2 x 512 x 11,008 = 16,777,216 + 4,194,304 +
  // 11,272,192 = 32,243,712, + 8,388,608 for the final norm; compiled nothing.
  const std::int64_t fused = saved_total(llama("llama2-7b", false, false));
  CHECK(saved_total(llama("llama2-7b", true, false)) - fused == 32 * 32'243'712LL + 8'388'608);
  CHECK(saved_total(llama("llama2-7b", true, true)) == saved_total(llama("llama2-7b", false, true)));
  // amp-bf16: the norms run in fp32 (an fp32 output of 4 x 512 x 4,096 bytes); the eager norm
  // keeps the normalized fp32 tensor beside its input, 4 x s x h again.
  const auto amp = llama("llama2-7b", true, false, scenario::Precision::amp_bf16);
  CHECK(parallel::eager_extra(layer_named(amp, "block.0.ln1"), 2, 4, false).replicated.value == 8'388'608);
}
