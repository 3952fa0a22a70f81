// SMs a collective takes from compute (cost/contention.hpp): the device a kernel sees beside a
// collective and an op's duration with one in flight for part of it, computed by hand.
#include <catch2/catch.hpp>

#include "../support/toy_device.hpp"
#include "sim/cost/contention.hpp"
#include "sim/cost/cost.hpp"

using namespace trainsim;
using core::Duration;

namespace {
Duration ms(double x) { return core::duration_from_seconds(x * 1e-3); }
}  // namespace

TEST_CASE("a collective's SMs leave a kernel the rest of the SMs and their share of the peaks", "[cost][contention]") {
  const hw::DeviceSpec d = testing::hundred_sm_device();
  const hw::DeviceSpec s = cost::beside_collective(d, 20);
  CHECK(s.sm_count == 80);
  CHECK(s.peak_16bit.per_s == Approx(80e12));
  CHECK(s.peak_fp32.per_s == Approx(8e12));
  CHECK(s.memory_bandwidth.bytes_per_s == d.memory_bandwidth.bytes_per_s);  // SMs only
  // A GEMM of 1e12 FLOPs (no launches, no ramp): 10 ms alone, 12.5 ms beside the collective.
  cost::KernelWork gemm;
  gemm.flops = 1e12;
  gemm.matmul = true;
  CHECK(cost::device_time(gemm, d, cost::MathMode::half).ns == 10'000'000);
  CHECK(cost::device_time(gemm, s, cost::MathMode::half).ns == 12'500'000);
  // A memory-bound pass is as fast: 1 GB at 1 TB/s.
  cost::KernelWork copy;
  copy.bytes = core::Bytes{1'000'000'000};
  CHECK(cost::device_time(copy, s, cost::MathMode::half) == cost::device_time(copy, d, cost::MathMode::half));
  // Nothing taken, or a device without an SM count: unchanged; at least one SM is left.
  CHECK(cost::beside_collective(d, 0).sm_count == 100);
  hw::DeviceSpec unknown = d;
  unknown.sm_count = 0;
  CHECK(cost::beside_collective(unknown, 20).peak_16bit.per_s == 100e12);
  CHECK(cost::beside_collective(d, 500).sm_count == 1);
}

TEST_CASE("an op runs slower only while a collective is in flight", "[cost][contention]") {
  // 10 ms alone, 12.5 ms beside a collective: 0.8 of its speed while one runs.
  const Duration alone = ms(10), beside = ms(12.5);
  CHECK(cost::contended(alone, beside, Duration{0}) == alone);
  CHECK(cost::contended(alone, beside, Duration{-1'000'000}) == alone);
  // 4 ms beside (3.2 ms of work), then 6.8 ms alone: 10.8 ms = 10 + 4 x 0.2.
  CHECK(cost::contended(alone, beside, ms(4)).ns == 10'800'000);
  // A collective outlasting the op: the whole op beside it.
  CHECK(cost::contended(alone, beside, ms(12.5)) == beside);
  CHECK(cost::contended(alone, beside, ms(100)) == beside);
  // An op a collective does not slow (memory-bound, host-bound).
  CHECK(cost::contended(alone, alone, ms(4)) == alone);
}
