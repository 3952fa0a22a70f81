// A cloned first block (training.model_init: cloned-layer; pass_load.cpp): torchtune's
// TransformerDecoder of 2024-04/05 builds one block on the GPU, deep-copies it for every block
// and drops it, so that block's parameter tensors leave their segments cached. Bytes and
// segments computed by hand for Llama-2-7B (h 4096, MLP 11008, 32 heads, vocabulary 32,000).
#include <catch2/catch.hpp>

#include <cstdlib>

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
constexpr std::int64_t kAttnW = 4096LL * 4096 * 2;    // q, k, v, o in bf16: 33,554,432 B = 32 MiB
constexpr std::int64_t kMlpW = 4096LL * 11008 * 2;    // gate, up, down: 90,177,536 B = 86 MiB
constexpr std::int64_t kAdapter = 8LL * 4096 * 2;     // A (8 x 4096) or B (4096 x 8): 65,536 B
constexpr std::int64_t kNorm = 4096LL * 2;            // an RMSNorm weight: 8,192 B

using Init = scenario::TrainingSpec::ModelInit;

scenario::Scenario llama2_7b(Init init, bool lora, std::int64_t memory = 1LL << 40) {
  models::BuildOptions o;
  o.seq_len = 512;
  scenario::TrainingSpec t;
  t.micro_batch = 2;
  t.seq_len = 512;
  t.precision = scenario::Precision::bf16_true;
  t.optimizer = scenario::Optimizer::adamw;
  t.model_init = init;
  if (lora) {  // the LoRA tutorial's q, v rank 8
    scenario::LoraSpec l;
    l.rank = 8;
    l.targets[static_cast<std::size_t>(models::LinearRole::q)] = true;
    l.targets[static_cast<std::size_t>(models::LinearRole::v)] = true;
    t.lora = l;
  }
  return make_scenario(models::build_preset(*models::find_preset("llama2-7b"), o), ideal_device(memory), t);
}

std::int64_t allocated_by(const std::vector<parallel::Program::LoadEffect>& load) {
  std::int64_t sum = 0;
  for (const auto& l : load) sum += l.alloc ? l.effect.bytes.value : 0;
  return sum;
}

}  // namespace

TEST_CASE("model_init: cloned-layer allocates the first block's tensors, then frees them",
          "[finetune][model_init]") {
  const auto plan = parallel::lower(llama2_7b(Init::cloned_layer, true));
  const auto& load = plan.programs.at(0).load;
  // 7 linear weights, A and B beside q and v, two RMSNorm weights: 13 tensors, each allocated
  // and then freed.
  REQUIRE(load.size() == 2 * 13);
  for (std::size_t k = 0; k < 13; ++k) {
    CHECK(load[k].alloc);
    CHECK_FALSE(load[13 + k].alloc);
    CHECK(load[13 + k].effect.bytes == load[k].effect.bytes);
  }
  // 4 x 33,554,432 + 3 x 90,177,536 + 4 x 65,536 + 2 x 8,192 = 405,028,864 B (0.38 GiB).
  CHECK(allocated_by(load) == 4 * kAttnW + 3 * kMlpW + 4 * kAdapter + 2 * kNorm);
  CHECK(allocated_by(load) == 405'028'864LL);
}

TEST_CASE("model_init: cloned-layer of a full fine-tune: the block's weights and norms",
          "[finetune][model_init]") {
  const auto plan = parallel::lower(llama2_7b(Init::cloned_layer, false));
  // 202,383,360 parameters per block in bf16: 404,766,720 B.
  CHECK(allocated_by(plan.programs.at(0).load) == 4 * kAttnW + 3 * kMlpW + 2 * kNorm);
  CHECK(allocated_by(plan.programs.at(0).load) == 404'766'720LL);
}

TEST_CASE("model_init: none plays no load", "[finetune][model_init]") {
  CHECK(parallel::lower(llama2_7b(Init::none, true)).programs.at(0).load.empty());
}

TEST_CASE("model_init: cloned-layer leaves one segment per large tensor and one small segment",
          "[finetune][model_init]") {
  const auto plan = parallel::lower(llama2_7b(Init::cloned_layer, true));
  const auto& P = plan.programs.at(0);
  exec::AllocatorModel a(P);
  for (const auto& e : exec::AllocatorModel::state_buffers(P)) a.allocate(e, -1);
  const std::int64_t reserved = a.allocator().reserved();
  const std::int64_t allocated = a.allocator().allocated();
  a.play_load(P);
  // Requests of 10 MiB or more take a segment of their size rounded up to 2 MiB: 4 x 32 MiB +
  // 3 x 86 MiB. The adapters and norms (1 MiB or less) share one 2 MiB small-pool segment.
  // Every block is free again and every segment stays cached: 388 MiB more reserved.
  CHECK(a.allocator().reserved() - reserved == (4 * 32 + 3 * 86 + 2) * kMiB);
  CHECK(a.allocator().allocated() == allocated);
  CHECK(a.allocator().peak_reserved() == a.allocator().reserved());
}

TEST_CASE("model_init: cloned-layer raises the step's reserved peak by at most its segments",
          "[finetune][model_init]") {
  const auto tc = exec::play(parallel::lower(llama2_7b(Init::cloned_layer, true)));
  const auto tn = exec::play(parallel::lower(llama2_7b(Init::none, true)));
  const auto& dc = tc.devices.at(0);
  const auto& dn = tn.devices.at(0);
  // With 1 TiB nothing is given back: the step starts with the 388 MiB of cached segments and
  // carves what fits from them, so it reserves at least as much as without them and at most
  // 388 MiB more.
  CHECK(dc.reserved_peak.value >= dn.reserved_peak.value);
  CHECK(dc.reserved_peak.value <= dn.reserved_peak.value + 388 * kMiB);
  // The tensors are the same; only where they land differs (a block whose remainder would be
  // 1 MiB or less is handed out whole).
  CHECK(std::abs(dc.allocated_peak.value - dn.allocated_peak.value) < 16 * kMiB);
}
