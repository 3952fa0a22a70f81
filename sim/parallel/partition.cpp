#include "sim/parallel/partition.hpp"

#include "sim/core/error.hpp"

namespace trainsim::parallel {

std::vector<LayerRange> partition_layers(const models::Model& m,
                                         const std::vector<LayerShard>& shards, int chunks,
                                         const std::vector<std::int64_t>& split_points,
                                         const std::vector<std::int64_t>& blocks_per_chunk) {
  const auto n = static_cast<std::int32_t>(m.order.size());
  TRAINSIM_CHECK(chunks >= 1 && chunks <= n, "more pipeline chunks than layers");
  std::vector<LayerRange> out;
  if (chunks == 1) return {{0, n}};

  if (!split_points.empty()) {
    TRAINSIM_CHECK(static_cast<int>(split_points.size()) == chunks - 1,
                   "split_points must name one boundary per stage after the first");
    std::int32_t prev = 0;
    for (auto p : split_points) {
      TRAINSIM_CHECK(p > prev && p < n, "split_points must increase within the layer count");
      out.push_back({prev, static_cast<std::int32_t>(p)});
      prev = static_cast<std::int32_t>(p);
    }
    out.push_back({prev, n});
    return out;
  }

  const bool uneven = !blocks_per_chunk.empty();
  TRAINSIM_CHECK(!uneven || static_cast<int>(blocks_per_chunk.size()) == chunks,
                 "blocks_per_chunk must name every chunk");
  if (m.num_blocks > 0 && (uneven || m.num_blocks % chunks == 0)) {
    const std::vector<std::int32_t> bound = models::block_bounds(m);
    if (!bound.empty()) {
      // Chunk c ends where block `upto` starts (after the last block: the layer that follows
      // it): the even share, or Megatron-Core's uneven one.
      std::int64_t upto = 0;
      std::int32_t prev = 0;
      for (int c = 0; c + 1 < chunks; ++c) {
        upto += uneven ? blocks_per_chunk[static_cast<std::size_t>(c)] : m.num_blocks / chunks;
        const std::int32_t cut = bound[static_cast<std::size_t>(upto)];
        TRAINSIM_CHECK(cut > prev && cut < n, "a pipeline chunk without layers");
        out.push_back({prev, cut});
        prev = cut;
      }
      out.push_back({prev, n});
      return out;
    }
    TRAINSIM_CHECK(!uneven, "an uneven split of a model whose blocks are out of order");
  }

  // Greedy balance by compute weight.
  std::vector<double> w(n);
  double total = 0;
  for (std::int32_t i = 0; i < n; ++i) {
    w[i] = shards[i].flops * (1 + shards[i].backward_factor) + 1.0;  // +1 keeps zero-cost layers ordered
    total += w[i];
  }
  std::int32_t prev = 0;
  double acc = 0;
  for (std::int32_t i = 0; i < n && static_cast<int>(out.size()) < chunks - 1; ++i) {
    acc += w[i];
    const int remaining_chunks = chunks - 1 - static_cast<int>(out.size());
    const double target = total * (out.size() + 1) / chunks;
    // Cut after i when the target is reached, or when the layers left are just enough.
    if ((acc >= target && i + 1 > prev) || n - (i + 1) == remaining_chunks) {
      out.push_back({prev, i + 1});
      prev = i + 1;
    }
  }
  out.push_back({prev, n});
  TRAINSIM_CHECK(static_cast<int>(out.size()) == chunks, "partition produced a wrong chunk count");
  return out;
}

}  // namespace trainsim::parallel
