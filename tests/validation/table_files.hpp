#pragma once
// Helpers of the measured-table tests (table_test.cpp, measured_unit_test.cpp): a table written
// to the temp folder, and the message of the ConfigError a call throws.
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/error.hpp"

namespace trainsim::test {

// Writes `text` to "trainsim-<name>" in the temp folder; returns its path. Each test file
// prefixes its names with its own (the test cases run as processes side by side).
inline std::string write_table(const std::string& name, const std::string& text) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() / ("trainsim-" + name);
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

// The message of the ConfigError `f` throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace trainsim::test
