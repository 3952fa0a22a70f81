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
  std::vector<std::string> notes;  // remarks on the fit (none at present: nothing is clamped)
};

// Why a timing cannot have been measured on `device`, or "" when it can: a time that is not
// positive and finite, a work size that is not, or a kernel faster than the device's peak
// (matmul, FP16/BF16 when half_precision, else FP32) or memory bandwidth (memory-bound).
std::string impossible(const hw::DeviceSpec& device, const Measurement& m,
                       bool half_precision = true);

// Fits, by linear least squares (Eigen), the model the simulator uses:
//   matmul kernel: t = F / (P e) + ramp / e + launch     (efficiency e x F / (F + P ramp))
//   memory kernel: t = B / (BW m) + launch
// over the unknowns 1/e, ramp/e, 1/m and launch, with P and BW the device's peak and bandwidth.
// Needs at least two matmul rows of different sizes and two memory rows of different sizes.
// Throws std::invalid_argument (and fits nothing) when a row is impossible() or when the
// fitted parameters fall outside their physical range (efficiencies in [0.001, 1], launch and
// ramp in [0, 1 ms]): a device file is never written from impossible timings, nor clamped.
Calibration calibrate(const hw::DeviceSpec& device, const std::vector<Measurement>& rows,
                      bool half_precision = true);

}  // namespace trainsim::cost
