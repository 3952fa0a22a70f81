// FSDP2 / HSDP lowering (pass_fsdp.cpp) against hand counts: per-device model states of
// 16 B/param / S for fp32-sharded AdamW, the gathered units and gradient buffers at the peak,
// HSDP as FSDP over its shard group, and reshard_after_forward: false holding the blocks.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/summary.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using hw::MemCategory;

namespace {

scenario::TrainingSpec bf16_adamw() {
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.gradient_accumulation = 1;
  t.precision = scenario::Precision::bf16;
  t.optimizer = scenario::Optimizer::adamw;
  return t;
}

scenario::ParallelSpec fsdp(std::int64_t data, std::int64_t shard = 0, bool reshard = true) {
  scenario::ParallelSpec p;
  p.data = data;
  p.fsdp.enabled = true;
  p.fsdp.shard_size = shard;
  p.fsdp.reshard_after_forward = reshard;
  return p;
}

std::int64_t states(const parallel::Plan& plan) {
  const auto& ms = plan.programs[0].model_states;
  return (ms[MemCategory::weights] + ms[MemCategory::gradients] +
          ms[MemCategory::optimizer_states])
      .value;
}

std::int64_t persistent(const parallel::Plan& plan) {
  return plan.programs[0].persistent.total().value;
}

}  // namespace

TEST_CASE("FSDP keeps 16 B/param / N of fp32-sharded AdamW states per device", "[parallel][fsdp]") {
  // 26,000 params over 4 ranks: weights 4 x 26,000 / 4 = 26,000 B, gradients 26,000 B,
  // Adam m and v 8 x 26,000 / 4 = 52,000 B: 104,000 = 16 x 26,000 / 4.
  const auto s = make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), bf16_adamw(), fsdp(4));
  const auto plan = parallel::lower(s);
  CHECK(states(plan) == 16 * 26'000 / 4);
  CHECK(plan.programs[0].parameters == 26'000 / 4);
  CHECK(plan.programs[0].persistent[MemCategory::weights].value == 26'000);
  CHECK(plan.programs[0].persistent[MemCategory::optimizer_states].value == 52'000);
  // DeepSpeed's ZeRO-3 keeps the same 16 B/param / N, in other categories (2 + 2 + 12).
  // (Its parameters here are all below DeepSpeed's persistence threshold of 1e5 elements, which
  // would keep them whole: the threshold is set to 0 to compare the sharded states.)
  scenario::ParallelSpec z;
  z.data = 4;
  z.zero = 3;
  z.zero3.param_persistence_threshold = 0;
  const auto zplan = parallel::lower(
      make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), bf16_adamw(), z));
  CHECK(states(zplan) == states(plan));
  CHECK(zplan.programs[0].persistent[MemCategory::weights].value == 13'000);
}

TEST_CASE("FSDP's gathers and reduce-scatters: one per unit and pass, in param and reduce dtype",
          "[parallel][fsdp]") {
  const auto s = make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), bf16_adamw(), fsdp(4));
  const auto plan = parallel::lower(s);
  int gathers = 0, scatters = 0;
  std::int64_t gathered = 0, scattered = 0;
  for (const auto& op : plan.programs[0].ops) {
    if (op.purpose == parallel::CommPurpose::fsdp_all_gather) {
      ++gathers;
      gathered += op.comm.bytes.value;
      CHECK(op.comm.ranks == 4);
    }
    if (op.purpose == parallel::CommPurpose::fsdp_reduce_scatter) {
      ++scatters;
      scattered += op.comm.bytes.value;
    }
  }
  // Forward: the root (2,000 params) and 3 blocks (8,000 each); backward: the 3 blocks again
  // (the root stays gathered): 7 gathers of 2 x (2,000 + 6 x 8,000) = 100,000 B in bf16.
  CHECK(gathers == 7);
  CHECK(gathered == 2 * (2'000 + 6 * 8'000));
  // One reduce-scatter per unit, fp32: 4 x 26,000 B.
  CHECK(scatters == 4);
  CHECK(scattered == 4 * 26'000);
}

TEST_CASE("FSDP2 copies each gathered unit into its parameters on the compute stream",
          "[parallel][fsdp]") {
  // unshard: copy (FSDP2's foreach_all_gather_copy_out): after each of the 7 gathers above, one
  // compute kernel reading and writing the gathered bytes, before the unit's compute:
  // 2 x 100,000 B in all. unshard: view (FSDP1, Megatron-FSDP): none.
  auto copies = [](bool copy) {
    auto p = fsdp(4);
    p.fsdp.unshard_copy = copy;
    const auto plan =
        parallel::lower(make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), bf16_adamw(), p));
    const auto& ops = plan.programs[0].ops;
    std::int64_t n = 0, bytes = 0;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      if (ops[k].purpose != parallel::CommPurpose::fsdp_all_gather) continue;
      // The next compute op after the gather: the copy-out, when there is one.
      for (std::size_t j = k + 1; j < ops.size(); ++j) {
        if (ops[j].stream != parallel::StreamKind::compute) continue;
        if (ops[j].work.flops == 0 && ops[j].work.launches == 1 && !ops[j].model_flops &&
            ops[j].work.bytes.value == 2 * ops[k].comm.bytes.value) {
          ++n;
          bytes += ops[j].work.bytes.value;
        }
        break;
      }
    }
    return std::pair{n, bytes};
  };
  CHECK(copies(true) == std::pair<std::int64_t, std::int64_t>{7, 2 * 2 * (2'000 + 6 * 8'000)});
  CHECK(copies(false).first == 0);
}

TEST_CASE("FSDP's peak: gathered units one ahead, unsharded gradients and the reduce-scatter input",
          "[parallel][fsdp]") {
  // Free links: every collective ends when it may start, so one unit of prefetch always holds.
  // Persistent: fp32 weights 26,000 + Adam 52,000 = 78,000 B. The peak is block 1's attention
  // backward (its unit's last backward op, the copy-in):
  //   root gathered in bf16 (never resharded after forward)   2 x 2,000  =  4,000
  //   block 1 gathered, block 0 prefetched                    2 x 16,000 = 32,000
  //   head's unsharded bf16 gradients (the root reduces last)  2 x 1,000  =  2,000
  //   sharded fp32 gradients held: head, blocks 2 and 1  4 x (1,000 + 16,000) / 4 = 17,000
  //   block 1's unsharded bf16 gradients                      2 x 8,000  = 16,000
  //   block 1's reduce-scatter input in fp32                  4 x 8,000  = 32,000
  // 78,000 + 103,000 = 181,000 B.
  const auto s = make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), bf16_adamw(), fsdp(4));
  const auto plan = parallel::lower(s);
  const auto tl = exec::play(plan);
  CHECK(persistent(plan) == 78'000);
  CHECK(tl.devices[0].peak.value == 181'000);

  SECTION("reshard_after_forward: false keeps every block from its forward to its backward") {
    // Now all three blocks stay gathered after the forward: the peak moves to block 2's copy-in,
    // 78,000 + root 4,000 + 3 blocks 48,000 + head grads 2,000 + held (1,000 + 8,000) + block 2's
    // unsharded grads 16,000 + its fp32 input 32,000 = 189,000 B: block 0's 16,000 B of bf16
    // parameters above the prefetched peak at block 2 (173,000), 8,000 above block 1's.
    const auto kept = make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), bf16_adamw(),
                                    fsdp(4, 0, false));
    const auto ktl = exec::play(parallel::lower(kept));
    CHECK(ktl.devices[0].peak.value == 189'000);
  }
}

TEST_CASE("HSDP equals FSDP over its shard group, plus an all-reduce across replicas",
          "[parallel][fsdp]") {
  const auto f = make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), bf16_adamw(), fsdp(4));
  const auto h =
      make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), bf16_adamw(), fsdp(8, 4));
  const auto fp = parallel::lower(f), hp = parallel::lower(h);
  CHECK(states(hp) == states(fp));
  CHECK(exec::play(hp).devices[0].peak == exec::play(fp).devices[0].peak);
  int all_reduces = 0;
  std::int64_t reduced = 0;
  for (const auto& op : hp.programs[0].ops)
    if (op.purpose == parallel::CommPurpose::hsdp_all_reduce) {
      ++all_reduces;
      reduced += op.comm.bytes.value;
      CHECK(op.comm.ranks == 2);
    }
  // Each unit's fp32 shard: 4 x 26,000 / 4 = 26,000 B over the 2 replicas.
  CHECK(all_reduces == 4);
  CHECK(reduced == 26'000);
}

TEST_CASE("parallel.fsdp reads true, {} and a mapping, with the documented defaults",
          "[parallel][fsdp]") {
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  auto load = [&](const std::string& fsdp) {
    return scenario::load_scenario(
        file, {"parallel.data=4", "cluster={nodes: 1, gpus_per_node: 4}", "parallel.fsdp=" + fsdp});
  };
  for (const char* on : {"true", "{}"}) {
    const auto s = load(on);
    CHECK(s.parallel.fsdp.enabled);
    CHECK(s.parallel.fsdp.reshard_after_forward);
    CHECK_FALSE(s.parallel.fsdp.param_dtype.has_value());  // follows training.precision (fp16)
    CHECK(s.parallel.fsdp.reduce_dtype == scenario::Precision::fp32);
    CHECK(s.parallel.fsdp_shard() == 4);
  }
  CHECK_FALSE(load("false").parallel.fsdp.enabled);
  const auto s = load("{reshard_after_forward: false, param_dtype: bf16, reduce_dtype: bf16, shard_size: 2}");
  CHECK_FALSE(s.parallel.fsdp.reshard_after_forward);
  CHECK(s.parallel.fsdp.param_dtype == scenario::Precision::bf16);
  CHECK(s.parallel.fsdp.reduce_dtype == scenario::Precision::bf16);
  CHECK(s.parallel.fsdp_shard() == 2);
  // fp16 training gathers fp16 (2 B/param): GPT-2's 124,439,808 parameters, one pass of
  // gathers per unit in forward (all 12 blocks and the root) and backward (the 12 blocks).
  const auto plan = parallel::lower(load("true"));
  std::int64_t gathered = 0, root = 0;
  for (const auto& v : plan.programs[0].ops)
    if (v.purpose == parallel::CommPurpose::fsdp_all_gather) gathered += v.comm.bytes.value;
  for (auto v : s.model.order)
    if (s.model.graph[v].block < 0) root += s.model.graph[v].params;
  CHECK(gathered == 2 * (2 * s.model.parameters() - root));
}
