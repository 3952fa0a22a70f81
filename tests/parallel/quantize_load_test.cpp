// Quantizing at load (training.lora.quantize_on_load: whole; pass_load.cpp): torchao 0.1's
// to_nf4 intermediates played before the step (at build, keeping each packed weight, and again in
// load_state_dict), against bytes and segments computed by hand.
#include <catch2/catch.hpp>

#include <algorithm>

#include "../support/fixtures.hpp"
#include "models/presets.hpp"
#include "sim/exec/allocator_model.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/finetune.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

constexpr std::int64_t kMiB = 1 << 20;
constexpr std::int64_t kAttn = 4096LL * 4096;   // Llama-2-7B's q, k, v, o: 16,777,216 elements
constexpr std::int64_t kMlp = 4096LL * 11008;   // gate, up, down: 45,088,768 elements

scenario::Scenario qlora_7b(scenario::QuantizeOnLoad q, std::int64_t memory = 1LL << 40) {
  models::BuildOptions o;
  o.seq_len = 512;
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.seq_len = 512;
  t.precision = scenario::Precision::bf16_true;
  t.optimizer = scenario::Optimizer::adamw;
  scenario::LoraSpec l;
  l.rank = 8;
  l.targets.fill(true);
  l.base = scenario::BaseWeights::nf4_dq;
  l.quantize_on_load = q;
  t.lora = l;
  return make_scenario(models::build_preset(*models::find_preset("llama2-7b"), o), ideal_device(memory), t);
}

}  // namespace

TEST_CASE("quantize_on_load: whole quantizes every base weight at build and again at load",
          "[finetune]") {
  const auto plan = parallel::lower(qlora_7b(scenario::QuantizeOnLoad::whole));
  const auto& load = plan.programs.at(0).load;
  // 32 layers x 7 linears = 224 weights. At build each makes 10 intermediates and its packed
  // NF4 weight, which stays, and frees the 10 (the weight, two abs(), the scaled blocks, n x 16
  // differences and their abs(), min's values and indices, the shift, the or): 21 effects. At
  // load_state_dict each is quantized again with 11 allocations (the new packed weight the
  // model's from then on) and 11 frees (the packed weight built before among them): 22 effects.
  REQUIRE(load.size() == 224 * (21 + 22));
  std::int64_t live = 0, most = 0, kept = 0;
  for (const auto& l : load) {
    live += l.alloc ? l.effect.bytes.value : -l.effect.bytes.value;
    most = std::max(most, live);
    if (l.effect.category == hw::MemCategory::weights) kept += l.alloc ? l.effect.bytes.value : -l.effect.bytes.value;
  }
  CHECK(load.front().effect.bytes.value == 2 * kAttn);  // the first q_proj weight, in bf16
  // What stays is the packed base: nf4-dq n/2 + n/64 + 4 ceil(n/64/256) + 4 bytes, 8,654,852
  // for 4096 x 4096 and 23,259,908 for 4096 x 11008; per layer 4 x 8,654,852 + 3 x 23,259,908 =
  // 104,399,132, x 32 = 3,340,772,224.
  CHECK(kept == 3'340'772'224LL);
  CHECK(live == kept);
  // The most is an MLP weight's 68 n in load_state_dict, beside every packed weight.
  CHECK(most == 68 * kMlp + kept);
}

TEST_CASE("quantize_on_load: none plays no load", "[finetune]") {
  const auto plan = parallel::lower(qlora_7b(scenario::QuantizeOnLoad::none));
  CHECK(plan.programs.at(0).load.empty());
}

TEST_CASE("quantize_on_load: the load books the packed weights, its segments stay reserved",
          "[finetune]") {
  const auto plan = parallel::lower(qlora_7b(scenario::QuantizeOnLoad::whole));
  const auto& P = plan.programs.at(0);
  exec::AllocatorModel a(P);
  // The state buffers leave out the 3,340,772,224 B of packed weights the load keeps.
  std::int64_t booked = 0;
  for (const auto& e : exec::AllocatorModel::state_buffers(P)) {
    a.allocate(e, -1);
    booked += e.bytes.value;
  }
  CHECK(booked + 3'340'772'224LL == P.persistent.total().value - P.persistent[hw::MemCategory::reserved].value);
  const std::int64_t states = a.allocator().reserved();
  const std::int64_t tensors = a.tensors_total().value;
  a.play_load(P);
  CHECK(a.tensors_total().value == tensors + 3'340'772'224LL);
  // The first weights replay the sequence of a single load (attention n = 16 Mi: weight 32 MiB,
  // abs 32 MiB, n x 16 bf16 512 MiB and its abs 512 MiB; MLP n = 43 Mi: the two 1,376 MiB
  // differences): at least 3,840 MiB of segments beside the states. The packed weights kept
  // among them split what later weights would reuse, so the load reserves more; how much is
  // the allocator's replay.
  CHECK(a.allocator().reserved() - states >= 3840 * kMiB);
  // The step's peaks start after the load.
  CHECK(a.allocator().peak_allocated() == a.allocator().allocated());
  CHECK(a.allocator().peak_reserved() == a.allocator().reserved());
}

TEST_CASE("quantize_on_load: the step's reserved peak holds the load's segments", "[finetune]") {
  auto with = qlora_7b(scenario::QuantizeOnLoad::whole);
  auto without = qlora_7b(scenario::QuantizeOnLoad::none);
  with.training.caching_allocator = without.training.caching_allocator = true;
  const auto plan = parallel::lower(with);
  exec::AllocatorModel a(plan.programs.at(0));
  for (const auto& e : exec::AllocatorModel::state_buffers(plan.programs.at(0))) a.allocate(e, -1);
  a.play_load(plan.programs.at(0));
  const std::int64_t after_load = a.allocator().reserved();  // the states + the load's segments
  const auto tw = exec::play(plan);
  const auto tn = exec::play(parallel::lower(without));
  const auto& dw = tw.devices.at(0);
  const auto& dn = tn.devices.at(0);
  // A capacity of 1 TiB gives no segment back: the step starts with the load's segments and
  // adds to them only what they cannot serve.
  CHECK(dw.reserved_peak.value >= after_load);
  CHECK(dw.reserved_peak.value > dn.reserved_peak.value);
  // The step's tensors are the same; where they land may differ (a block whose remainder would
  // be 1 MiB or less is handed out whole, PyTorch's rule), so the allocated peaks differ by less
  // than that per live tensor, not by the load's 68 n.
  CHECK(std::abs(dw.allocated_peak.value - dn.allocated_peak.value) < 16 * kMiB);
}
