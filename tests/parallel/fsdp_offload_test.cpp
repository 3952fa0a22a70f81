// FSDP's sharded states in the model's stored dtype and its CPU offload (fsdp_offload.hpp,
// pass_fsdp.cpp) against hand counts on a small model of known parameters.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using hw::MemCategory;
using parallel::OpKind;

namespace {

scenario::Scenario fsdp_scenario(scenario::Precision precision, bool offload) {
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.gradient_accumulation = 1;
  t.precision = precision;
  t.optimizer = scenario::Optimizer::adamw;
  scenario::ParallelSpec p;
  p.data = 4;
  p.fsdp.enabled = true;
  p.fsdp.cpu_offload = offload;
  auto s = make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), t, p);
  s.cluster.pcie = free_link();
  s.cluster.host_memory = core::Bytes{1LL << 40};
  s.cluster.host_memory_bandwidth = core::Bandwidth{1e30};
  return s;
}

std::int64_t bytes_of(const parallel::Plan& plan, OpKind kind, int* count) {
  std::int64_t sum = 0;
  *count = 0;
  for (const auto& op : plan.programs[0].ops)
    if (op.kind == kind) {
      ++*count;
      sum += kind == OpKind::cpu_optimizer ? op.work.bytes.value : op.comm.bytes.value;
    }
  return sum;
}

}  // namespace

TEST_CASE("FSDP shards a model built in bf16 (bf16-true) in bf16: 8 B/param / N for AdamW",
          "[parallel][fsdp]") {
  // torchtune builds the model in bf16 and fully_shard keeps its dtype: 26,000 params over 4
  // ranks, weights 2 x 26,000 / 4 = 13,000 B, gradients 13,000 B, AdamW's m and v in bf16
  // 4 x 26,000 / 4 = 26,000 B: 52,000 = 8 x 26,000 / 4 (mixed bf16 keeps 16 x 26,000 / 4).
  const auto plan = parallel::lower(fsdp_scenario(scenario::Precision::bf16_true, false));
  const auto& ms = plan.programs[0].model_states;
  CHECK(ms[MemCategory::weights].value == 13'000);
  CHECK(ms[MemCategory::gradients].value == 13'000);
  CHECK(ms[MemCategory::optimizer_states].value == 26'000);
  const auto mixed = parallel::lower(fsdp_scenario(scenario::Precision::bf16, false));
  CHECK(mixed.programs[0].model_states.total().value == 16 * 26'000 / 4);
}

TEST_CASE("FSDP CPU offload: the sharded states live on the host, copied per unit over PCIe",
          "[parallel][fsdp]") {
  // Mixed bf16: fp32 shards. Host per GPU: weights 4 x 26,000 / 4 = 26,000 B, gradients
  // 26,000 B, AdamW states 8 x 26,000 / 4 = 52,000 B; none of them on the GPU.
  const auto plan = parallel::lower(fsdp_scenario(scenario::Precision::bf16, true));
  const auto& P = plan.programs[0];
  CHECK(P.host[MemCategory::weights].value == 26'000);
  CHECK(P.host[MemCategory::gradients].value == 26'000);
  CHECK(P.host[MemCategory::optimizer_states].value == 52'000);
  CHECK(P.persistent.total().value == 0);
  CHECK(P.model_states.total().value == 0);
  CHECK(plan.host_per_node.value == 4 * 104'000);  // the node's 4 GPUs

  int n = 0;
  // One host -> device copy per all-gather, of the rank's fp32 shard of the unit: the root
  // (2,000 params) once, each block (8,000) in forward and again in backward:
  // 4 x (2,000 + 6 x 8,000) / 4 = 50,000 B in 7 copies.
  CHECK(bytes_of(plan, OpKind::pcie_h2d, &n) == 50'000);
  CHECK(n == 7);
  // One device -> host copy per reduce-scatter, of the rank's fp32 gradient shard:
  // 4 x 26,000 / 4 = 26,000 B over the 4 units.
  CHECK(bytes_of(plan, OpKind::pcie_d2h, &n) == 26'000);
  CHECK(n == 4);
  // The CPU step over the rank's 6,500 parameters: reads the fp32 gradient (4), reads and
  // writes m and v (2 x 8) and the fp32 parameter (2 x 4): 28 x 6,500 = 182,000 B; no GPU step.
  CHECK(bytes_of(plan, OpKind::cpu_optimizer, &n) == 182'000);
  CHECK(n == 1);
  CHECK(bytes_of(plan, OpKind::optimizer, &n) == 0);
  CHECK(n == 0);
}

TEST_CASE("FSDP CPU offload's GPU peak: the gathered units and gradient buffers alone",
          "[parallel][fsdp]") {
  // Free links and PCIe: each copy and collective ends when it may start. fsdp_test.cpp's peak
  // (block 1's attention backward, 181,000 B) without what offload moves to the host: the
  // persistent fp32 weights and Adam states (78,000 B) and the held fp32 gradient shards
  // (17,000 B): 181,000 - 95,000 = 86,000 B. The staged shards and the reduce-scatter outputs
  // end with their gather and copy, before that op.
  const auto tl = exec::play(parallel::lower(fsdp_scenario(scenario::Precision::bf16, true)));
  CHECK(tl.devices[0].peak.value == 86'000);
  CHECK(tl.host_fits);
}

TEST_CASE("FSDP separate_outer_layers: embeddings and head gathered and reduced as units of their own",
          "[parallel][fsdp]") {
  // The root (emb 1,000 + head 1,000) is gathered once and kept from its forward to its
  // backward: 7 gathers (tests/parallel/fsdp_test.cpp). As units of their own, emb and head are
  // gathered for their forward and again for their backward, like the blocks: 10 gathers of
  // 2 x 2 x 26,000 = 104,000 B in bf16, and 5 fp32 reduce-scatters of 4 x 26,000 = 104,000 B.
  auto s = fsdp_scenario(scenario::Precision::bf16, false);
  s.parallel.fsdp.separate_outer_layers = true;
  const auto plan = parallel::lower(s);
  int gathers = 0, scatters = 0;
  std::int64_t gathered = 0, scattered = 0;
  for (const auto& op : plan.programs[0].ops) {
    if (op.purpose == parallel::CommPurpose::fsdp_all_gather) {
      ++gathers;
      gathered += op.comm.bytes.value;
    }
    if (op.purpose == parallel::CommPurpose::fsdp_reduce_scatter) {
      ++scatters;
      scattered += op.comm.bytes.value;
    }
  }
  CHECK(gathers == 10);
  CHECK(gathered == 104'000);
  CHECK(scatters == 5);
  CHECK(scattered == 104'000);
}
