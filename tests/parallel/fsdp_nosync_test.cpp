// FSDP1 as Lightning Fabric runs it (pass_fsdp.cpp): `gradient_sync: last-micro-batch` (FSDP1's
// no_sync(), Fabric's no_backward_sync: unsharded gradients accumulated across micro-batches and
// reduce-scattered in the last one) and `flat_parameter: true` (use_orig_params=True: a unit's
// frozen weights share its FlatParameter's gradient with the adapters), against hand counts.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "models/builders.hpp"
#include "models/presets.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using hw::MemCategory;

namespace {

scenario::TrainingSpec bf16_adamw(std::int64_t microbatches) {
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.gradient_accumulation = microbatches;
  t.precision = scenario::Precision::bf16;
  t.optimizer = scenario::Optimizer::adamw;
  return t;
}

scenario::ParallelSpec fsdp(std::int64_t data, bool sync_last) {
  scenario::ParallelSpec p;
  p.data = data;
  p.fsdp.enabled = true;
  p.fsdp.sync_last_microbatch = sync_last;
  return p;
}

struct Scatters {
  int count = 0;
  std::int64_t bytes = 0;
  std::int64_t last_microbatch = 0;  // of which in the last micro-batch
};

Scatters scatters(const parallel::Plan& plan, std::int32_t last) {
  Scatters s;
  for (const auto& op : plan.programs[0].ops)
    if (op.purpose == parallel::CommPurpose::fsdp_reduce_scatter) {
      ++s.count;
      s.bytes += op.comm.bytes.value;
      if (op.microbatch == last) s.last_microbatch += op.comm.bytes.value;
    }
  return s;
}

int gathers(const parallel::Plan& plan) {
  int n = 0;
  for (const auto& op : plan.programs[0].ops)
    n += op.purpose == parallel::CommPurpose::fsdp_all_gather ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("FSDP gradient_sync last-micro-batch: one reduce-scatter per unit, in the last micro-batch",
          "[parallel][fsdp]") {
  // fsdp_blocks_model: root (emb 1,000 + head 1,000) and 3 blocks of 8,000: 26,000 parameters,
  // reduced in fp32. 4 micro-batches reducing each: 16 reduce-scatters of 4 x 26,000 B in all.
  // Under no_sync: 4 (one per unit), all in micro-batch 3, 4 x 26,000 = 104,000 B. The gathers do
  // not change: FSDP1's FULL_SHARD frees a unit's parameters after its backward under no_sync too
  // (_should_free_in_backward), so each micro-batch gathers the root once and each block twice.
  const auto every = parallel::lower(
      make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), bf16_adamw(4), fsdp(4, false)));
  const auto last = parallel::lower(
      make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), bf16_adamw(4), fsdp(4, true)));
  CHECK(scatters(every, 3).count == 16);
  CHECK(scatters(every, 3).bytes == 4 * 4 * 26'000);
  const Scatters s = scatters(last, 3);
  CHECK(s.count == 4);
  CHECK(s.bytes == 4 * 26'000);
  CHECK(s.last_microbatch == 4 * 26'000);
  CHECK(gathers(last) == gathers(every));
  CHECK(gathers(last) == 4 * 7);
}

TEST_CASE("FSDP gradient_sync last-micro-batch holds every unit's accumulated gradients",
          "[parallel][fsdp]") {
  // Free links, as in fsdp_test.cpp's peak. Reducing every micro-batch, 2 micro-batches peak at
  // block 1's attention backward of the second: 181,000 B as with one, plus the sharded fp32
  // gradients of emb and block 0 already held from the first (4 x 9,000 / 4): 190,000 B.
  // Under no_sync the first micro-batch's backward leaves each unit's accumulated gradient in
  // reduce_dtype (fp32), 4 x 26,000 = 104,000 B, and the sharded gradients come only with the
  // last one's reduce-scatters. The peak is block 1's MLP backward (its first backward op) in
  // the last micro-batch, beside block 2's reduce-scatter:
  //   persistent: fp32 weights 26,000 + Adam 52,000                         78,000
  //   root gathered in bf16                                    2 x 2,000  =  4,000
  //   block 1 gathered                                         2 x 8,000  = 16,000
  //   head's unsharded bf16 gradients (the root reduces last)  2 x 1,000  =  2,000
  //   sharded fp32 gradients held: head, block 2, block 1's MLP
  //                                            4 x (1,000 + 8,000 + 5,000) / 4 = 14,000
  //   block 1's MLP unsharded bf16 gradients                   2 x 5,000  = 10,000
  //   accumulated fp32 gradients, every unit's (block 2's
  //   until its reduce-scatter ends)                           4 x 26,000 = 104,000
  //   block 2's reduce-scatter input, its accumulated
  //   gradient copied in (FSDP2's foreach_reduce)              4 x 8,000  = 32,000
  // = 260,000 B.
  const auto every = make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), bf16_adamw(2),
                                   fsdp(4, false));
  CHECK(exec::play(parallel::lower(every)).devices[0].peak.value == 190'000);
  const auto last = make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), bf16_adamw(2),
                                  fsdp(4, true));
  CHECK(exec::play(parallel::lower(last)).devices[0].peak.value == 260'000);
  SECTION("one micro-batch: nothing to accumulate, as reducing every micro-batch") {
    const auto one = make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), bf16_adamw(1),
                                   fsdp(4, true));
    CHECK(exec::play(parallel::lower(one)).devices[0].peak.value == 181'000);
  }
}

TEST_CASE("FSDP1's FlatParameter reduce-scatters its accumulated gradient in place",
          "[parallel][fsdp]") {
  // With reduce_dtype = param_dtype (bf16) FSDP1's _reduce_grad hands the flat gradient itself to
  // the reduce-scatter (a copy only to pad or cast); FSDP2's foreach_reduce copies it into a new
  // input. The last micro-batch's 4 reduce-scatters then allocate nothing and free the
  // accumulated bf16 gradients, 2 x 26,000 = 52,000 B, instead of allocating inputs of as many
  // bytes and freeing both.
  auto p = fsdp(4, true);
  p.fsdp.reduce_dtype = scenario::Precision::bf16;
  const auto count = [&](bool flat) {
    p.fsdp.flat_parameter = flat;
    const auto plan = parallel::lower(
        make_scenario(fsdp_blocks_model(), ideal_device(1LL << 40), bf16_adamw(2), p));
    const auto& P = plan.programs[0];
    std::int64_t allocated = 0, freed = 0;
    for (const auto& op : P.ops) {
      if (op.purpose != parallel::CommPurpose::fsdp_reduce_scatter) continue;
      for (auto e = op.alloc_begin; e < op.alloc_end; ++e) allocated += P.effects[e].bytes.value;
      for (auto e = op.free_begin; e < op.free_end; ++e) freed += P.effects[e].bytes.value;
    }
    return std::pair{allocated, freed};
  };
  CHECK(count(false) == std::pair<std::int64_t, std::int64_t>{52'000, 104'000});
  CHECK(count(true) == std::pair<std::int64_t, std::int64_t>{0, 52'000});
}

TEST_CASE("FSDP flat_parameter: a block's frozen weights get gradients beside its LoRA adapters",
          "[parallel][fsdp][finetune]") {
  // Llama-2-7B built in bf16, LoRA r8 on q and v, FSDP over 2 ranks. A block holds
  // 4 x 4,096^2 + 3 x 4,096 x 11,008 + 2 x 4,096 = 202,383,360 frozen parameters and
  // 2 x 8 x (4,096 + 4,096) = 131,072 adapter ones: 202,514,432 in one FlatParameter, which
  // requires grad, so its gradient covers them all. The root (embedding, final norm, head) holds
  // no trained parameter: no gradient. Sharded bf16 gradients per rank: 32 x 202,514,432 x 2 B /
  // 2 = 6,480,461,824 B (4,194,304 without flat parameters); one micro-batch reduce-scatters
  // 32 x 202,514,432 x 2 B = 12,960,923,648 B in bf16 (8,388,608 B without).
  models::BuildOptions o;
  o.seq_len = 128;
  const auto model = models::build_preset(*models::find_preset("llama2-7b"), o);
  scenario::TrainingSpec t = bf16_adamw(1);
  t.precision = scenario::Precision::bf16_true;
  scenario::LoraSpec l;
  l.rank = 8;
  l.targets[static_cast<std::size_t>(models::LinearRole::q)] = true;
  l.targets[static_cast<std::size_t>(models::LinearRole::v)] = true;
  t.lora = l;
  scenario::ParallelSpec p = fsdp(2, false);
  p.fsdp.reduce_dtype = scenario::Precision::bf16;
  const auto adapters = parallel::lower(make_scenario(model, ideal_device(1LL << 40), t, p));
  CHECK(adapters.programs[0].model_states[MemCategory::gradients].value == 4'194'304);
  CHECK(scatters(adapters, 0).bytes == 8'388'608);
  p.fsdp.flat_parameter = true;
  const auto flat = parallel::lower(make_scenario(model, ideal_device(1LL << 40), t, p));
  CHECK(flat.programs[0].model_states[MemCategory::gradients].value == 6'480'461'824);
  CHECK(scatters(flat, 0).bytes == 12'960'923'648);
  // The optimizer, built over the trained parameters, keeps states for the adapters alone.
  CHECK(flat.programs[0].model_states[MemCategory::optimizer_states].value ==
        adapters.programs[0].model_states[MemCategory::optimizer_states].value);
}
