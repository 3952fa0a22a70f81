// Oracle tests of one played step: bytes computed by hand for tiny models.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "sim/core/error.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using hw::MemCategory;

namespace {
scenario::TrainingSpec fp32_sgd(std::int64_t micro_batch, std::int64_t accumulation = 1) {
  scenario::TrainingSpec t;
  t.micro_batch = micro_batch;
  t.gradient_accumulation = accumulation;
  t.precision = scenario::Precision::fp32;
  t.optimizer = scenario::Optimizer::sgd;
  return t;
}
models::Model two_layers() {
  return chain_model({plain_layer("a", 1000, 100, 10), plain_layer("b", 2000, 200, 20)});
}
}  // namespace

TEST_CASE("a two-layer step peaks at the first layer's backward with bytes computed by hand", "[exec][oracle]") {
  // fp32 SGD, micro-batch 2. weights 4 x 3000 = 12000. Forward keeps saved 2 x (100 + 200) and
  // the live outputs; backward of b books b's gradients (8000) and the gradient of a's output;
  // backward of a books a's gradients (4000) while a's saved 200 and output gradient 20 are held.
  const auto s = make_scenario(two_layers(), ideal_device(1'000'000), fp32_sgd(2));
  const auto plan = parallel::lower(s);
  const auto tl = exec::play(plan);
  REQUIRE(tl.devices.size() == 1);
  const auto& d = tl.devices[0];
  CHECK(d.peak.value == 24220);
  CHECK(d.at_peak[MemCategory::weights].value == 12000);
  CHECK(d.at_peak[MemCategory::gradients].value == 12000);
  CHECK(d.at_peak[MemCategory::activations].value == 220);
  CHECK(d.at_peak[MemCategory::optimizer_states].value == 0);
  CHECK(tl.ooms.empty());
}

TEST_CASE("the first allocation that does not fit is the OOM point with what was in use", "[exec][oracle]") {
  // Capacity 24000 = the model states exactly: the states fit, the 220 bytes of activations
  // held at a's backward do not -> cause activations, op backward of layer 0.
  const auto s = make_scenario(two_layers(), ideal_device(24000), fp32_sgd(2));
  const auto tl = exec::play(parallel::lower(s));
  REQUIRE(tl.ooms.size() == 1);
  const auto& o = tl.ooms[0];
  CHECK(o.kind == parallel::OpKind::backward);
  CHECK(o.layer == 0);
  CHECK(o.microbatch == 0);
  CHECK(o.category == MemCategory::gradients);
  CHECK(o.requested.value == 4000);
  CHECK(o.in_use.total().value == 12000 + 8000 + 220);
  CHECK(o.capacity.value == 24000);
  CHECK(o.cause == exec::OomCause::activations);
  CHECK(tl.devices[0].peak.value == 24220);  // the demand is still measured
  CHECK_FALSE(tl.devices[0].fits);
}

TEST_CASE("states alone above capacity make a model-state OOM", "[exec][oracle]") {
  const auto s = make_scenario(two_layers(), ideal_device(23999), fp32_sgd(2));
  const auto tl = exec::play(parallel::lower(s));
  REQUIRE_FALSE(tl.ooms.empty());
  CHECK(tl.ooms[0].cause == exec::OomCause::model_states);
}

TEST_CASE("all-ooms lists every allocation above capacity and play continues", "[exec]") {
  const auto s = make_scenario(two_layers(), ideal_device(20000), fp32_sgd(2, 3));
  exec::PlayOptions o;
  const auto first_only = exec::play(parallel::lower(s), o);
  o.all_ooms = true;
  const auto all = exec::play(parallel::lower(s), o);
  CHECK(first_only.ooms.size() == 1);
  CHECK(all.ooms.size() > first_only.ooms.size());
  CHECK(all.step_time == first_only.step_time);
  for (std::size_t i = 1; i < all.ooms.size(); ++i) CHECK(all.ooms[i - 1].time <= all.ooms[i].time);
}

TEST_CASE("mixed-precision Adam keeps 16 bytes of model state per parameter", "[exec][oracle]") {
  auto t = fp32_sgd(1);
  t.precision = scenario::Precision::bf16;
  t.optimizer = scenario::Optimizer::adam;
  const auto s = make_scenario(two_layers(), ideal_device(1'000'000), t);
  const auto plan = parallel::lower(s);
  const auto& ms = plan.programs[0].model_states;
  CHECK(ms[MemCategory::weights].value == 2 * 3000);
  CHECK(ms[MemCategory::gradients].value == 2 * 3000);
  CHECK(ms[MemCategory::optimizer_states].value == 12 * 3000);
  CHECK(ms.total().value == 16 * 3000);
}

TEST_CASE("with accumulation later micro-batches run with every gradient already held", "[exec][oracle]") {
  // Micro-batch 0 peaks at 24220 (above). From micro-batch 1 on all 12000 bytes of gradients
  // persist, so b's backward holds 12000 + 12000 + 660 = 24660: accumulation raises the peak by
  // the gradients not yet booked at micro-batch 0's peak, never by another micro-batch.
  const auto one = exec::play(parallel::lower(make_scenario(two_layers(), ideal_device(1'000'000), fp32_sgd(2, 1))));
  const auto four = exec::play(parallel::lower(make_scenario(two_layers(), ideal_device(1'000'000), fp32_sgd(2, 4))));
  CHECK(one.devices[0].peak.value == 24220);
  CHECK(four.devices[0].peak.value == 24660);
  CHECK(four.step_time > one.step_time);
}

TEST_CASE("the same input plays to the same timeline", "[exec][determinism]") {
  const auto s = make_scenario(two_layers(), ideal_device(30000), fp32_sgd(2, 3));
  const auto a = exec::play(parallel::lower(s));
  const auto b = exec::play(parallel::lower(s));
  CHECK(a.step_time == b.step_time);
  CHECK(a.devices[0].start == b.devices[0].start);
  CHECK(a.devices[0].finish == b.devices[0].finish);
  CHECK(a.events == b.events);
}

TEST_CASE("a compute-bound step takes forward plus twice forward for backward", "[exec][oracle]") {
  // 1e9 FLOPs per sample per layer at 1 TFLOP/s: forward 1 ms per layer and sample.
  auto m = chain_model({plain_layer("a", 0, 0, 0, 1e9), plain_layer("b", 0, 0, 0, 1e9)});
  const auto tl = exec::play(parallel::lower(make_scenario(m, ideal_device(1 << 20), fp32_sgd(3))));
  // 2 layers x 3 samples x (1 + 2) ms = 18 ms; the optimizer has no parameters to update.
  CHECK(tl.step_time.ns == 18'000'000);
}
