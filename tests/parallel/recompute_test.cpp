// Activation memory per transformer layer per device against Korthikanti et al. 2022, Table 2:
//   no recomputation, tensor parallel t:      s b h (10 + 24/t + 5 a s / (h t))
//   + sequence parallelism:                   s b h (34/t + 5 a s / (h t))
//   + selective recomputation:                s b h (34/t)
//   full recomputation:                       2 s b h (/ t with sequence parallelism)
// Measured as the difference of the played peak between 2- and 1-layer models, which cancels
// everything that is not one layer (embedding, loss, transient tensors).
#include <catch2/catch.hpp>

#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;

namespace {
const std::string kFile = std::string(TRAINSIM_SOURCE_DIR) + "/tests/data/korthikanti.yaml";

std::int64_t activations_at_peak(int layers, int t, bool sp, const char* recompute,
                                 std::vector<std::string> extra = {}) {
  std::vector<std::string> sets = {
      "model.layers=" + std::to_string(layers), "parallel.tensor=" + std::to_string(t),
      "cluster.gpus_per_node=" + std::to_string(t),
      std::string("parallel.sequence_parallel=") + (sp ? "true" : "false"),
      std::string("training.recompute=") + recompute};
  sets.insert(sets.end(), extra.begin(), extra.end());
  const auto s = scenario::load_scenario(kFile, sets);
  const auto tl = exec::play(parallel::lower(s));
  return tl.devices[0].at_peak[hw::MemCategory::activations].value;
}

std::int64_t per_layer(int t, bool sp, const char* recompute, std::vector<std::string> extra = {}) {
  return activations_at_peak(2, t, sp, recompute, extra) - activations_at_peak(1, t, sp, recompute, extra);
}

constexpr std::int64_t s = 512, b = 2, h = 1024, a = 16;
}  // namespace

TEST_CASE("per-layer activations follow Korthikanti Table 2 without recomputation", "[recompute][oracle]") {
  for (int t : {1, 2, 4}) {
    CHECK(per_layer(t, false, "none") == s * b * h * 10 + s * b * h * 24 / t + 5 * a * s * s * b / t);
    if (t > 1) CHECK(per_layer(t, true, "none") == s * b * h * 34 / t + 5 * a * s * s * b / t);
  }
}

TEST_CASE("selective recomputation drops exactly the 5as/h term", "[recompute][oracle]") {
  for (int t : {1, 2, 4}) {
    CHECK(per_layer(t, false, "selective") == s * b * h * 10 + s * b * h * 24 / t);
    if (t > 1) CHECK(per_layer(t, true, "selective") == s * b * h * 34 / t);
  }
}

TEST_CASE("full recomputation keeps only each block's input", "[recompute][oracle]") {
  // A longer sequence and larger micro-batch, so that the last block's checkpoint outweighs its
  // parameter gradients and the peak falls in that block's backward (where every checkpoint is
  // still held).
  const std::vector<std::string> big = {"training.micro_batch=8", "training.seq_len=2048",
                                        "model.max_positions=2048"};
  const std::int64_t S = 2048, B = 8;
  CHECK(per_layer(1, false, "full", big) == 2 * S * B * h);
  CHECK(per_layer(4, false, "full", big) == 2 * S * B * h);
  CHECK(per_layer(4, true, "full", big) == 2 * S * B * h / 4);
}

TEST_CASE("recomputation adds hardware FLOPs but not model FLOPs", "[recompute]") {
  const auto none = scenario::load_scenario(kFile, {"training.recompute=none"});
  const auto full = scenario::load_scenario(kFile, {"training.recompute=full"});
  const auto p_none = parallel::lower(none), p_full = parallel::lower(full);
  CHECK(p_full.model_flops == Approx(p_none.model_flops));
  CHECK(p_full.hardware_flops > p_full.model_flops * 1.2);
  CHECK(p_none.hardware_flops == Approx(p_none.model_flops));
}
