// The memory series rebuilt from a timeline: exact against the player's ledger.
#include <catch2/catch.hpp>

#include <filesystem>

#include "../support/fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/memory_series.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {
void check_against_timeline(const parallel::Plan& plan, const exec::Timeline& tl) {
  const auto series = report::memory_series(plan, tl);
  REQUIRE(series.size() == tl.devices.size());
  for (std::size_t p = 0; p < series.size(); ++p) {
    const auto& s = series[p];
    INFO("stage " << p);
    REQUIRE_FALSE(s.samples.empty());
    CHECK(s.samples.front().time == core::TimePoint{});
    // The step ends holding the model states again (and the allocator its cached segments).
    hw::MemBreakdown end = s.samples.back().in_use;
    end[hw::MemCategory::allocator_cache] = {};
    CHECK(end.total() == plan.programs[p].persistent.total());
    core::Bytes most{};
    for (std::size_t i = 0; i < s.samples.size(); ++i) {
      if (i) CHECK_FALSE(s.samples[i].time < s.samples[i - 1].time);
      most = std::max(most, s.samples[i].in_use.total());
    }
    // The series plays the plan's demand; a paged optimizer's states that the driver evicted at
    // the peak (exec/paging.cpp) are in it and out of the player's peak.
    const core::Bytes demand = tl.devices[p].peak + tl.devices[p].paged_spill;
    CHECK(most == demand);
    CHECK(s.peak == demand);
    CHECK(s.capacity == tl.devices[p].capacity);
    CHECK_FALSE(tl.devices[p].end < s.samples.back().time);
  }
}
}  // namespace

TEST_CASE(
    "a two-layer step's memory series starts and ends at the model states and peaks at the "
    "ledger's peak",
    "[report][oracle]") {
  scenario::TrainingSpec t;
  t.micro_batch = 2;
  t.precision = scenario::Precision::fp32;
  t.optimizer = scenario::Optimizer::sgd;
  const auto s =
      make_scenario(chain_model({plain_layer("a", 1000, 100, 10), plain_layer("b", 2000, 200, 20)}),
                    ideal_device(1'000'000), t);
  const auto plan = parallel::lower(s);
  const auto tl = exec::play(plan);
  check_against_timeline(plan, tl);
  // Hand-computed in tests/exec/play_test.cpp.
  CHECK(report::memory_series(plan, tl)[0].peak.value == 24220);
}

TEST_CASE("every shipped scenario's memory series peaks exactly at the player's peak",
          "[report][scenarios]") {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e :
       fs::recursive_directory_iterator(fs::path(TRAINSIM_SOURCE_DIR) / "scenarios"))
    // scenarios/sweeps/ holds sweep specs (a base scenario plus axes), not scenarios.
    if (e.path().extension() == ".yaml" && e.path().parent_path().filename() != "sweeps")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 5);
  for (const auto& f : files) {
    INFO(f.string());
    const auto sc = scenario::load_scenario(f.string());
    const auto plan = parallel::lower(sc);
    check_against_timeline(plan, exec::play(plan));
  }
}

TEST_CASE("the memory series refuses a timeline of another plan", "[report]") {
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  const auto s =
      make_scenario(chain_model({plain_layer("a", 10, 10, 10)}), ideal_device(1'000'000), t);
  const auto plan = parallel::lower(s);
  exec::Timeline tl = exec::play(plan);
  tl.devices[0].start.pop_back();
  CHECK_THROWS(report::memory_series(plan, tl));
}
