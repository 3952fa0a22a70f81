#include <catch2/catch.hpp>

#include <vector>

#include "sim/cost/cost.hpp"
#include "sim/cost/gemm_shape.hpp"
#include "sim/hw/device.hpp"

using namespace trainsim;
using cost::GemmShape;
using cost::gemm_tiling;

namespace {
constexpr int kA100 = 108;  // SMs of an A100 (NVIDIA A100 whitepaper)
}

TEST_CASE("the GPU presets carry their whitepapers' SM counts", "[cost][gemm]") {
  CHECK(hw::find_device("a100-80gb")->sm_count == 108);
  CHECK(hw::find_device("h100-80gb")->sm_count == 132);
  CHECK(hw::find_device("v100-32gb")->sm_count == 80);
  CHECK(hw::find_device("mi300x")->sm_count == 0);  // not modelled: efficiency 1
}

TEST_CASE("a large square GEMM pays its last partial wave in the tile that wastes least",
          "[cost][gemm]") {
  // M = N = K = 4096 on an A100's 108 SMs (every tile full: 4096 divides by all sizes):
  //   256x128 / 128x256: 512 tiles, ceil(512 / 108) = 5 waves: 512 / 540 = 0.948148
  //   128x128: 1024 tiles, 10 waves: 1024 / 1080, the same
  //   128x64 / 64x128: 2048 tiles, 19 waves: 2048 / 2052 = 0.998051
  //   64x64: 4096 tiles, 38 waves: 4096 / 4104, the same: the tie keeps 128x64.
  const auto t = gemm_tiling(GemmShape{4096, 4096, 4096, 1}, kA100);
  CHECK(t.tile_m == 128);
  CHECK(t.tile_n == 64);
  CHECK(t.split_k == 1);
  CHECK(t.ctas == 2048);
  CHECK(t.waves == 19);
  CHECK(t.efficiency == Approx(2048.0 / 2052.0).epsilon(1e-12));
  // On an H100's 132 SMs every size gives 4 x 132 x 256 x 128 of issued work (512 tiles in
  // 4 waves, 1024 in 8, ...): the tie keeps 256x128, at 512 / 528 = 0.969697.
  const auto h = gemm_tiling(GemmShape{4096, 4096, 4096, 1}, 132);
  CHECK(h.tile_m == 256);
  CHECK(h.efficiency == Approx(512.0 / 528.0).epsilon(1e-12));
}

TEST_CASE("partial tiles and a partial last wave", "[cost][gemm]") {
  // 4 SMs, M = N = 192, K = 64 (too short to split): useful 192 x 192 = 36,864 per K.
  //   256x128 / 128x256: 2 tiles, 1 wave of 4 x 32,768: 0.28125
  //   128x128: 4 tiles (three partly empty), 1 wave: 36,864 / 65,536 = 0.5625
  //   128x64: 6 tiles, 2 waves: 36,864 / (2 x 4 x 8,192) = 0.5625
  //   64x64: 9 full tiles, 3 waves (the last with 1 tile): 36,864 / (3 x 4 x 4,096) = 0.75
  const auto t = gemm_tiling(GemmShape{192, 192, 64, 1}, 4);
  CHECK(t.tile_m == 64);
  CHECK(t.tile_n == 64);
  CHECK(t.waves == 3);
  CHECK(t.efficiency == Approx(0.75));
}

TEST_CASE("a GEMM too small for one wave splits K when K allows it", "[cost][gemm]") {
  // 8 SMs. M = N = 64, K = 1024: one tile of any size, under a wave. 64x64 split 8 ways (each
  // slice 128 >= 64 of K) makes 8 CTAs of 64x64x128, one full wave: efficiency
  // 64 x 64 x 1024 / (8 x 64 x 64 x 128) = 1.
  const auto split = gemm_tiling(GemmShape{64, 64, 1024, 1}, 8);
  CHECK(split.tile_m == 64);
  CHECK(split.split_k == 8);
  CHECK(split.efficiency == Approx(1.0));
  // K = 64 cannot split (one 64-long slice): one 64x64 tile on 1 of 8 SMs: efficiency 1/8.
  const auto lone = gemm_tiling(GemmShape{64, 64, 64, 1}, 8);
  CHECK(lone.split_k == 1);
  CHECK(lone.efficiency == Approx(0.125));
}

TEST_CASE("batched GEMMs fill waves with their batch", "[cost][gemm]") {
  // Attention scores at tensor 8: s = 1024, d = 64, batch = 16 heads / 8 x 1 sample = 2:
  // (1024, 1024, 64) x 2 on 108 SMs, K too short to split.
  //   256x128: 64 tiles, 1 wave: 64 / 108;  128x128: 128 tiles, 2 waves: 128 / 216
  //   128x64: 256 tiles, 3 waves: 256 / 324;  64x64: 512 tiles, 5 waves: 512 / 540 = 0.948148
  const auto t = gemm_tiling(GemmShape{1024, 1024, 64, 2}, kA100);
  CHECK(t.tile_m == 64);
  CHECK(t.ctas == 512);
  CHECK(t.efficiency == Approx(512.0 / 540.0).epsilon(1e-12));
}

TEST_CASE("a run of GEMMs runs at its FLOP-weighted harmonic efficiency", "[cost][gemm]") {
  // On 8 SMs (cases above): (64, 64, 1024) at 1, F = 2 x 64 x 64 x 1024 = 8,388,608;
  // (64, 64, 64) at 1/8, F = 524,288. Sum F = 8,912,896; their time at efficiency 1 would do
  // 8,388,608 + 8 x 524,288 = 12,582,912: 8,912,896 / 12,582,912 = 0.708333.
  const std::vector<GemmShape> run{{64, 64, 1024, 1}, {64, 64, 64, 1}};
  CHECK(cost::gemms_efficiency(run, 8) == Approx(8912896.0 / 12582912.0).epsilon(1e-12));
  CHECK(cost::gemms_efficiency({}, 8) == 1.0);
  CHECK(cost::gemms_efficiency(run, 0) == 1.0);  // no SM count: not modelled
}

TEST_CASE("shape efficiency scales the compute term of matmul work only", "[cost][gemm]") {
  hw::DeviceSpec d;
  d.name = "toy";
  d.peak_fp32 = core::FlopRate{10e12};
  d.peak_16bit = core::FlopRate{100e12};
  d.memory_bandwidth = core::Bandwidth{1e12};
  d.matmul_efficiency = 0.5;
  d.memory_efficiency = 0.5;
  d.matmul_ramp_s = 0;
  d.host_dispatch = core::Duration{0};
  // 1e12 FLOP / (100e12 x 0.5 x 0.5) = 40 ms (20 ms at shape efficiency 1).
  cost::KernelWork w{1e12, core::Bytes{0}, true};
  w.shape_efficiency = 0.5;
  CHECK(cost::kernel_time(w, d, cost::MathMode::half).ns == 40'000'000);
  w.matmul = false;  // vector work: 1e12 / (10e12 x 0.5) = 200 ms, shape ignored
  CHECK(cost::kernel_time(w, d, cost::MathMode::half).ns == 200'000'000);
  w.shape_efficiency = 0;
  CHECK_THROWS_AS(cost::kernel_time(w, d, cost::MathMode::half), std::invalid_argument);
}
