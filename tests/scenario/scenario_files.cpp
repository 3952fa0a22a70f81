#include "scenario_files.hpp"

#include <atomic>
#include <fstream>
#include <random>
#include <stdexcept>
#include <unistd.h>

namespace trainsim::test {

TempDir::TempDir() {
  // pid + counter + random: unique across parallel ctest processes and within one.
  static std::atomic<int> counter{0};
  std::random_device rd;
  const auto base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto candidate = base / ("trainsim-scenario-test-" + std::to_string(::getpid()) + "-" +
                             std::to_string(counter++) + "-" + std::to_string(rd()));
    if (std::filesystem::create_directory(candidate)) {
      dir_ = candidate;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary folder under " + base.string());
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
  const auto p = dir_ / name;
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
  return p.string();
}

LoadFailure load_error(const TempDir& dir, const std::string& text,
                       const std::vector<std::string>& sets, const std::string& name) {
  LoadFailure f;
  f.path = dir.write(name, text);
  try {
    scenario::load_scenario(f.path, sets);
  } catch (const core::ConfigError& e) {
    f.error = e;
  }
  return f;
}

scenario::Scenario load_text(const TempDir& dir, const std::string& text,
                             const std::vector<std::string>& sets, const std::string& name) {
  return scenario::load_scenario(dir.write(name, text), sets);
}

}  // namespace trainsim::test
