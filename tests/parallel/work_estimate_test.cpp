// The work estimate refuses a step over limits.max_ops before lowering reserves anything, and
// never refuses a plan that lowering would build (it is a lower bound of the plan's ops).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/parallel/work_estimate.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;
namespace fs = std::filesystem;

namespace {
const std::string kRoot = TRAINSIM_SOURCE_DIR;
}  // namespace

TEST_CASE("the op estimate is a lower bound of every shipped scenario's plan, both ways") {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(kRoot + "/scenarios"))
    if (e.path().extension() == ".yaml" && e.path().string().find("/sweeps/") == std::string::npos)
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() > 10);
  for (const auto& f : files) {
    for (const std::vector<std::string>& sets :
         {std::vector<std::string>{}, std::vector<std::string>{"parallel.zero=3"}}) {
      scenario::Scenario s;
      try {
        s = scenario::load_scenario(f, sets);
      } catch (const core::ConfigError&) {
        continue;  // ZeRO-3 does not apply to every layout
      }
      for (bool compress : {true, false}) {
        INFO(f << (sets.empty() ? "" : " with ZeRO-3") << (compress ? " compressed" : " expanded"));
        const parallel::Plan plan = parallel::lower(s, {.compress = compress});
        CHECK(parallel::ops_at_least(s, {.compress = compress}) <= plan.held_ops());
      }
    }
  }
}

TEST_CASE("a ZeRO-3 step of 200000 micro-batches is refused before it is lowered") {
  const auto s = scenario::load_scenario(kRoot + "/scenarios/parallel/05_zero3.yaml",
                                         {"training.gradient_accumulation=200000"});
  CHECK(parallel::ops_at_least(s, {.compress = true}) > s.limits.max_ops);
  try {
    (void)parallel::lower(s, {.compress = true});
    FAIL("lowered");
  } catch (const core::ConfigError& e) {
    CHECK(e.key_path() == "training.gradient_accumulation");
    CHECK_THAT(e.what(), Catch::Contains("this step would play at least") &&
                             Catch::Contains("expanded for ZeRO-3's gathers") &&
                             Catch::Contains("over limits.max_ops = 5,000,000"));
  }
}

TEST_CASE("an expanded plan (trace, memory plot) counts every layer's op") {
  const auto s = scenario::load_scenario(kRoot + "/scenarios/quickstart.yaml",
                                         {"training.gradient_accumulation=400000"});
  CHECK_NOTHROW(parallel::check_work(s, {.compress = true}));
  CHECK_THROWS_WITH(parallel::check_work(s, {.compress = false}),
                    Catch::Contains("expanded for a trace or memory series"));
}
