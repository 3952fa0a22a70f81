#include "sim/cost/contention.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim::cost {

hw::DeviceSpec beside_collective(const hw::DeviceSpec& d, int sms) {
  if (d.sm_count <= 0 || sms <= 0) return d;
  hw::DeviceSpec s = d;
  s.sm_count = std::max(1, d.sm_count - sms);
  const double share = static_cast<double>(s.sm_count) / d.sm_count;
  s.peak_fp32.per_s *= share;
  s.peak_tf32.per_s *= share;
  s.peak_16bit.per_s *= share;
  s.peak_fp8.per_s *= share;
  return s;
}

core::Duration contended(core::Duration alone, core::Duration beside, core::Duration window) {
  if (window.ns <= 0 || beside.ns <= alone.ns) return alone;
  if (window.ns >= beside.ns) return beside;
  const double slow = 1.0 - static_cast<double>(alone.ns) / static_cast<double>(beside.ns);
  return alone + core::Duration{std::llround(static_cast<double>(window.ns) * slow)};
}

}  // namespace trainsim::cost
