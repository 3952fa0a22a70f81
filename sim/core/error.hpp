#pragma once
// Errors that cross module boundaries. The library never exits; tools/ maps these to codes:
// ConfigError -> 2 (bad input), InternalError -> 1 (a violated invariant), ResourceError -> 5.
#include <stdexcept>
#include <string>

namespace trainsim::core {

// Where a value came from in a user's file. line/column are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

// One clear message about user input: "file:line:col: key.path: expected ..., got ...".
class ConfigError : public std::runtime_error {
 public:
  ConfigError(SourceLocation where, std::string key_path, std::string what_expected);
  const SourceLocation& where() const { return where_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& detail() const { return detail_; }

 private:
  SourceLocation where_;
  std::string key_path_;
  std::string detail_;
};

// A broken invariant inside trainsim: a bug, never the user's fault.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// The machine running trainsim ran out of something it needs (worker threads, host memory):
// neither the input's fault nor a bug. The message says what, and what to try.
class ResourceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Checked in release builds too: a violated invariant must never become a wrong report.
#define TRAINSIM_CHECK(cond, msg)                                                       \
  do {                                                                                  \
    if (!(cond))                                                                        \
      throw ::trainsim::core::InternalError(std::string("internal error: ") + (msg) +   \
                                            " [" #cond "] at " __FILE__ ":" +          \
                                            std::to_string(__LINE__));                  \
  } while (0)

}  // namespace trainsim::core
