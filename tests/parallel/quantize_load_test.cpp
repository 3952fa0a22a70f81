// Quantizing at load (training.lora.quantize_on_load: whole; pass_load.cpp): torchao 0.1's
// to_nf4 intermediates played before the step, against bytes and segments computed by hand.
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

TEST_CASE("quantize_on_load: whole plays to_nf4's intermediates once per weight size", "[finetune]") {
  const auto plan = parallel::lower(qlora_7b(scenario::QuantizeOnLoad::whole));
  const auto& load = plan.programs.at(0).load;
  // Two sizes (the attention's 4096 x 4096, the MLP's 4096 x 11008), 11 allocations and 11 frees
  // each: the weight, two abs(), the scaled blocks, n x 16 differences and their abs(), min's
  // values and indices, the shift, the or, the packed bytes.
  REQUIRE(load.size() == 44);
  std::int64_t live = 0, most = 0, first_alloc = 0;
  for (std::size_t k = 0; k < load.size(); ++k) {
    const auto& l = load[k];
    CHECK(l.effect.tensor == parallel::TensorKind::load_temp);
    live += l.alloc ? l.effect.bytes.value : -l.effect.bytes.value;
    most = std::max(most, live);
    if (k == 0) first_alloc = l.effect.bytes.value;
  }
  CHECK(live == 0);                 // everything the load allocates, it frees
  CHECK(first_alloc == 2 * kAttn);  // the attention's weight comes first, in bf16
  // At most: the MLP weight (2n) + its scaled blocks (2n) + value - nf4 (32n) + its abs (32n).
  CHECK(most == 68 * kMlp);  // 3,066,036,224 B
}

TEST_CASE("quantize_on_load: none plays no load", "[finetune]") {
  const auto plan = parallel::lower(qlora_7b(scenario::QuantizeOnLoad::none));
  CHECK(plan.programs.at(0).load.empty());
}

TEST_CASE("quantize_on_load: the load's segments stay reserved, its allocations leave the peak",
          "[finetune]") {
  const auto plan = parallel::lower(qlora_7b(scenario::QuantizeOnLoad::whole));
  const auto& P = plan.programs.at(0);
  exec::AllocatorModel a(P);
  for (const auto& e : exec::AllocatorModel::state_buffers(P)) a.allocate(e, -1);
  const std::int64_t states = a.allocator().reserved();
  const std::int64_t allocated = a.allocator().allocated();
  a.play_load(P);
  // Segments above 10 MiB are the request rounded to 2 MiB (PyTorch's caching allocator):
  // attention (n = 16 Mi): weight 32 MiB, abs 32 MiB (the second abs and the scaled blocks
  // reuse it), n x 16 bf16 512 MiB and its abs 512 MiB; min's values and indices, the shift, the
  // or and the packed bytes split the freed 512 MiB ones. MLP (n = 43 Mi): its 86 MiB weight,
  // abs, scaled blocks, values (86 MiB), indices (344 MiB), shift and or (172 MiB each) all
  // split the cached 512 MiB segments; only the two 1,376 MiB differences need segments.
  // 32 + 32 + 512 + 512 + 1,376 + 1,376 = 3,840 MiB.
  CHECK(a.allocator().reserved() - states == 3840 * kMiB);
  // The step's peaks start after the load: allocated is back to the states.
  CHECK(a.allocator().allocated() == allocated);
  CHECK(a.allocator().peak_allocated() == allocated);
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
  const std::int64_t after_load = a.allocator().reserved();  // the states + 3,840 MiB (above)
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
