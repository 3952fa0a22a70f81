#pragma once
// device.tdp and device.power_limit: board power in watts (docs/scenarios.md, devices.md
// "Power limit").
#include "sim/hw/device.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// Reads `tdp` and `power_limit` of the device mapping `m` into d (each a number of watts, or a
// string "500W" / "0.5kW", from 1 W to 100 kW). A power_limit on a device with no TDP (neither
// its preset's nor a `tdp` key) is refused at the power_limit: nothing to scale the clock from.
void read_device_power(const YamlContext& ctx, MapReader& m, hw::DeviceSpec& d);

}  // namespace trainsim::scenario
