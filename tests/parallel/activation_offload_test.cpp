// training.activation_offload (sim/parallel/pass_activation_offload.cpp, docs/finetuning.md
// "Activation offload") on a chain computed by hand: three layers, each saving S = 1,000,000
// bytes, 1e9 FLOPs forward (1 ms on the ideal 1 TFLOP/s device) and 2e9 backward (2 ms), over a
// 1 GB/s PCIe link (1 ms per copy).
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using parallel::OpKind;

namespace {

constexpr std::int64_t kSaved = 1'000'000;

scenario::Scenario chain(bool offload) {
  const auto m = chain_model({plain_layer("a", 0, kSaved, 1000, 1e9),
                              plain_layer("b", 0, kSaved, 1000, 1e9),
                              plain_layer("c", 0, kSaved, 1000, 1e9)});
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.activation_offload = offload;
  auto s = make_scenario(m, ideal_device(1LL << 40), t);
  s.cluster.pcie = free_link();
  s.cluster.pcie.bandwidth = core::Bandwidth{1e9};
  return s;
}

int count(const parallel::Plan& plan, OpKind kind, std::int64_t bytes) {
  int n = 0;
  for (const auto& op : plan.programs.at(0).ops) n += op.kind == kind && op.comm.bytes.value == bytes;
  return n;
}

}  // namespace

TEST_CASE("activation offload: one copy out and one back per layer, host holds them all",
          "[activation_offload]") {
  const auto plan = parallel::lower(chain(true));
  CHECK(count(plan, OpKind::pcie_d2h, kSaved) == 3);
  CHECK(count(plan, OpKind::pcie_h2d, kSaved) == 3);
  // One micro-batch's saved tensors: 3 x 1,000,000.
  CHECK(plan.programs.at(0).host[hw::MemCategory::activations].value == 3 * kSaved);
  CHECK(count(parallel::lower(chain(false)), OpKind::pcie_d2h, kSaved) == 0);
}

TEST_CASE("activation offload: copies out overlap the forward, copies back stall the backward",
          "[activation_offload]") {
  // Without offload: 3 x 1 ms forward + 3 x 2 ms backward = 9 ms.
  CHECK(exec::play(parallel::lower(chain(false))).step_time.ns == 9'000'000);
  // With it: forwards end at 1, 2, 3 ms; copies out run 1-2, 2-3, 3-4 ms. c's copy back waits
  // for its copy out (4-5 ms), c's backward 5-7; b's copy back 7-8, backward 8-10; a's copy back
  // 10-11, backward 11-13 ms.
  const auto tl = exec::play(parallel::lower(chain(true)));
  CHECK(tl.step_time.ns == 13'000'000);
  // The GPU holds at most two saved tensors (the forward's and the one being copied out)
  // instead of three at the end of the forward.
  const auto without = exec::play(parallel::lower(chain(false)));
  CHECK(without.devices[0].peak.value - tl.devices[0].peak.value >= kSaved);
}
