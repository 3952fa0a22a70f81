// The router's and the token permutation's kernels of a mixture-of-experts layer
// (moe_dispatch.hpp, docs/models.md "Mixture-of-experts layer kernels"), counted by hand on the
// expert tests' tiny MoE model: micro-batch 2 x 32 tokens, top-2 of 4 experts, h = 64, bf16.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "../support/plan_bytes.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/parallel/moe_dispatch.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using parallel::MoeDispatchShape;
using parallel::MoeDispatchWork;

namespace {

// R = 64 tokens x 2 x 64 x 2 bytes = 16,384; X = R / 2 = 8,192; 64 x 4 = 256 router scores.
MoeDispatchShape tiny(std::int64_t local_experts) {
  return {core::Bytes{16'384}, 2, 256, local_experts};
}

scenario::Scenario moe_scenario(std::int64_t expert) {
  scenario::ParallelSpec p;
  p.data = 4;
  p.expert = expert;
  return make_scenario(tiny_moe(), ideal_device(1LL << 40), tiny_moe_training(), p);
}

// The launches of the first forward and the first backward of an MoE layer (layer 1 of the
// model's order is a block's MLP only if it is one: found by the expert count).
std::pair<int, int> moe_launches(const parallel::Plan& plan, const models::Model& m) {
  int fwd = -1, bwd = -1;
  for (const auto& op : plan.programs.at(0).ops) {
    if (op.layer < 0 || m.graph[m.order[op.layer]].experts <= 1) continue;
    if (op.kind == parallel::OpKind::forward && fwd < 0) fwd = op.work.launches;
    if (op.kind == parallel::OpKind::backward && bwd < 0) bwd = op.work.launches;
  }
  return {fwd, bwd};
}

}  // namespace

TEST_CASE("an MoE layer's permutation and router kernels, counted by hand", "[parallel][expert]") {
  // Forward with 4 local experts: permute 2R, unpermute R + X, two sorts 4R = 7R + X =
  // 122,880; the router's 3 kernels x 8 bytes x 256 scores = 6,144. Kernels: permute 4
  // (3 row-id-map passes and the copy), unpermute 1, sorts 2 x 2, router 3 = 12.
  CHECK(parallel::moe_dispatch_work(tiny(4), false) == MoeDispatchWork{core::Bytes{129'024}, 12});
  // Backward: unpermute's gradient with the probabilities' 3R, the permute's gradient R + X,
  // two sorts 4R = 8R + X = 139,264, + 6,144. Kernels 1 + 1 + 2 x 1 + 3 = 7.
  CHECK(parallel::moe_dispatch_work(tiny(4), true) == MoeDispatchWork{core::Bytes{145'408}, 7});
  // One expert per rank: no sorts. Forward 3R + X + 6,144 = 63,488 in 8 kernels; backward
  // 4R + X + 6,144 = 79,872 in 5.
  CHECK(parallel::moe_dispatch_work(tiny(1), false) == MoeDispatchWork{core::Bytes{63'488}, 8});
  CHECK(parallel::moe_dispatch_work(tiny(1), true) == MoeDispatchWork{core::Bytes{79'872}, 5});
}

TEST_CASE("every MoE layer's compute op launches its permutation and router kernels",
          "[parallel][expert]") {
  const models::Model m = tiny_moe();
  // Megatron-LM's MLP: 3 kernels forward, 10 backward (builder.hpp kernel_shape), plus the
  // counts above: 4 experts on the rank (expert 1) sort, 1 expert per rank (expert 4) does not.
  CHECK(moe_launches(parallel::lower(moe_scenario(1)), m) == std::pair{3 + 12, 10 + 7});
  CHECK(moe_launches(parallel::lower(moe_scenario(4)), m) == std::pair{3 + 8, 10 + 5});
}
