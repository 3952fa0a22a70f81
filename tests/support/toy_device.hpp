#pragma once
// The kernel-time tests' device: round figures, so that every case can be checked by hand.
#include "sim/hw/device.hpp"

namespace trainsim::testing {

// 10 TFLOP/s fp32, 50 tf32, 100 16-bit; 1 TB/s; GEMMs and memory-bound kernels at 0.5 of
// their peaks; 5 us per kernel launch; the plain roofline (no ramp: it has its own test) and
// no host launch floor.
inline hw::DeviceSpec toy_device() {
  hw::DeviceSpec d;
  d.name = "toy";
  d.memory = core::Bytes{16 * core::kGiB};
  d.peak_fp32 = core::FlopRate{10e12};
  d.peak_tf32 = core::FlopRate{50e12};
  d.peak_16bit = core::FlopRate{100e12};
  d.memory_bandwidth = core::Bandwidth{1e12};
  d.matmul_efficiency = 0.5;
  d.memory_efficiency = 0.5;
  d.kernel_launch = core::Duration{5000};
  d.matmul_ramp_s = 0;
  d.host_dispatch = core::Duration{0};
  return d;
}

// The contention tests' device: the toy device's peaks (100 TFLOP/s 16-bit, 10 fp32, 1 TB/s) on
// 100 SMs, every kernel at its peak and no launch time, so a 1e12-FLOP GEMM takes 10 ms alone
// and 12.5 ms on 80 of its SMs.
inline hw::DeviceSpec hundred_sm_device() {
  hw::DeviceSpec d = toy_device();
  d.name = "hundred-sm";
  d.sm_count = 100;
  d.matmul_efficiency = 1;
  d.memory_efficiency = 1;
  d.kernel_launch = core::Duration{0};
  return d;
}

}  // namespace trainsim::testing
