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

scenario::Scenario chain(bool offload, bool recompute = false) {
  // Under full recomputation each layer is a checkpointed block of its own whose checkpoint is
  // the output before it: kSaved bytes (the first block's input has no producer: none).
  const std::int64_t out = recompute ? kSaved : 1000;
  const auto m = chain_model({plain_layer("a", 0, kSaved, out, 1e9),
                              plain_layer("b", 0, kSaved, out, 1e9),
                              plain_layer("c", 0, kSaved, out, 1e9)});
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.activation_offload = offload;
  if (recompute) t.recompute = scenario::Recompute::full;
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
  // With it: forwards end at 1, 2, 3 ms; copies out run 1-2, 2-3, 3-4 ms. The host issues a
  // copy back once it has issued the backward before, which the GPU then runs: each copy waits
  // for the op before that backward. c's copy back waits for its copy out (4-5 ms), c's backward
  // 5-7; b's copy back (after c's forward and b's copy out) 5-6, backward 7-9; a's copy back
  // (after c's backward) 7-8, backward 9-11 ms. Only c's stalls the GPU.
  const auto tl = exec::play(parallel::lower(chain(true)));
  CHECK(tl.step_time.ns == 11'000'000);
  // The GPU holds at most two saved tensors (the forward's and the one being copied out)
  // instead of three at the end of the forward.
  const auto without = exec::play(parallel::lower(chain(false)));
  CHECK(without.devices[0].peak.value - tl.devices[0].peak.value >= kSaved);
}

TEST_CASE("activation offload under full recomputation: a block's replay waits for its checkpoint",
          "[activation_offload]") {
  // Without offload: 3 x 1 ms forward, then per block a 1 ms replay and a 2 ms backward: 12 ms.
  CHECK(exec::play(parallel::lower(chain(false, true))).step_time.ns == 12'000'000);
  // With it, only b's and c's checkpoints go (a's input has none): copied out 2-3 and 3-4 ms.
  // c's copy back waits for its copy out: 4-5 ms, so c's replay runs 5-6 (not 3-4) and its
  // backward 6-8. b's copy back is issued beside c's replay, once the op before that replay (c's
  // forward) ended and on the copy stream after c's: 5-6 ms, hidden; b's replay 8-9, backward
  // 9-11; a's replay 11-12, backward 12-14 ms.
  const auto plan = parallel::lower(chain(true, true));
  CHECK(count(plan, OpKind::pcie_h2d, kSaved) == 2);
  const auto tl = exec::play(plan);
  CHECK(tl.step_time.ns == 14'000'000);
  const auto& ops = plan.programs.at(0).ops;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const auto start = tl.devices[0].start[k].ns;
    if (ops[k].kind == OpKind::pcie_h2d) CHECK(start == (ops[k].layer == 2 ? 4'000'000 : 5'000'000));
    if (ops[k].kind == OpKind::recompute && ops[k].layer == 2) CHECK(start == 5'000'000);
    if (ops[k].kind == OpKind::recompute && ops[k].layer == 1) CHECK(start == 8'000'000);
  }
}
