#include "sim/hw/power.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim::hw {

double power_clock_fraction(const DeviceSpec& d) {
  if (!(d.power_limit_w > 0) || !(d.tdp_w > 0)) return 1.0;
  return std::min(1.0, std::pow(d.power_limit_w / d.tdp_w, kPowerClockExponent));
}

}  // namespace trainsim::hw
