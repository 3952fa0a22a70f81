// Strict readers for the cells of a measurements table (compare, calibrate). A measured time
// of zero, below zero, infinite or not a number, or a fractional GPU count, is a mistake in the
// table; it is reported at its cell instead of becoming an error of -70670% or a clamped fit.
#include <charconv>
#include <cmath>
#include <cstdint>

#include "sim/validation/compare.hpp"

namespace trainsim::validation {

namespace {

// The whole text as a finite double, else nothing ("inf", "nan", "3ms", "" and "0x10" are not).
std::optional<double> finite_number(const std::string& text) {
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '+') ++first;  // from_chars takes '-' but not '+'
  double v = 0;
  const auto [ptr, ec] = std::from_chars(first, last, v, std::chars_format::general);
  if (ec != std::errc() || ptr != last || first == last || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

core::SourceLocation Table::at(std::size_t row, int col) const {
  const int column =
      col >= 0 && static_cast<std::size_t>(col) < columns[row].size() ? columns[row][col] : 1;
  return {file, lines[row], column};
}

void Table::fail(std::size_t row, int col, const std::string& expected, bool show_got) const {
  const std::string& text = rows[row][col];
  const std::string got = text.empty() ? "an empty cell" : "'" + text + "'";
  throw core::ConfigError(at(row, col), "column '" + header[col] + "'",
                          show_got ? expected + ", got " + got : expected);
}

double Table::positive_time(std::size_t row, int col, const std::string& unit) const {
  const auto v = finite_number(rows[row][col]);
  if (!v || !(*v > 0))
    fail(row, col, "expected a positive finite time" + (unit.empty() ? "" : " " + unit));
  return *v;
}

double Table::positive_number(std::size_t row, int col, const std::string& unit) const {
  const auto v = finite_number(rows[row][col]);
  if (!v || !(*v > 0)) fail(row, col, "expected a positive finite number" + (unit.empty() ? "" : " " + unit));
  return *v;
}

std::int64_t Table::positive_integer(std::size_t row, int col, const char* expected) const {
  const std::string& text = rows[row][col];
  std::int64_t n = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec == std::errc() && ptr == text.data() + text.size() && n > 0) return n;
  // Tables written from floating-point columns say "8.0"; a whole number below 2^53 is exact.
  const auto v = finite_number(text);
  if (v && *v > 0 && *v < 9007199254740992.0 && std::floor(*v) == *v)
    return static_cast<std::int64_t>(*v);
  fail(row, col, expected);
}

}  // namespace trainsim::validation
