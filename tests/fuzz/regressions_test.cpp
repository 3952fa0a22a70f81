// Replays every saved fuzzer finding (tests/fuzz/regressions/<target>/*) and every shipped
// seed through the same entry functions the libFuzzer targets call, so each fixed crash stays
// fixed in every build, with or without clang.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_entry.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = TRAINSIM_SOURCE_DIR;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Regular files under `dir` (recursively) whose name ends with one of `exts` (any when empty).
std::vector<fs::path> files_under(const fs::path& dir, std::vector<std::string> exts = {}) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    if (name == "README.md") continue;
    if (!exts.empty() && std::none_of(exts.begin(), exts.end(), [&](const std::string& x) {
          return e.path().extension() == x;
        }))
      continue;
    out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void replay(const std::string& target, const std::vector<fs::path>& files) {
  const auto entry = trainsim::fuzz::entry_named(target);
  REQUIRE(entry != nullptr);
  for (const auto& f : files) {
    INFO(target << " input " << f.string());
    const std::string data = slurp(f);
    CHECK_NOTHROW(entry(data));
  }
}

}  // namespace

TEST_CASE("saved fuzzer findings replay cleanly", "[fuzz][regression]") {
  for (const char* target : {"scenario", "model", "hf_config", "overrides", "units", "sweep", "csv", "import"}) {
    const auto files = files_under(kRoot / "tests/fuzz/regressions" / target);
    replay(target, files);
  }
}

TEST_CASE("shipped scenarios and models pass the fuzz harness", "[fuzz][seeds]") {
  const auto scenarios = files_under(kRoot / "scenarios", {".yaml"});
  REQUIRE_FALSE(scenarios.empty());
  replay("scenario", scenarios);
  auto models = files_under(kRoot / "models", {".yaml", ".json"});
  REQUIRE_FALSE(models.empty());
  replay("model", models);
  replay("hf_config", files_under(kRoot / "models/hf", {".json"}));
  auto sweeps = files_under(kRoot / "scenarios/sweeps", {".yaml"});
  REQUIRE_FALSE(sweeps.empty());
  replay("sweep", sweeps);
  for (const char* target : {"overrides", "units", "sweep", "csv"})
    replay(target, files_under(kRoot / "tests/fuzz/seeds" / target));
  const auto configs = files_under(kRoot / "tests/data/import");
  REQUIRE_FALSE(configs.empty());
  replay("import", configs);
}

TEST_CASE("the harness rejects an unknown target name", "[fuzz]") {
  CHECK(trainsim::fuzz::entry_named("nope") == nullptr);
}
