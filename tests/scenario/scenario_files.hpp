#pragma once
// Test helpers: scenario files written into a fresh temporary folder, and the ConfigError a
// load is expected to throw.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::test {

// A unique folder under the system temp directory, removed with everything in it on
// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return dir_; }
  // Writes `text` to `name` inside the folder; returns the file's full path.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path dir_;
};

// Loads `text` written as `name` in a fresh TempDir; the ConfigError it throws, or nullopt.
struct LoadFailure {
  std::string path;  // the scenario file's full path, for comparing with where().file
  std::optional<core::ConfigError> error;
};
LoadFailure load_error(const TempDir& dir, const std::string& text,
                       const std::vector<std::string>& sets = {},
                       const std::string& name = "scenario.yaml");

// Loads `text` written as `name` in `dir` (must succeed).
scenario::Scenario load_text(const TempDir& dir, const std::string& text,
                             const std::vector<std::string>& sets = {},
                             const std::string& name = "scenario.yaml");

}  // namespace trainsim::test
