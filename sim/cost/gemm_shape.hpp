#pragma once
// GEMM efficiency by shape: how much of the work a GEMM issues to the SMs is useful, from the
// tile and wave quantization of NVIDIA's "Matrix Multiplication Background User's Guide"
// (docs/gemm.md). cuBLAS cuts the M x N output into CTA tiles; each SM runs one tile at a time,
// so the GPU runs ceil(tiles / SMs) waves, and a wave takes as long whether its tiles are full
// or partial and whether every SM has one.
#include <cstdint>
#include <span>

namespace trainsim::cost {

// One GEMM (or `batch` equal GEMMs in one batched kernel): an M x K by K x N product.
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  double flops() const;  // 2 M N K x batch
  friend bool operator==(const GemmShape&, const GemmShape&) = default;
};

// The CTA tile and split-K factor the model picks for a shape, and the fraction of the issued
// work that is useful.
struct GemmTiling {
  int tile_m = 0, tile_n = 0;
  int split_k = 1;
  std::int64_t ctas = 0;   // tiles x batch x split_k
  std::int64_t waves = 0;  // ceil(ctas / SMs)
  double efficiency = 1;   // useful / issued, in (0, 1]
};

// cuBLAS's tile sizes for tensor-core GEMMs (the guide, section 2.3): 256x128 / 128x256,
// 128x128, 128x64 / 64x128, 64x64. As cuBLAS runs the kernel its heuristic predicts fastest,
// the tile, orientation and split-K factor leaving the least issued work idle are used, a tie
// going to the larger tile (more operand reuse, the guide) and the smaller split. K is split
// (s CTAs per output tile, slices of at least kSplitKSlice, s <= SMs) only when the tiles alone
// do not fill a wave, as cuBLAS and CUTLASS do (the partial sums' reduction is not counted).
// Efficiency = useful MACs / (waves x SMs x tile_m x tile_n x ceil(K / split_k)).
// A shape with a zero dimension, or sm_count <= 0, gives efficiency 1 (no model).
GemmTiling gemm_tiling(const GemmShape& g, int sm_count);

// The efficiency of a run of GEMMs played one after another: total FLOPs over the FLOPs their
// time would do at full efficiency, sum F / sum (F / e). 1 for an empty run.
double gemms_efficiency(std::span<const GemmShape> gemms, int sm_count);

// K-elements each split-K slice keeps at least: one main-loop step of CUTLASS's Ampere and
// Hopper 16-bit tensor-core tiles (128x128x64, 256x128x64).
inline constexpr std::int64_t kSplitKSlice = 64;

}  // namespace trainsim::cost
