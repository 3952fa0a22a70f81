// Inputs that once crashed the loaders instead of giving a located error.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "models/model_yaml.hpp"
#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;
namespace fs = std::filesystem;

TEST_CASE("a model file that includes itself is a located error not a stack overflow", "[robustness][models]") {
  const fs::path dir = fs::temp_directory_path() / ("trainsim-selfinc-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "m.yaml") << "file: m.yaml\n";
  std::ofstream(dir / "a.yaml") << "file: b.yaml\n";
  std::ofstream(dir / "b.yaml") << "file: a.yaml\n";
  std::ofstream(dir / "s.yaml") << "model: {file: a.yaml}\ndevice: a100-80gb\n"
                                   "training: {micro_batch: 1, seq_len: 16}\n";
  CHECK_THROWS_WITH(models::load_model_file((dir / "m.yaml").string(), {}),
                    Catch::Contains("include itself"));
  try {
    scenario::load_scenario((dir / "s.yaml").string());
    FAIL("a loop of model files loaded");
  } catch (const core::ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("nest more than 16 deep"));
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}
