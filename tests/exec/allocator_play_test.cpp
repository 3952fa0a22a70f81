// The caching-allocator model in a played step, against figures computed by hand from
// PyTorch's rules (sim/hw/caching_allocator.hpp). The toy (tests/sweep/data/toy_fit.yaml): one
// layer with 1 Mi parameters in bf16 with Adam — weights 2 MiB, gradients 2 MiB, optimizer
// states 12 MiB — keeping k MiB for backward at micro-batch k, no context. Order of requests:
// weights, optimizer states (before the step), the saved activations (forward), the gradients
// (backward, while the activations are live).
#include <catch2/catch.hpp>

#include <string>

#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;

namespace {
constexpr std::int64_t MiB = 1 << 20;

exec::Timeline play_toy(int micro_batch, const char* memory = "100MiB", bool fast = true) {
  const auto s = scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/tests/sweep/data/toy_fit.yaml",
                                         {"training.allocator=caching", "training.micro_batch=" + std::to_string(micro_batch),
                                          std::string("device.memory=") + memory});
  return exec::play(parallel::lower(s, {.compress = fast}));
}
}  // namespace

TEST_CASE("allocator: a 1 MiB activation takes a small-pool segment beside the states' 20 MiB one",
          "[exec][allocator][oracle]") {
  // Weights (2 MiB) open a 20 MiB large-pool segment; the optimizer states (12 MiB) split its
  // 18 MiB rest, leaving 6 MiB. The 1 MiB activation is a small request: a 2 MiB segment. The
  // gradients (2 MiB) split the 6 MiB block. Reserved 22 MiB, allocated 2+12+1+2 = 17 MiB.
  const auto tl = play_toy(1);
  const auto& d = tl.devices[0];
  CHECK(d.reserved_peak.value == 22 * MiB);
  CHECK(d.allocated_peak.value == 17 * MiB);
  CHECK(d.peak.value == 22 * MiB);
  CHECK(d.tensor_peak.value == 17 * MiB);
  CHECK(d.at_peak[hw::MemCategory::allocator_cache].value == 5 * MiB);
  CHECK(d.fits);
}

TEST_CASE("allocator: best fit reuses the cached rest and nothing more is reserved", "[exec][allocator][oracle]") {
  // 4 MiB of activations split the 6 MiB block (2 MiB left, more than 1 MiB: split); the
  // gradients take those 2 MiB exactly. Everything in the first 20 MiB segment.
  const auto tl = play_toy(4);
  const auto& d = tl.devices[0];
  CHECK(d.reserved_peak.value == 20 * MiB);
  CHECK(d.allocated_peak.value == 20 * MiB);
  CHECK(d.at_peak[hw::MemCategory::allocator_cache].value == 0);
}

TEST_CASE("allocator: a block too small to split wastes its rest and fragmentation runs out of memory",
          "[exec][allocator][oracle]") {
  // 5 MiB of activations take the 6 MiB block whole (1 MiB left is not more than 1 MiB); the
  // gradients find no cached block and ask for a new 20 MiB segment: reserved 40 MiB while the
  // tensors hold 21 MiB (allocated 22 MiB with the wasted MiB).
  const auto roomy = play_toy(5);
  CHECK(roomy.devices[0].reserved_peak.value == 40 * MiB);
  CHECK(roomy.devices[0].allocated_peak.value == 22 * MiB);
  CHECK(roomy.devices[0].tensor_peak.value == 21 * MiB);
  CHECK(roomy.ooms.empty());
  // On a 30 MiB device the tensors fit (21 MiB) but the allocator does not: the gradients'
  // segment would make 40 MiB.
  for (bool fast : {true, false}) {
    const auto tight = play_toy(5, "30MiB", fast);
    REQUIRE(tight.ooms.size() == 1);
    const auto& o = tight.ooms[0];
    CHECK(o.kind == parallel::OpKind::backward);
    CHECK(o.category == hw::MemCategory::gradients);
    CHECK(o.requested.value == 2 * MiB);
    CHECK(o.segment.value == 20 * MiB);
    CHECK(o.in_use[hw::MemCategory::activations].value == 5 * MiB);
    CHECK(o.in_use[hw::MemCategory::allocator_cache].value == 1 * MiB);  // the wasted rest
    CHECK(o.in_use.total().value == 20 * MiB);
    CHECK_FALSE(tight.devices[0].fits);
  }
  // Without the model the same step fits: the formula figure is 21 MiB.
  const auto s = scenario::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/tests/sweep/data/toy_fit.yaml",
                                         {"training.micro_batch=5", "device.memory=30MiB"});
  const auto exact = exec::play(parallel::lower(s));
  CHECK(exact.ooms.empty());
  CHECK(exact.devices[0].peak.value == 21 * MiB);
  CHECK(exact.devices[0].reserved_peak.value == 21 * MiB);
  CHECK(exact.devices[0].allocated_peak.value == 21 * MiB);
}
