#include "sim/scenario/power_read.hpp"

#include <stdexcept>
#include <string>

#include "sim/core/units.hpp"

namespace trainsim::scenario {

namespace {

constexpr double kMinWatts = 1;
constexpr double kMaxWatts = 1e5;

double watts(const YamlContext& ctx, MapReader& m, const std::string& key) {
  const YAML::Node n = m.node(key);
  const std::string path = m.path_of(key);
  const std::string s = read_string(ctx, n, path);
  const std::string expected =
      "expected a power from 1 W to 100 kW (a number of watts, or e.g. '500W', '0.5kW')";
  double v = 0;
  try {
    v = core::parse_power(s).watts;
  } catch (const std::invalid_argument&) {
    ctx.fail(n, path, expected + ", got '" + s + "'");
  }
  if (!(v >= kMinWatts && v <= kMaxWatts)) ctx.fail(n, path, expected + ", got '" + s + "'");
  return v;
}

}  // namespace

void read_device_power(const YamlContext& ctx, MapReader& m, hw::DeviceSpec& d) {
  if (m.has("tdp")) d.tdp_w = watts(ctx, m, "tdp");
  if (!m.has("power_limit")) return;
  d.power_limit_w = watts(ctx, m, "power_limit");
  if (!(d.tdp_w > 0))
    ctx.fail(m.node("power_limit"), m.path_of("power_limit"),
             "a power limit needs the board power the peaks are quoted at: device '" + d.name +
                 "' has no TDP; add device.tdp (W)");
}

}  // namespace trainsim::scenario
