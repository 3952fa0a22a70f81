#include "sim/cost/gemm_shape.hpp"

#include <algorithm>

namespace trainsim::cost {
namespace {

struct Tile {
  int m, n;
};
// Largest first; each row one size in its two orientations (the guide, section 2.3).
constexpr Tile kTiles[][2] = {{{256, 128}, {128, 256}},
                              {{128, 128}, {128, 128}},
                              {{128, 64}, {64, 128}},
                              {{64, 64}, {64, 64}}};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

GemmTiling tile_with(const GemmShape& g, Tile t, int split, int sms) {
  GemmTiling r;
  r.tile_m = t.m;
  r.tile_n = t.n;
  r.split_k = split;
  const std::int64_t tiles = ceil_div(g.m, t.m) * ceil_div(g.n, t.n) * g.batch;
  r.ctas = tiles * split;
  r.waves = ceil_div(r.ctas, sms);
  // Each CTA computes a tile_m x tile_n block over ceil(K / split) of K; a wave takes one
  // CTA's time, so the issued work is waves x SMs CTAs of that size.
  const double useful = static_cast<double>(g.m) * static_cast<double>(g.n) *
                        static_cast<double>(g.k) * static_cast<double>(g.batch);
  const double issued = static_cast<double>(r.waves) * sms * t.m * t.n *
                        static_cast<double>(ceil_div(g.k, split));
  r.efficiency = useful / issued;
  return r;
}

}  // namespace

double GemmShape::flops() const {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
         static_cast<double>(batch);
}

GemmTiling gemm_tiling(const GemmShape& g, int sm_count) {
  if (sm_count <= 0 || g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch <= 0) return GemmTiling{};
  // The tile, orientation and split-K factor that leave the least work idle, as cuBLAS's
  // heuristic picks the kernel it predicts fastest; a tie keeps the larger tile (more operand
  // reuse) and the smaller split. Splitting is for shapes whose tiles do not fill a wave.
  GemmTiling best{};
  best.efficiency = 0;
  const std::int64_t max_split =
      std::max<std::int64_t>(1, std::min<std::int64_t>(sm_count, g.k / kSplitKSlice));
  for (const auto& size : kTiles)
    for (const Tile& t : size) {
      const GemmTiling one = tile_with(g, t, 1, sm_count);
      if (one.efficiency > best.efficiency) best = one;
      if (one.ctas >= sm_count) continue;
      for (std::int64_t s = 2; s <= max_split; ++s) {
        const GemmTiling c = tile_with(g, t, static_cast<int>(s), sm_count);
        if (c.efficiency > best.efficiency) best = c;
      }
    }
  return best;
}

double gemms_efficiency(std::span<const GemmShape> gemms, int sm_count) {
  double useful = 0, at_full = 0;
  for (const GemmShape& g : gemms) {
    const double f = g.flops();
    if (!(f > 0)) continue;
    useful += f;
    at_full += f / gemm_tiling(g, sm_count).efficiency;
  }
  return at_full > 0 ? useful / at_full : 1.0;
}

}  // namespace trainsim::cost
