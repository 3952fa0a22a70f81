#include "sim/core/units.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

namespace trainsim::core {

void throw_add_overflow() { throw OverflowError("64-bit overflow adding counts"); }

void throw_mul_overflow() { throw OverflowError("64-bit overflow multiplying counts"); }

Duration duration_from_seconds(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds))
    throw std::invalid_argument("duration must be a finite non-negative number of seconds");
  // Round up, except that a product within floating-point noise of a whole nanosecond is that
  // nanosecond (800e-9 s * 1e9 is 800.0000000000001, which must stay 800 ns).
  const double raw = seconds * 1e9;
  const double nearest = std::round(raw);
  const double ns = std::fabs(raw - nearest) <= 1e-9 * std::max(1.0, raw) ? nearest : std::ceil(raw);
  if (ns >= 9.2e18) throw OverflowError("duration exceeds 292 years of simulated time");
  if (seconds > 0 && ns < 1) return Duration{1};
  return Duration{static_cast<std::int64_t>(ns)};
}

namespace {

struct Split {
  double number;
  std::string unit;
};

// "80 GiB" -> {80, "GiB"}; rejects empty numbers, NaN, inf and negative values. `noun` names
// the quantity in "negative size '-1GB'".
Split split_number(std::string_view text, const char* expected, const char* noun) {
  std::string s(text);
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  std::size_t start = i;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                          s[i] == 'e' || s[i] == 'E' || s[i] == '+' || s[i] == '-')) {
    // 'e' only counts as exponent when followed by a digit or sign (so "5e" is not eaten in "5EB").
    if ((s[i] == 'e' || s[i] == 'E') &&
        !(i + 1 < s.size() && (std::isdigit(static_cast<unsigned char>(s[i + 1])) ||
                               s[i + 1] == '+' || s[i + 1] == '-')))
      break;
    ++i;
  }
  std::string num = s.substr(start, i - start);
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  std::string unit = s.substr(i);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back()))) unit.pop_back();
  if (num.empty())
    throw std::invalid_argument(std::string("expected ") + expected + ", got '" + s + "'");
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(num, &used);
  } catch (...) {
    used = 0;
  }
  if (used != num.size() || !std::isfinite(v))
    throw std::invalid_argument(std::string("expected ") + expected + ", got '" + s + "'");
  if (v < 0)
    throw std::invalid_argument(std::string("negative ") + noun + " '" + s + "': expected " +
                                expected);
  if (unit.empty())
    throw std::invalid_argument(std::string("missing unit: expected ") + expected + ", got '" +
                                s + "'");
  return {v, unit};
}

// Decimal/binary prefix multiplier for the unit's leading letters; returns {factor, rest}.
std::pair<double, std::string> prefix(const std::string& unit) {
  static const std::array<std::pair<const char*, double>, 10> kBinary = {{{"Ki", 1024.0},
                                                                           {"Mi", 1048576.0},
                                                                           {"Gi", 1073741824.0},
                                                                           {"Ti", 1099511627776.0},
                                                                           {"Pi", 1125899906842624.0},
                                                                           {"", 0},
                                                                           {"", 0},
                                                                           {"", 0},
                                                                           {"", 0},
                                                                           {"", 0}}};
  for (const auto& [p, f] : kBinary) {
    if (f == 0) break;
    if (unit.rfind(p, 0) == 0) return {f, unit.substr(2)};
  }
  if (unit.empty()) return {1.0, unit};
  switch (unit[0]) {
    case 'k':
    case 'K': return {1e3, unit.substr(1)};
    case 'M': return {1e6, unit.substr(1)};
    case 'G': return {1e9, unit.substr(1)};
    case 'T': return {1e12, unit.substr(1)};
    case 'P': return {1e15, unit.substr(1)};
    case 'E': return {1e18, unit.substr(1)};
    default: return {1.0, unit};
  }
}

std::int64_t to_int64(double v, const std::string& text) {
  if (v >= 9.2e18) throw std::invalid_argument("value '" + text + "' exceeds 8 EiB");
  return static_cast<std::int64_t>(std::llround(v));
}

}  // namespace

Bytes parse_bytes(std::string_view text) {
  constexpr const char* kExpected = "a size with a unit (e.g. 80GiB, 40GB, 512MiB, 4096B)";
  auto [v, unit] = split_number(text, kExpected, "size");
  auto [factor, rest] = prefix(unit);
  if (rest != "B")
    throw std::invalid_argument(std::string("unknown size unit '") + unit + "': expected " +
                                kExpected);
  return Bytes{to_int64(v * factor, std::string(text))};
}

Bandwidth parse_bandwidth(std::string_view text) {
  constexpr const char* kExpected = "a bandwidth with a unit (e.g. 900GB/s, 25GiB/s, 200Gb/s)";
  auto [v, unit] = split_number(text, kExpected, "bandwidth");
  auto [factor, rest] = prefix(unit);
  double bytes_per_s;
  if (rest == "B/s" || rest == "Bps")
    bytes_per_s = v * factor;
  else if (rest == "b/s" || rest == "bps" || rest == "bit/s")
    bytes_per_s = v * factor / 8.0;
  else
    throw std::invalid_argument("unknown bandwidth unit '" + unit + "': expected " + kExpected);
  if (!(bytes_per_s > 0) || !std::isfinite(bytes_per_s))
    throw std::invalid_argument("bandwidth must be positive and finite, got '" + std::string(text) + "'");
  return Bandwidth{bytes_per_s};
}

FlopRate parse_flop_rate(std::string_view text) {
  constexpr const char* kExpected = "a FLOP rate with a unit (e.g. 312TFLOPS, 989TFLOP/s)";
  auto [v, unit] = split_number(text, kExpected, "FLOP rate");
  auto [factor, rest] = prefix(unit);
  if (rest != "FLOPS" && rest != "FLOP/s" && rest != "flops" && rest != "FLOPs")
    throw std::invalid_argument("unknown FLOP-rate unit '" + unit + "': expected " + kExpected);
  if (!(v * factor > 0) || !std::isfinite(v * factor))
    throw std::invalid_argument("FLOP rate must be positive and finite, got '" + std::string(text) + "'");
  return FlopRate{v * factor};
}

Duration parse_duration(std::string_view text) {
  constexpr const char* kExpected = "a duration with a unit (e.g. 5us, 1.5ms, 2s, 800ns)";
  auto [v, unit] = split_number(text, kExpected, "duration");
  double seconds;
  if (unit == "ns")
    seconds = v * 1e-9;
  else if (unit == "us" || unit == "µs")
    seconds = v * 1e-6;
  else if (unit == "ms")
    seconds = v * 1e-3;
  else if (unit == "s")
    seconds = v;
  else
    throw std::invalid_argument("unknown duration unit '" + unit + "': expected " + kExpected);
  return duration_from_seconds(seconds);
}

Power parse_power(std::string_view text) {
  constexpr const char* kExpected = "a power (a number of watts, or e.g. 500W, 0.5kW)";
  std::string s(text);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  if (!s.empty() && (std::isdigit(static_cast<unsigned char>(s.back())) || s.back() == '.'))
    s += "W";
  auto [v, unit] = split_number(s, kExpected, "power");
  double factor = 0;
  if (unit == "W") factor = 1;
  if (unit == "kW") factor = 1e3;
  if (unit == "MW") factor = 1e6;
  if (factor == 0)
    throw std::invalid_argument("unknown power unit '" + unit + "': expected " + kExpected);
  if (!std::isfinite(v * factor))
    throw std::invalid_argument("power must be finite, got '" + std::string(text) + "'");
  return Power{v * factor};
}

std::string format_number(const char* printf_format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, printf_format, v);
  return buf;
}

std::string format_bytes(Bytes b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f GiB (%.2f GB)", to_gib(b), to_gb(b));
  return buf;
}

std::string format_duration(Duration d) {
  char buf[64];
  const double s = to_seconds(d);
  if (s >= 1)
    std::snprintf(buf, sizeof buf, "%.3f s", s);
  else if (s >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
  return buf;
}

}  // namespace trainsim::core
