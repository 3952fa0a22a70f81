#include "sim/cost/cost.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/core/error.hpp"
#include "sim/hw/power.hpp"

// Seconds are computed in double and rounded once per formula by core::duration_from_seconds
// (up, never to zero for real work); latencies and launch overheads are already integer
// nanoseconds and are added after rounding so they stay exact. Each transfer term is one
// division of exact integers-as-doubles, so hand-computed cases reproduce to the nanosecond.

namespace trainsim::cost {
namespace {

using core::Bytes;
using core::Duration;

[[noreturn]] void invalid(const std::string& what) {
  throw std::invalid_argument(what);
}

void check_fraction(double f, const char* field, const hw::DeviceSpec& d) {
  if (!(f > 0.0 && f <= 1.0))
    invalid("device '" + d.name + "': " + field + " must be in (0, 1], got " + std::to_string(f));
}

// The compute rate a kernel runs at. Tensor-core modes a device lacks (V100 has no TF32, a
// user device may have no 16-bit peak) fall back to the FP32 vector peak, as cuBLAS does;
// non-matmul work always runs on the vector units. If even that is missing, the slowest
// nonzero peak is used (conservative); a device with no peak at all cannot run anything.
double compute_rate(const hw::DeviceSpec& d, MathMode mode, bool matmul) {
  double rate = d.peak_fp32.per_s;
  if (matmul) {
    if (mode == MathMode::tf32 && d.peak_tf32.per_s > 0) rate = d.peak_tf32.per_s;
    if ((mode == MathMode::half || mode == MathMode::fp8) && d.peak_16bit.per_s > 0) rate = d.peak_16bit.per_s;
    if (mode == MathMode::fp8 && d.peak_fp8.per_s > 0) rate = d.peak_fp8.per_s;
  }
  if (rate > 0) return rate;
  double slowest = 0;
  for (double p : {d.peak_fp32.per_s, d.peak_tf32.per_s, d.peak_16bit.per_s})
    if (p > 0 && (slowest == 0 || p < slowest)) slowest = p;
  if (slowest == 0) invalid("device '" + d.name + "' has no positive compute peak");
  return slowest;
}

// The flash-attention kernels' part of an op's compute time (cost.hpp): BF16/FP16 unless the
// recipe quantizes attention (fp8_attention under MathMode::fp8), as Transformer Engine's
// dot-product attention runs unless fp8_dpa is set.
double flash_seconds(const KernelWork& w, const hw::DeviceSpec& d, MathMode mode) {
  if (!(w.flash_forward > 0) && !(w.flash_backward > 0)) return 0;
  const MathMode m = mode == MathMode::fp8 && !w.fp8_attention ? MathMode::half : mode;
  const double rate = compute_rate(d, m, true) * hw::power_clock_fraction(d);
  return w.flash_forward / (rate * flash_forward_efficiency(d)) +
         w.flash_backward / (rate * flash_backward_efficiency(d));
}

void check_link(const hw::LinkSpec& link) {
  if (!(link.bandwidth.bytes_per_s > 0) || !std::isfinite(link.bandwidth.bytes_per_s))
    invalid("link '" + link.name + "': bandwidth must be positive");
  if (link.latency.ns < 0) invalid("link '" + link.name + "': latency must not be negative");
}

// Validates a collective's arguments; returns false when it costs nothing (one rank or an
// empty buffer: NCCL returns at once for count 0).
bool needs_work(Bytes bytes, std::int64_t n, const hw::LinkSpec& link) {
  if (n < 1) invalid("collective needs at least 1 rank, got " + std::to_string(n));
  if (bytes.value < 0) invalid("collective buffer size must not be negative");
  check_link(link);
  return n > 1 && bytes.value > 0;
}

// `numerator` bytes-equivalents over (denominator x bandwidth), rounded once.
Duration transfer(double numerator, double denominator, const hw::LinkSpec& link) {
  return core::duration_from_seconds(numerator / (denominator * link.bandwidth.bytes_per_s));
}

// ceil(log2 n) for n >= 2.
std::int64_t ceil_log2(std::int64_t n) {
  return std::bit_width(static_cast<std::uint64_t>(n - 1));
}

}  // namespace

double flash_forward_efficiency(const hw::DeviceSpec& d) {
  if (d.flash_efficiency > 0) return d.flash_efficiency;
  return std::min(1.0, d.matmul_efficiency * hw::kA100FlashForward / hw::kA100MatmulEfficiency);
}

double flash_backward_efficiency(const hw::DeviceSpec& d) {
  if (d.flash_backward_efficiency > 0) return d.flash_backward_efficiency;
  return std::min(1.0, d.matmul_efficiency * hw::kA100FlashBackward / hw::kA100MatmulEfficiency);
}

bool same_kernel_speed(const hw::DeviceSpec& a, const hw::DeviceSpec& b) {
  return a.peak_fp32 == b.peak_fp32 && a.peak_tf32 == b.peak_tf32 && a.peak_16bit == b.peak_16bit &&
         a.peak_fp8 == b.peak_fp8 &&
         a.memory_bandwidth == b.memory_bandwidth && a.matmul_efficiency == b.matmul_efficiency &&
         a.memory_efficiency == b.memory_efficiency && a.kernel_launch == b.kernel_launch &&
         a.matmul_ramp_s == b.matmul_ramp_s && a.host_dispatch == b.host_dispatch &&
         a.sm_count == b.sm_count && a.tdp_w == b.tdp_w && a.power_limit_w == b.power_limit_w &&
         a.fp8_matmul_efficiency == b.fp8_matmul_efficiency &&
         a.flash_efficiency == b.flash_efficiency &&
         a.flash_backward_efficiency == b.flash_backward_efficiency;
}

bool same_link_speed(const hw::LinkSpec& a, const hw::LinkSpec& b) {
  return a.bandwidth == b.bandwidth && a.latency == b.latency && a.fabric == b.fabric &&
         a.sm == b.sm && a.nvls == b.nvls;
}

Duration kernel_time(const KernelWork& w, const hw::DeviceSpec& d, MathMode mode, int kernels) {
  return std::max(device_time(w, d, mode, kernels), host_time(w, d, kernels));
}

Duration host_time(const KernelWork& w, const hw::DeviceSpec& d, int kernels, int extra_launches) {
  if (d.host_dispatch.ns < 0)
    invalid("device '" + d.name + "': host_dispatch must not be negative");
  if (w.launches < 0) invalid("launch count must not be negative, got " + std::to_string(w.launches));
  return d.host_dispatch * ((w.launches > 0 ? w.launches : kernels) + extra_launches);
}

Duration device_time(const KernelWork& w, const hw::DeviceSpec& d, MathMode mode, int kernels) {
  if (kernels < 0) invalid("kernel count must not be negative, got " + std::to_string(kernels));
  if (!(w.flops >= 0) || !std::isfinite(w.flops))
    invalid("kernel FLOPs must be a finite non-negative number");
  if (w.bytes.value < 0) invalid("kernel bytes must not be negative");
  if (!(w.shape_efficiency > 0.0 && w.shape_efficiency <= 1.0))
    invalid("GEMM shape efficiency must be in (0, 1], got " + std::to_string(w.shape_efficiency));
  check_fraction(d.matmul_efficiency, "matmul_efficiency", d);
  check_fraction(d.memory_efficiency, "memory_efficiency", d);
  if (d.fp8_matmul_efficiency != 0)
    check_fraction(d.fp8_matmul_efficiency, "fp8_matmul_efficiency", d);
  if (d.flash_efficiency != 0) check_fraction(d.flash_efficiency, "flash_efficiency", d);
  if (d.flash_backward_efficiency != 0)
    check_fraction(d.flash_backward_efficiency, "flash_backward_efficiency", d);
  for (double f : {w.flash_model_flops, w.flash_forward, w.flash_backward})
    if (!(f >= 0) || !std::isfinite(f))
      invalid("flash-attention FLOPs must be finite non-negative numbers");
  if (d.kernel_launch.ns < 0)
    invalid("device '" + d.name + "': kernel_launch must not be negative");
  if (d.tdp_w < 0 || d.power_limit_w < 0)
    invalid("device '" + d.name + "': tdp and power_limit must not be negative");
  // Validate the device even for zero work, so a bad spec fails on its first use. A power
  // limit below the TDP lowers the SM clock and with it every FLOP rate (hw/power.hpp).
  const double rate = compute_rate(d, mode, w.matmul) * hw::power_clock_fraction(d);

  // The GEMMs and other work the op runs beside its flash-attention kernels.
  const double flops = std::max(0.0, w.flops - w.flash_model_flops);
  double compute_s = flash_seconds(w, d, mode);
  if (flops > 0) {
    const bool fp8_gemm = w.matmul && mode == MathMode::fp8 && d.peak_fp8.per_s > 0;
    double eff = fp8_gemm && d.fp8_matmul_efficiency > 0 ? d.fp8_matmul_efficiency
                                                         : d.matmul_efficiency;
    if (w.matmul) eff *= w.shape_efficiency;
    if (w.matmul && d.matmul_ramp_s > 0) {
      const double per_kernel = flops / std::max(1, kernels);
      eff *= per_kernel / (per_kernel + rate * d.matmul_ramp_s);
    }
    compute_s += flops / (rate * eff);
  }
  double memory_s = 0;
  if (w.bytes.value > 0) {
    if (!(d.memory_bandwidth.bytes_per_s > 0))
      invalid("device '" + d.name + "' has no positive memory bandwidth");
    memory_s =
        static_cast<double>(w.bytes.value) / (d.memory_bandwidth.bytes_per_s * d.memory_efficiency);
  }
  const double busy = w.serial_memory ? compute_s + memory_s : std::max(compute_s, memory_s);
  return core::duration_from_seconds(busy) + d.kernel_launch * kernels;
}

hw::LinkSpec spanning_link(const hw::LinkSpec& intra, const hw::LinkSpec& inter,
                           std::int64_t ranks_per_node) {
  hw::LinkSpec l = inter;
  const double k = static_cast<double>(std::max<std::int64_t>(1, ranks_per_node));
  l.bandwidth.bytes_per_s = std::min(intra.bandwidth.bytes_per_s, inter.bandwidth.bytes_per_s * k);
  return l;
}

Duration all_reduce_time(Bytes bytes, std::int64_t n, const hw::LinkSpec& link,
                         CollectiveAlgo algo) {
  if (!needs_work(bytes, n, link)) return Duration{};
  const double s = static_cast<double>(bytes.value);
  switch (algo) {
    case CollectiveAlgo::ring:
      // Reduce-scatter then all-gather: 2(n-1) steps, each moving S/n per rank.
      return transfer(2.0 * static_cast<double>(n - 1) * s, static_cast<double>(n), link) +
             link.latency * (2 * (n - 1));
    case CollectiveAlgo::tree:
      // NCCL double binary tree: every rank sends and receives the whole buffer twice (up the
      // reduce tree, down the broadcast tree), pipelined, so the bandwidth term is 2 S/B
      // (NCCL's tuning model: algorithm bandwidth = bus bandwidth / 2) independent of n;
      // latency is one hop per tree level, up and down.
      return transfer(2.0 * s, 1, link) + link.latency * (2 * ceil_log2(n));
  }
  throw core::InternalError("all_reduce_time: unknown CollectiveAlgo");
}

Duration reduce_scatter_time(Bytes bytes, std::int64_t n, const hw::LinkSpec& link) {
  if (!needs_work(bytes, n, link)) return Duration{};
  return transfer(static_cast<double>(n - 1) * static_cast<double>(bytes.value),
                  static_cast<double>(n), link) +
         link.latency * (n - 1);
}

Duration all_gather_time(Bytes bytes, std::int64_t n, const hw::LinkSpec& link) {
  // Same traffic as reduce-scatter, run backwards: (n-1) steps of S/n each.
  return reduce_scatter_time(bytes, n, link);
}

Duration all_to_all_time(Bytes bytes, std::int64_t n, const hw::LinkSpec& link) {
  // The traffic of a reduce-scatter without the reduction: (n-1) messages of S/n each.
  return reduce_scatter_time(bytes, n, link);
}

Duration p2p_time(Bytes bytes, const hw::LinkSpec& link) {
  if (bytes.value < 0) invalid("point-to-point size must not be negative");
  check_link(link);
  if (bytes.value == 0) return Duration{};
  return transfer(static_cast<double>(bytes.value), 1, link) + link.latency;
}

}  // namespace trainsim::cost
