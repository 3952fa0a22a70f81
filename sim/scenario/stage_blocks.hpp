#pragma once
// Megatron-Core's uneven pipeline split: how many transformer blocks each pipeline chunk builds
// (megatron/core/transformer/transformer_block.py, get_num_layers_to_build), from
// parallel.first_stage_blocks / last_stage_blocks (--decoder-first/last-pipeline-num-layers) or
// parallel.embedding_in_split / loss_in_split (--account-for-embedding/loss-in-pipeline-split).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace trainsim::scenario {

struct StageBlocks {
  // Blocks of chunk g = c x pipeline + s (virtual stage c of pipeline stage s); empty when the
  // spec sets none of the keys (the even split).
  std::vector<std::int64_t> per_chunk;
  std::string error;  // why the split cannot be made ("" when it can)
  std::string key;    // the key the error belongs to (parallel.<key>)
};

// Uneven first / last stages: those stages hold the given blocks, the others share the rest
// evenly; with the embedding and / or the loss counted as blocks, (blocks + 1 + 1) divide over
// the stages and the first chunk of the first stage (the last of the last) builds one fewer.
// Every stage's blocks divide over its `virtual_stages` chunks.
StageBlocks stage_blocks(const ParallelSpec& p, std::int64_t blocks);

}  // namespace trainsim::scenario
