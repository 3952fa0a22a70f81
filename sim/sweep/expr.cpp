#include "sim/sweep/expr.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

namespace trainsim::sweep {

Value parse_value(const std::string& text) {
  Value v;
  v.text = text;
  double d = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, d);
  v.is_number = !text.empty() && ec == std::errc() && p == end;
  v.number = v.is_number ? d : 0;
  return v;
}

namespace {
struct Token {
  enum Kind { number, string, name, op, lparen, rparen, end } kind = end;
  std::string text;
  double amount = 0;
  int column = 0;
};
}  // namespace

// Recursive descent, lowest precedence first: or > and > not > comparison > sum > product >
// unary minus > atom.
class Expr::Parser {
 public:
  Parser(Expr& e, const Known& known) : e_(e), known_(known) { tokenize(); }

  int parse() {
    const int root = parse_or();
    if (tok().kind != Token::end) e_.fail(tok().column, "unexpected '" + tok().text + "'");
    return root;
  }

 private:
  const Token& tok() const { return toks_[pos_]; }
  bool accept(const std::string& text) {
    if ((tok().kind == Token::op || tok().kind == Token::name) && tok().text == text) {
      ++pos_;
      return true;
    }
    return false;
  }
  int add(Node n) {
    e_.nodes_.push_back(std::move(n));
    return static_cast<int>(e_.nodes_.size()) - 1;
  }
  int binary(const std::string& op, int column, int lhs, int rhs) {
    Node n;
    n.kind = Kind::binary;
    n.op = op;
    n.lhs = lhs;
    n.rhs = rhs;
    n.column = column;
    return add(n);
  }
  int parse_or() {
    int lhs = parse_and();
    for (int c = tok().column; accept("or"); c = tok().column) lhs = binary("or", c, lhs, parse_and());
    return lhs;
  }
  int parse_and() {
    int lhs = parse_not();
    for (int c = tok().column; accept("and"); c = tok().column) lhs = binary("and", c, lhs, parse_not());
    return lhs;
  }
  int parse_not() {
    const int c = tok().column;
    if (accept("not")) {
      Node n;
      n.kind = Kind::nott;
      n.lhs = parse_not();
      n.column = c;
      return add(n);
    }
    return parse_cmp();
  }
  int parse_cmp() {
    int lhs = parse_sum();
    for (const char* op : {"<=", ">=", "==", "!=", "<", ">"}) {
      const int c = tok().column;
      if (accept(op)) return binary(op, c, lhs, parse_sum());
    }
    return lhs;
  }
  int parse_sum() {
    int lhs = parse_prod();
    for (;;) {
      const int c = tok().column;
      if (accept("+")) lhs = binary("+", c, lhs, parse_prod());
      else if (accept("-")) lhs = binary("-", c, lhs, parse_prod());
      else return lhs;
    }
  }
  int parse_prod() {
    int lhs = parse_unary();
    for (;;) {
      const int c = tok().column;
      if (accept("*")) lhs = binary("*", c, lhs, parse_unary());
      else if (accept("/")) lhs = binary("/", c, lhs, parse_unary());
      else if (accept("%")) lhs = binary("%", c, lhs, parse_unary());
      else return lhs;
    }
  }
  int parse_unary() {
    const int c = tok().column;
    if (accept("-")) {
      Node n;
      n.kind = Kind::neg;
      n.lhs = parse_unary();
      n.column = c;
      return add(n);
    }
    return parse_atom();
  }
  int parse_atom() {
    const Token t = tok();
    Node n;
    n.column = t.column;
    switch (t.kind) {
      case Token::number:
        ++pos_;
        n.kind = Kind::number;
        n.number = t.amount;
        return add(n);
      case Token::string:
        ++pos_;
        n.kind = Kind::string;
        n.op = t.text;
        return add(n);
      case Token::name:
        if (t.text == "and" || t.text == "or" || t.text == "not") break;
        if (!known_(t.text)) e_.fail(t.column, "unknown name '" + t.text + "'; expected an axis or a key of the base scenario");
        ++pos_;
        n.kind = Kind::name;
        n.op = t.text;
        return add(n);
      case Token::lparen: {
        ++pos_;
        const int inner = parse_or();
        if (tok().kind != Token::rparen) e_.fail(tok().column, "expected ')'");
        ++pos_;
        return inner;
      }
      default: break;
    }
    e_.fail(t.column, t.kind == Token::end ? "expression ends too early" : "unexpected '" + t.text + "'");
  }

  void tokenize() {
    const std::string& s = e_.text_;
    std::size_t i = 0;
    while (i < s.size()) {
      const char c = s[i];
      Token t;
      t.column = static_cast<int>(i);
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
        std::size_t j = i;
        while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.' ||
                                ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E'))))
          ++j;
        t.text = s.substr(i, j - i);
        const Value v = parse_value(t.text);
        if (!v.is_number) e_.fail(t.column, "malformed number '" + t.text + "'");
        t.kind = Token::number;
        t.amount = v.number;
        i = j;
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        std::size_t j = i;
        while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' || s[j] == '.'))
          ++j;
        t.kind = Token::name;
        t.text = s.substr(i, j - i);
        i = j;
      } else if (c == '\'' || c == '"') {
        const std::size_t close = s.find(c, i + 1);
        if (close == std::string::npos) e_.fail(t.column, "unterminated string");
        t.kind = Token::string;
        t.text = s.substr(i + 1, close - i - 1);
        i = close + 1;
      } else if (c == '(' || c == ')') {
        t.kind = c == '(' ? Token::lparen : Token::rparen;
        t.text = std::string(1, c);
        ++i;
      } else {
        const std::string two = s.substr(i, 2);
        if (two == "<=" || two == ">=" || two == "==" || two == "!=") {
          t.text = two;
          i += 2;
        } else if (std::string("+-*/%<>").find(c) != std::string::npos) {
          t.text = std::string(1, c);
          ++i;
        } else {
          e_.fail(t.column, std::string("unexpected character '") + c + "'");
        }
        t.kind = Token::op;
      }
      toks_.push_back(t);
    }
    Token end;
    end.column = static_cast<int>(s.size());
    toks_.push_back(end);
  }

  Expr& e_;
  const Known& known_;
  std::vector<Token> toks_;
  std::size_t pos_ = 0;
};

Expr Expr::parse(const std::string& text, core::SourceLocation where, std::string key_path,
                 const Known& known) {
  Expr e;
  e.text_ = text;
  e.where_ = std::move(where);
  e.key_path_ = std::move(key_path);
  Parser p(e, known);
  e.root_ = p.parse();
  return e;
}

void Expr::fail(int column, const std::string& what) const {
  core::SourceLocation at = where_;
  if (at.line > 0) at.column += column;
  throw core::ConfigError(at, key_path_, what + " in '" + text_ + "'");
}

std::vector<std::string> Expr::names() const {
  std::vector<std::string> out;
  for (const Node& n : nodes_)
    if (n.kind == Kind::name && std::find(out.begin(), out.end(), n.op) == out.end()) out.push_back(n.op);
  return out;
}

bool Expr::test(const Lookup& lookup) const {
  const Value v = eval(root_, lookup);
  if (!v.is_number) fail(nodes_[root_].column, "a rule must give a number or a comparison, not the string '" + v.text + "'");
  return v.number != 0;
}

Value Expr::eval(int i, const Lookup& lookup) const {
  const Node& n = nodes_[static_cast<std::size_t>(i)];
  auto num = [](double d) {
    Value v;
    v.number = d;
    return v;
  };
  auto number_of = [&](const Value& v, int column) {
    if (!v.is_number) fail(column, "'" + v.text + "' is not a number");
    return v.number;
  };
  switch (n.kind) {
    case Kind::number: return num(n.number);
    case Kind::string: {
      Value v;
      v.is_number = false;
      v.text = n.op;
      return v;
    }
    case Kind::name: return lookup(n.op);
    case Kind::neg: return num(-number_of(eval(n.lhs, lookup), nodes_[n.lhs].column));
    case Kind::nott: return num(number_of(eval(n.lhs, lookup), nodes_[n.lhs].column) == 0 ? 1 : 0);
    case Kind::binary: break;
  }
  const Value a = eval(n.lhs, lookup);
  if (n.op == "and" || n.op == "or") {  // short-circuit
    const bool l = number_of(a, nodes_[n.lhs].column) != 0;
    if (n.op == "and" && !l) return num(0);
    if (n.op == "or" && l) return num(1);
    return num(number_of(eval(n.rhs, lookup), nodes_[n.rhs].column) != 0 ? 1 : 0);
  }
  const Value b = eval(n.rhs, lookup);
  if ((n.op == "==" || n.op == "!=") && !(a.is_number && b.is_number)) {
    const bool eq = a.is_number == b.is_number && a.text == b.text;
    return num((n.op == "==") == eq ? 1 : 0);
  }
  const double x = number_of(a, nodes_[n.lhs].column), y = number_of(b, nodes_[n.rhs].column);
  if (n.op == "+") return num(x + y);
  if (n.op == "-") return num(x - y);
  if (n.op == "*") return num(x * y);
  if (n.op == "/" || n.op == "%") {
    if (y == 0) fail(n.column, "division by zero");
    return num(n.op == "/" ? x / y : std::fmod(x, y));
  }
  if (n.op == "<") return num(x < y);
  if (n.op == "<=") return num(x <= y);
  if (n.op == ">") return num(x > y);
  if (n.op == ">=") return num(x >= y);
  if (n.op == "==") return num(x == y);
  return num(x != y);  // "!="
}

}  // namespace trainsim::sweep
