#pragma once
// Cutting the layer order into contiguous chunks (pipeline stages, or virtual stages when
// interleaved).
#include <cstdint>
#include <vector>

#include "models/model.hpp"
#include "sim/parallel/shard.hpp"

namespace trainsim::parallel {

struct LayerRange {
  std::int32_t first = 0;  // index into Model::order
  std::int32_t end = 0;    // one past the last
};

// Explicit `split_points` (indices where a new chunk starts) win. Otherwise, with
// `blocks_per_chunk` (Megatron-Core's uneven split, scenario::stage_blocks) chunk c takes that
// many blocks, and when the repeated blocks divide evenly each chunk gets the same number of
// blocks — Megatron-LM's rule; either way layers before the first block join chunk 0 and those
// after the last join the last chunk. Otherwise chunks are balanced by compute (forward +
// backward FLOPs) with a greedy prefix cut.
std::vector<LayerRange> partition_layers(const models::Model& m,
                                         const std::vector<LayerShard>& shards, int chunks,
                                         const std::vector<std::int64_t>& split_points,
                                         const std::vector<std::int64_t>& blocks_per_chunk = {});

}  // namespace trainsim::parallel
