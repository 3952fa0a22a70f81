#pragma once
// Test helpers for Hugging Face config.json imports: a model built from a scenario's `model`
// mapping, a config written to a fresh temporary folder, and the located error it gives.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/model_yaml.hpp"
#include "sim/core/error.hpp"

namespace trainsim::test {

inline models::Model build(const std::string& doc,
                           models::BuildOptions opts = {128, models::DType::bf16, false}) {
  return models::build_model(YAML::Load(doc)["model"], "scenario.yaml", "model", opts,
                             TRAINSIM_SOURCE_DIR);
}

// The shipped config models/hf/<dir>/config.json.
inline models::Model hf(const std::string& dir,
                        models::BuildOptions opts = {128, models::DType::bf16, false}) {
  return build("model: {hf_config: models/hf/" + dir + "/config.json}", opts);
}

inline const models::Layer& layer(const models::Model& m, const std::string& name) {
  const auto v = models::find_layer(m, name);
  REQUIRE(v);
  return m.graph[*v];
}

// A config.json written to a fresh temporary folder; returns its path.
inline std::string write_json(const std::string& text) {
  static int n = 0;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("trainsim_hf_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
  std::filesystem::create_directories(dir);
  const auto path = dir / "config.json";
  std::ofstream(path) << text;
  return path.string();
}

// The error importing `json` gives: located in the written file, under model.hf_config.
inline core::ConfigError error_of(const std::string& json) {
  const std::string path = write_json(json);
  try {
    build("model: {hf_config: " + path + "}");
  } catch (const core::ConfigError& e) {
    CHECK(e.where().file == path);
    CHECK(e.key_path() == "model.hf_config");
    return e;
  }
  FAIL("no error for " << json);
  throw;
}

}  // namespace trainsim::test
