#pragma once
// The check every bad-scenario case makes: loading `text` throws a ConfigError at the given
// file:line:column, for the given key path, with a phrase of what was expected, and the
// one-line message a user sees starts with file:line:column.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "scenario_files.hpp"

namespace trainsim::test {

// Where and what a load must fail with. An empty `file` means the scenario file itself.
struct Expected {
  int line;
  int column;
  std::string key_path;
  std::string says;  // a phrase of the message
  std::string file = "";
};

inline void expect_error(const std::string& text, const Expected& x,
                         const std::vector<std::string>& sets = {}) {
  TempDir dir;
  const auto f = load_error(dir, text, sets);
  INFO("scenario:\n" << text);
  REQUIRE(f.error.has_value());
  const core::ConfigError& e = *f.error;
  INFO("error: " << e.what());
  CHECK(e.where().file == (x.file.empty() ? f.path : x.file));
  CHECK(e.where().line == x.line);
  CHECK(e.where().column == x.column);
  CHECK(e.key_path() == x.key_path);
  CHECK_THAT(e.detail(), Catch::Contains(x.says));
  if (x.line > 0)
    CHECK_THAT(std::string(e.what()),
               Catch::StartsWith(e.where().file + ":" + std::to_string(x.line) + ":" +
                                 std::to_string(x.column) + ": "));
}

}  // namespace trainsim::test
