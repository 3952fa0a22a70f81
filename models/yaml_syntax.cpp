#include "models/yaml_syntax.hpp"

#include <yaml-cpp/depthguard.h>

namespace trainsim::models {

namespace {

// 1-based line and column of the first '[' or '{' at which bracket nesting reaches `depth`, or
// its deepest point when it stays shallower (quotes and comments skipped); {0, 0} without any.
core::SourceLocation deep_bracket(std::string_view text, int depth, const std::string& file) {
  core::SourceLocation deepest{file, 0, 0};
  int level = 0, deepest_level = 0, line = 1, column = 0;
  char quote = 0;
  bool comment = false;
  for (char c : text) {
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
      comment = false;
      continue;
    }
    if (comment) continue;
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'')
      quote = c;
    else if (c == '#')
      comment = true;
    else if (c == ']' || c == '}')
      --level;
    else if ((c == '[' || c == '{') && ++level > deepest_level) {
      deepest = {file, line, column};
      deepest_level = level;
      if (level >= depth) break;
    }
  }
  return deepest;
}

}  // namespace

core::ConfigError yaml_syntax_error(const YAML::Exception& e, const std::string& file,
                                    std::string_view text, const std::string& key_path,
                                    const std::string& prefix) {
  core::SourceLocation at{file, e.mark.line + 1, e.mark.column + 1};
  if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e)) {
    // The mark is where scanning stopped (often the end of the text); the enclosing mapping
    // is one level, so the bracket that went past the limit is at depth - 1.
    const core::SourceLocation b = deep_bracket(text, deep->depth() - 1, file);
    if (b.line > 0) at = b;
    return core::ConfigError(at, key_path,
                             prefix + "nesting too deep (the parser stops at " +
                                 std::to_string(deep->depth()) + " levels of lists and mappings)");
  }
  return core::ConfigError(at, key_path, prefix + e.msg);
}

}  // namespace trainsim::models
