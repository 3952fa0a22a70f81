#pragma once
// The sustained clock of a GPU run under a board power limit below its TDP (docs/devices.md,
// "Power limit"). Dynamic power is C V^2 f and, over a GPU's DVFS range, the voltage rises with
// the clock, so board power grows as f^3 and the clock a limit P allows is
//   f(P) / f(TDP) = (P / TDP)^(1/3)      (capped at 1: a limit above the TDP buys nothing).
// NVIDIA's data sheets for two boards of the same 132-SM GH100 check the exponent: H100 SXM5
// 989.4 dense BF16 TFLOPS at 700 W, H100 NVL 835.5 at 400 W: ln(989.4/835.5)/ln(700/400) = 0.30.
// Tensor-core and vector FLOP rates follow the SM clock; HBM bandwidth does not (its clock is
// separate), so memory-bound kernels keep their speed.
#include "sim/hw/device.hpp"

namespace trainsim::hw {

inline constexpr double kPowerClockExponent = 1.0 / 3.0;

// The SM clock under d.power_limit_w as a fraction of the clock d's peaks are quoted at:
// 1 when no limit is set (0) or the device has no TDP; else min(1, (limit / tdp)^(1/3)).
double power_clock_fraction(const DeviceSpec& d);

}  // namespace trainsim::hw
