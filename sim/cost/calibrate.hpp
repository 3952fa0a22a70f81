#pragma once
// Least-squares calibration of a device's cost-model parameters from measured kernel timings.
#include <string>
#include <vector>

#include "sim/hw/device.hpp"

namespace trainsim::cost {

// One timed kernel: matmul kernels are compute-bound GEMMs (FLOPs), others are memory-bound
// (bytes moved).
struct Measurement {
  bool matmul = true;
  double flops = 0;
  double bytes = 0;
  double seconds = 0;
};

struct Calibration {
  hw::DeviceSpec device;  // the input device with the fitted parameters
  double rms_relative_error = 0;  // of the fitted model over the measurements
  std::size_t matmul_rows = 0, memory_rows = 0;
  std::vector<std::string> notes;  // parameters that were clamped, and why
};

// Fits, by linear least squares (Eigen), the model the simulator uses:
//   matmul kernel: t = F / (P e) + ramp / e + launch     (efficiency e x F / (F + P ramp))
//   memory kernel: t = B / (BW m) + launch
// over the unknowns 1/e, ramp/e, 1/m and launch, with P and BW the device's peak and bandwidth.
// Needs at least two matmul rows of different sizes and two memory rows of different sizes;
// throws std::invalid_argument otherwise.
Calibration calibrate(const hw::DeviceSpec& device, const std::vector<Measurement>& rows,
                      bool half_precision = true);

}  // namespace trainsim::cost
