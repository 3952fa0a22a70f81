#pragma once
// A minimal streaming JSON writer: correct escaping, stable key order (the order written),
// locale-independent numbers. Enough for reports; no parsing.
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::report {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out, bool pretty = true) : out_(out), pretty_(pretty) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(std::int64_t v);
  JsonWriter& value(int v) { return value(static_cast<std::int64_t>(v)); }
  JsonWriter& value(double v);  // 9 significant digits; NaN/inf written as null
  JsonWriter& value(bool v);
  JsonWriter& null();

  template <class T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

 private:
  void before_value();
  void newline();
  std::ostream& out_;
  bool pretty_;
  struct Level {
    bool array;
    bool empty;
  };
  std::vector<Level> stack_;
  bool after_key_ = false;
};

std::string json_escape(std::string_view s);

}  // namespace trainsim::report
