#pragma once
// The tiny expression language of a sweep's `where:` rules: numbers, strings in quotes, names
// (axis key paths such as parallel.tensor, or keys of the base scenario), + - * / %,
// comparisons (< <= > >= == !=), `and`, `or`, `not` and parentheses. Comparisons and logic give
// 1 or 0; a rule keeps a point when it evaluates to non-zero. Every error is a located
// core::ConfigError pointing at the offending token.
#include <functional>
#include <string>
#include <vector>

#include "sim/core/error.hpp"

namespace trainsim::sweep {

// A value in a rule: a number, or a string (device names, schedules) that only == and != take.
struct Value {
  bool is_number = true;
  double number = 0;
  std::string text;
};

// A number when `text` is one in full ("8", "1e3", "-2.5"), else a string.
Value parse_value(const std::string& text);

class Expr {
 public:
  using Known = std::function<bool(const std::string&)>;
  using Lookup = std::function<Value(const std::string&)>;

  // `where` is the location of text[0] (its column advances per character); `key_path` names
  // the rule in messages ("where[0]"). Names for which `known` is false are errors.
  static Expr parse(const std::string& text, core::SourceLocation where, std::string key_path,
                    const Known& known);

  // True when the rule keeps the point. Type errors and division by zero are ConfigErrors.
  bool test(const Lookup& lookup) const;

  const std::string& text() const { return text_; }
  // The names the rule reads, each once, in the order they first appear.
  std::vector<std::string> names() const;

 private:
  enum class Kind { number, string, name, neg, nott, binary };
  struct Node {
    Kind kind = Kind::number;
    std::string op;  // binary operator or name / string text
    double number = 0;
    int lhs = -1, rhs = -1;
    int column = 0;  // 0-based column in text_
  };
  class Parser;
  Value eval(int node, const Lookup& lookup) const;
  [[noreturn]] void fail(int column, const std::string& what) const;

  std::string text_;
  core::SourceLocation where_;
  std::string key_path_;
  std::vector<Node> nodes_;
  int root_ = -1;
};

}  // namespace trainsim::sweep
