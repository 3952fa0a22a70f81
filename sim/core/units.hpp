#pragma once
// Strong types for the quantities a training step is made of. Integers where a count is exact
// (bytes, nanoseconds), doubles where rates and FLOP totals exceed 2^63 (a 175B-model step is
// ~1e21 FLOPs). Arithmetic on integer types is overflow-checked: an impossible scenario gets a
// clear error, never a wrapped number.
#include <compare>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace trainsim::core {

// Thrown when a byte or time count would not fit in 64 bits.
class OverflowError : public std::overflow_error {
 public:
  using std::overflow_error::overflow_error;
};

[[noreturn]] void throw_add_overflow();
[[noreturn]] void throw_mul_overflow();
// Inline: every time and byte sum goes through these, so the check must cost a flag test.
inline std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) [[unlikely]] throw_add_overflow();
  return r;
}
inline std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) [[unlikely]] throw_mul_overflow();
  return r;
}

// A number of bytes. May be negative only as a ledger delta (a free).
struct Bytes {
  std::int64_t value = 0;
  constexpr auto operator<=>(const Bytes&) const = default;
  Bytes& operator+=(Bytes o) { value = checked_add(value, o.value); return *this; }
  Bytes& operator-=(Bytes o) { value = checked_add(value, -o.value); return *this; }
};
inline Bytes operator+(Bytes a, Bytes b) { return a += b; }
inline Bytes operator-(Bytes a, Bytes b) { return a -= b; }
inline Bytes operator-(Bytes a) { return Bytes{-a.value}; }
inline Bytes operator*(Bytes a, std::int64_t k) { return Bytes{checked_mul(a.value, k)}; }
inline Bytes operator*(std::int64_t k, Bytes a) { return a * k; }
// Exact division; used for sharding (callers validate divisibility or accept floor).
inline Bytes operator/(Bytes a, std::int64_t k) { return Bytes{a.value / k}; }
// Ceil division: a shard of `a` over k ranks (the largest one).
inline Bytes ceil_div(Bytes a, std::int64_t k) { return Bytes{(a.value + k - 1) / k}; }

constexpr std::int64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
constexpr std::int64_t kKB = 1000, kMB = kKB * 1000, kGB = kMB * 1000;
inline double to_gib(Bytes b) { return static_cast<double>(b.value) / kGiB; }
inline double to_gb(Bytes b) { return static_cast<double>(b.value) / kGB; }

// A span of simulated time in integer nanoseconds.
struct Duration {
  std::int64_t ns = 0;
  constexpr auto operator<=>(const Duration&) const = default;
  Duration& operator+=(Duration o) { ns = checked_add(ns, o.ns); return *this; }
};
inline Duration operator+(Duration a, Duration b) { return a += b; }
inline Duration operator-(Duration a, Duration b) { return Duration{checked_add(a.ns, -b.ns)}; }
inline Duration operator*(Duration a, std::int64_t k) { return Duration{checked_mul(a.ns, k)}; }
inline double to_seconds(Duration d) { return static_cast<double>(d.ns) * 1e-9; }

// An instant on the simulated clock, nanoseconds since the step began.
struct TimePoint {
  std::int64_t ns = 0;
  constexpr auto operator<=>(const TimePoint&) const = default;
};
inline TimePoint operator+(TimePoint t, Duration d) { return TimePoint{checked_add(t.ns, d.ns)}; }
inline Duration operator-(TimePoint a, TimePoint b) { return Duration{checked_add(a.ns, -b.ns)}; }
inline TimePoint operator-(TimePoint t, Duration d) { return TimePoint{checked_add(t.ns, -d.ns)}; }
inline double to_seconds(TimePoint t) { return static_cast<double>(t.ns) * 1e-9; }

// Bytes per second.
struct Bandwidth {
  double bytes_per_s = 0;
  constexpr auto operator<=>(const Bandwidth&) const = default;
};
// Electrical power in watts (board power: TDP, power limit).
struct Power {
  double watts = 0;
  constexpr auto operator<=>(const Power&) const = default;
};
// Floating-point operations per second.
struct FlopRate {
  double per_s = 0;
  constexpr auto operator<=>(const FlopRate&) const = default;
};

// The one rounding place: seconds -> Duration, rounded up, and never zero for nonzero work
// (so a tiny op still takes 1 ns and ordering stays causal).
Duration duration_from_seconds(double seconds);
inline Duration operator/(Bytes b, Bandwidth bw) {
  return duration_from_seconds(static_cast<double>(b.value) / bw.bytes_per_s);
}
inline Duration flops_time(double flops, FlopRate r) { return duration_from_seconds(flops / r.per_s); }

// Parsers for quantities written by people. Units are mandatory; a bare number is rejected.
// Each throws std::invalid_argument whose message says what was expected.
//   bytes:      "80GiB", "40GB", "512MiB", "1.5TiB", "4096B"   (decimal and binary prefixes)
//   bandwidth:  "900GB/s", "25GiB/s", "200Gb/s" (bits), "1.6Tbps"
//   flop rate:  "312TFLOPS", "989.4TFLOP/s", "1.2PFLOPS"
//   duration:   "5us", "1.5ms", "2s", "800ns"
//   power:      "500W", "0.5kW", "700" (the one bare number accepted: watts, as device.tdp and
//               device.power_limit were first documented)
Bytes parse_bytes(std::string_view text);
Bandwidth parse_bandwidth(std::string_view text);
FlopRate parse_flop_rate(std::string_view text);
Duration parse_duration(std::string_view text);
Power parse_power(std::string_view text);

// "12.00 GiB (12.88 GB)" — both, since people read both.
std::string format_bytes(Bytes b);
std::string format_duration(Duration d);
// One number through a printf format ("%.1f", "%.4g"): the reports' and plots' formatter.
std::string format_number(const char* printf_format, double v);

}  // namespace trainsim::core
