// training.packed_documents (sim/parallel/flash_core.cpp, packed_square_fraction): a packed
// sequence's attention runs per document, each document's causal square at FlashAttention-2's
// tile granularity, the sum over the documents against the whole sequence's square. Hand counts
// on GPT-2 small (h = 768, 12 causal blocks, sequence 1024) as in flash_core_test.cpp.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.hpp"
#include "sim/parallel/flash_core.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;
using parallel::OpKind;
using Packed = scenario::TrainingSpec::PackedDocuments;

namespace {

scenario::Scenario load(const std::string& training, const std::string& parallel = "{data: 1}") {
  const std::string text =
      "model: gpt2\n"
      "device: h100-80gb\n"
      "training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 1024, allocator: none, "
      "attention: flash, " + training + "}\nparallel: " + parallel + "\n";
  return scenario::load_scenario_tree(YAML::Load(text), "packed.yaml");
}

struct Flash {
  double model_forward = 0, forward = 0, backward = 0;
};

Flash sum(const scenario::Scenario& s) {
  const parallel::Plan plan = parallel::lower(s, {});
  Flash f;
  for (const auto& op : plan.programs.at(0).ops) {
    if (op.kind != OpKind::backward) f.model_forward += op.work.flash_model_flops;
    f.forward += op.work.flash_forward;
    f.backward += op.work.flash_backward;
  }
  return f;
}

// One block's core as the model counts it: 4 s^2 h = 4 x 1024^2 x 768.
constexpr double kCore = 4.0 * 1024 * 1024 * 768;

Packed of_length(std::int64_t n) {
  Packed p;
  p.length = n;
  return p;
}

Packed of_lengths(std::vector<std::int64_t> d) {
  Packed p;
  p.lengths = std::move(d);
  return p;
}

}  // namespace

TEST_CASE("a packed sequence's flash kernels compute each document's causal square",
          "[parallel][flash][packed]") {
  using parallel::packed_square_fraction;
  // 4096 tokens as 8 documents of 512: 4 tiles a side each, 10 of 16 blocks (5/8):
  // 8 x 512^2 x 5/8 / 4096^2 = 5 / 64, against 33 / 64 for one document of 4096.
  CHECK(packed_square_fraction(4096, of_length(512), true) == Approx(5.0 / 64));
  CHECK(packed_square_fraction(4096, Packed{}, true) == Approx(33.0 / 64));
  // Documents of 1024 and 3072: 1024^2 x 9/16 + 3072^2 x 25/48 = 589,824 + 4,915,200 over
  // 4096^2 = 0.328125.
  CHECK(packed_square_fraction(4096, of_lengths({1024, 3072}), true) == Approx(0.328125));
  // 1024 tokens of 300-token documents: three of 300 (3 tiles, 6 of 9 blocks) and the 124 left
  // (one tile, whole): (3 x 300^2 x 2/3 + 124^2) / 1024^2.
  CHECK(packed_square_fraction(1024, of_length(300), true) ==
        Approx((3 * 90000.0 * 2 / 3 + 124.0 * 124) / (1024.0 * 1024)));
  // One document of the whole sequence is the unpacked kernel; without a causal mask each
  // document computes its whole square: 2 x 512^2 / 1024^2.
  CHECK(packed_square_fraction(1024, of_length(1024), true) == Approx(9.0 / 16));
  CHECK(packed_square_fraction(1024, of_lengths({1024}), true) == Approx(9.0 / 16));
  CHECK(packed_square_fraction(1024, of_length(512), false) == Approx(0.5));
}

TEST_CASE("packed documents shrink the flash kernels' work, not the model's FLOPs",
          "[parallel][flash][packed]") {
  // Four documents of 256: 2 tiles a side, 3 of 4 blocks: 4 x 256^2 x 3/4 / 1024^2 = 3 / 16.
  const Flash f = sum(load("packed_documents: {length: 256}"));
  CHECK(f.model_forward == Approx(12 * kCore));
  CHECK(f.forward == Approx(12 * kCore * 3 / 16));
  CHECK(f.backward == Approx(2.5 * 12 * kCore * 3 / 16));
  // The same documents written as a list.
  const Flash list = sum(load("packed_documents: {lengths: [256, 256, 256, 256]}"));
  CHECK(list.forward == Approx(f.forward));
  CHECK(list.backward == Approx(f.backward));
  // Full recomputation replays the packed forward.
  const Flash full = sum(load("packed_documents: {length: 256}, recompute: full"));
  CHECK(full.forward == Approx(2 * 12 * kCore * 3 / 16));
}

TEST_CASE("packed_documents is refused where it is not modelled", "[parallel][flash][packed]") {
  const auto refused = [](const std::string& training, const std::string& parallel,
                          const std::string& key) {
    try {
      load(training, parallel);
      FAIL("loaded: " << training);
    } catch (const core::ConfigError& e) {
      CHECK(e.key_path() == key);
    }
  };
  refused("packed_documents: {length: 2048}", "{data: 1}", "training.packed_documents.length");
  refused("packed_documents: {lengths: [512, 256]}", "{data: 1}", "training.packed_documents.lengths");
  refused("packed_documents: {length: 0}", "{data: 1}", "training.packed_documents.length");
  refused("packed_documents: {}", "{data: 1}", "training.packed_documents");
  refused("packed_documents: {length: 256}", "{data: 2, context: 2}", "training.packed_documents");
}
