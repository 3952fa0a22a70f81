// Expert parallelism combined with FSDP and context parallelism (pass_fsdp.cpp, pass_expert.cpp)
// against hand counts: FSDP shards a block's routed experts over the expert-data-parallel part
// of the shard group (torchtitan's dp_shard_mod_ep mesh) and the rest over the whole group, and
// the expert group may take context ranks (expert inside data x context).
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "models/builders.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

scenario::Scenario moe(std::int64_t data, std::int64_t expert, std::int64_t context, bool fsdp) {
  scenario::TrainingSpec t = tiny_moe_training();
  t.flash_attention = true;
  scenario::ParallelSpec p;
  p.data = data;
  p.expert = expert;
  p.context = context;
  p.fsdp.enabled = fsdp;
  return make_scenario(tiny_moe(32 / context), ideal_device(1LL << 40), t, p);
}

struct Comm {
  int count = 0;
  std::int64_t bytes = 0;
};

// The ops of `purpose` over `ranks` ranks.
Comm comm(const parallel::Plan& plan, parallel::CommPurpose purpose, std::int64_t ranks) {
  Comm c;
  for (const auto& op : plan.programs[0].ops)
    if (op.purpose == purpose && op.comm.ranks == ranks) {
      ++c.count;
      c.bytes += op.comm.bytes.value;
    }
  return c;
}

}  // namespace

TEST_CASE("FSDP with expert parallelism: 16 B/param over the shard group, experts over theirs",
          "[parallel][fsdp][expert]") {
  // data 8, expert 4, FSDP over all 8: the routed experts, 2 x 98,304 = 196,608, are split
  // over the 4 expert ranks (49,152 per device) and sharded over the 8 / 4 = 2 ranks holding
  // the same experts: 24,576 per device; the dense rest, all - 196,608, over 8. Model states
  // 16 x ((all - 196,608) / 8 + 24,576) = 2 x all - 393,216 + 393,216 = 16 x all / 8.
  const std::int64_t all = tiny_moe(32).parameters();
  REQUIRE((all - 196'608) % 8 == 0);
  const auto plan = parallel::lower(moe(8, 4, 1, true));
  const auto& P = plan.programs[0];
  CHECK(P.model_states.total().value == 16 * all / 8);
  CHECK(P.parameters == (all - 196'608) / 8 + 24'576);
  // Each MoE block's experts on the device, 98,304 / 4 = 24,576 parameters, are gathered in
  // bf16 over the 2 ranks sharing them before every forward and backward: 2 blocks x 2 passes
  // x 2 micro-batches = 8 gathers of 2 x 24,576 B; and reduce-scattered in fp32 once per block
  // and micro-batch: 4 of 4 x 24,576 B.
  const Comm gathers = comm(plan, parallel::CommPurpose::fsdp_all_gather, 2);
  CHECK(gathers.count == 8);
  CHECK(gathers.bytes == 8 * 2 * 24'576);
  const Comm scatters = comm(plan, parallel::CommPurpose::fsdp_reduce_scatter, 2);
  CHECK(scatters.count == 4);
  CHECK(scatters.bytes == 4 * 4 * 24'576);
  // FSDP's reduce-scatters replace the expert pass's all-reduce of the experts' gradients.
  CHECK(comm(plan, parallel::CommPurpose::data, 2).count == 0);
  // Without FSDP that all-reduce runs over the 2 expert-data-parallel ranks, once per MoE layer
  // (after the last micro-batch).
  CHECK(comm(parallel::lower(moe(8, 4, 1, false)), parallel::CommPurpose::data, 2).count == 2);
}

TEST_CASE("expert parallelism inside data x context ranks", "[parallel][expert]") {
  // data 2 x context 2 = 4 ranks share the weights; expert 2 takes two of them. Each rank
  // routes its 16 tokens per sample: an all-to-all carries 16 x 64 x 2 B x top-2 x 2 samples =
  // 8,192 B over 2 ranks, 2 MoE layers x 2 micro-batches x 4 = 16 of them; the experts'
  // gradients all-reduce over the 4 / 2 = 2 expert-data-parallel ranks, once per MoE layer.
  const auto plan = parallel::lower(moe(2, 2, 2, false));
  const Comm a2a = comm(plan, parallel::CommPurpose::all_to_all, 2);
  CHECK(a2a.count == 16);
  CHECK(a2a.bytes == 16 * 8'192);
  CHECK(comm(plan, parallel::CommPurpose::data, 2).count == 2);
  // Per device: 1/2 of the routed experts, as without context.
  const std::int64_t all = tiny_moe(16).parameters();
  CHECK(plan.programs[0].parameters == all - 196'608 / 2);
  SECTION("with FSDP over data x context: experts sharded over 4 / 2 = 2 ranks") {
    const auto f = parallel::lower(moe(2, 2, 2, true));
    // 16 x ((all - 196,608) / 4 + 98,304 / 2) = 4 x all.
    CHECK(f.programs[0].model_states.total().value == 16 * all / 4);
    CHECK(comm(f, parallel::CommPurpose::fsdp_reduce_scatter, 2).count == 4);
  }
}
