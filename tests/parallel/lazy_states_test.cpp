// training.lazy_states: the first step creates the gradients and optimizer states among its
// activations (autograd's AccumulateGrad, the optimizer's lazy state init), and the caching
// allocator keeps the segments as that step leaves them. Hand-computed with PyTorch's rules
// (sim/hw/caching_allocator.hpp): requests of 10 MiB and more get a segment of their size,
// smaller large ones a 20 MiB segment; best fit among cached blocks, the rest split off.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "sim/exec/allocator_model.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using hw::MemCategory;

namespace {

constexpr std::int64_t MiB = 1 << 20;

// Layers a and b of 1 Mi parameters each (4 MiB of fp32 gradients, 8 MiB of AdamW states),
// each saving 24 MiB for its backward; fused AdamW (no step temporaries), gradients kept
// between steps, the caching allocator on.
scenario::Scenario two_layers(bool lazy) {
  const auto m = chain_model({plain_layer("a", MiB, 24 * MiB, 0), plain_layer("b", MiB, 24 * MiB, 0)});
  scenario::TrainingSpec t;
  t.precision = scenario::Precision::fp32;
  t.optimizer = scenario::Optimizer::adamw;
  t.optimizer_impl = scenario::OptimizerImpl::fused;
  t.zero_grad = scenario::ZeroGrad::zeros;
  t.lazy_states = lazy;
  auto s = make_scenario(m, ideal_device(1LL << 34), t);
  s.training.caching_allocator = true;
  return s;
}

std::int64_t load_bytes(const parallel::Program& P, MemCategory c) {
  std::int64_t b = 0;
  for (const auto& l : P.load)
    if (l.effect.category == c) b += l.alloc ? l.effect.bytes.value : -l.effect.bytes.value;
  return b;
}

}  // namespace

TEST_CASE("lazy_states: the first step creates each layer's gradients and states and keeps them",
          "[lazy_states]") {
  const auto flat = parallel::lower(two_layers(false));
  const auto lazy = parallel::lower(two_layers(true));
  const auto& F = flat.programs.at(0);
  const auto& P = lazy.programs.at(0);
  // The same states are booked; only where they are created differs.
  CHECK(P.persistent.bytes == F.persistent.bytes);
  CHECK(P.persistent[MemCategory::gradients].value == 8 * MiB);
  CHECK(P.persistent[MemCategory::optimizer_states].value == 16 * MiB);
  CHECK(F.load.empty());
  CHECK_FALSE(F.lazy_states);
  CHECK(P.lazy_states);
  // Flat: weights, gradients and states before the step; lazy: the weights alone.
  CHECK(exec::AllocatorModel::state_buffers(F).size() == 3);
  REQUIRE(exec::AllocatorModel::state_buffers(P).size() == 1);
  CHECK(exec::AllocatorModel::state_buffers(P)[0].category == MemCategory::weights);
  // The load keeps 4 MiB of gradients per layer and 8 MiB of states per layer, and gives back
  // every activation of the first step.
  CHECK(load_bytes(P, MemCategory::gradients) == 8 * MiB);
  CHECK(load_bytes(P, MemCategory::optimizer_states) == 16 * MiB);
  CHECK(load_bytes(P, MemCategory::activations) == 0);
}

TEST_CASE("lazy_states: states created among freed activations split the next step's segments",
          "[lazy_states]") {
  const auto flat = exec::play(parallel::lower(two_layers(false))).devices.at(0);
  const auto lazy = exec::play(parallel::lower(two_layers(true))).devices.at(0);
  // The tensors at the peak are the same: 8 MiB weights + 8 gradients + 16 states + 48 saved.
  CHECK(flat.allocated_peak.value == 80 * MiB);
  CHECK(lazy.allocated_peak.value == 80 * MiB);
  // Flat: weights (8 MiB) in a 20 MiB segment, the gradients (8) in its rest, the states a
  // 16 MiB segment; a's and b's saved tensors a 24 MiB segment each: 20 + 16 + 48 = 84 MiB.
  CHECK(flat.reserved_peak.value == 84 * MiB);
  // Lazy, first step: weights in a 20 MiB segment (12 free); a and b save into new 24 MiB
  // segments A and B. b's backward: its gradients (4) best-fit the weights' 12 (8 left), then
  // B is freed; a's: 4 into those 8 (4 left), then A is freed. The step creates a's states (8)
  // in A (lowest of the two 24s: 16 left) and b's in those 16 (8 left). 68 MiB reserved; free:
  // 4, 8 and B's 24.
  // Next step: a's 24 MiB take B whole; b's find no 24 and reserve a third segment:
  // 68 + 24 = 92 MiB, 8 MiB more than flat with the same tensors.
  CHECK(lazy.reserved_peak.value == 92 * MiB);
}
