#include "sim/scenario/stage_blocks.hpp"

#include <algorithm>

namespace trainsim::scenario {

namespace {
std::string str(std::int64_t v) { return std::to_string(v); }

StageBlocks refuse(std::string key, std::string why) { return {{}, std::move(why), std::move(key)}; }
}  // namespace

StageBlocks stage_blocks(const ParallelSpec& p, std::int64_t blocks) {
  const bool uneven = p.first_stage_blocks > 0 || p.last_stage_blocks > 0;
  const bool counted = p.embedding_in_split || p.loss_in_split;
  if (!uneven && !counted) return {};
  const std::string key = uneven ? (p.first_stage_blocks > 0 ? "first_stage_blocks" : "last_stage_blocks")
                                 : (p.embedding_in_split ? "embedding_in_split" : "loss_in_split");
  if (uneven && counted)
    return refuse(key, "Megatron-Core does not count the embedding or the loss as blocks beside "
                       "uneven first or last stages (transformer_block.py asserts it)");
  if (p.pipeline < 2) return refuse(key, "splits pipeline stages: it needs pipeline >= 2");
  if (blocks < 1) return refuse(key, "needs a model of repeated transformer blocks");
  const std::int64_t pp = p.pipeline;
  const std::int64_t v = p.schedule == Schedule::interleaved ? p.virtual_stages : 1;
  // Only the first and last chunks may be left without a block (the embedding, the loss).
  if (pp * v > blocks + 2)
    return refuse(key, "pipeline x virtual_stages = " + str(pp * v) + " chunks for the model's " +
                           str(blocks) + " blocks");
  std::vector<std::int64_t> stage(static_cast<std::size_t>(pp));
  if (uneven) {
    std::int64_t rest = blocks, left = pp;
    if (p.first_stage_blocks > 0) rest -= p.first_stage_blocks, --left;
    if (p.last_stage_blocks > 0) rest -= p.last_stage_blocks, --left;
    if (rest < 0)
      return refuse(key, "the first and last stages' blocks exceed the model's " + str(blocks));
    if (left == 0 && rest != 0)
      return refuse(key, "the first and last stages hold " + str(blocks - rest) + " of the model's " +
                             str(blocks) + " blocks, and no other stage is left for the rest");
    if (left > 0 && (rest % left != 0 || rest == 0))
      return refuse(key, "the other " + str(left) + " stages must share the remaining " + str(rest) +
                             " blocks evenly, at least one each");
    std::fill(stage.begin(), stage.end(), left > 0 ? rest / left : 0);
    if (p.first_stage_blocks > 0) stage.front() = p.first_stage_blocks;
    if (p.last_stage_blocks > 0) stage.back() = p.last_stage_blocks;
  } else {
    const std::int64_t total = blocks + (p.embedding_in_split ? 1 : 0) + (p.loss_in_split ? 1 : 0);
    if (total % pp != 0)
      return refuse(key, "the model's " + str(blocks) + " blocks with the embedding or loss counted (" +
                             str(total) + ") must divide over pipeline " + str(pp));
    std::fill(stage.begin(), stage.end(), total / pp);
  }
  StageBlocks out;
  out.per_chunk.resize(static_cast<std::size_t>(pp * v));
  for (std::int64_t s = 0; s < pp; ++s) {
    const std::int64_t n = stage[static_cast<std::size_t>(s)];
    if (n % v != 0)
      return refuse(key, "stage " + str(s) + "'s " + str(n) + " blocks must divide over its " + str(v) +
                             " virtual stages");
    for (std::int64_t c = 0; c < v; ++c) out.per_chunk[static_cast<std::size_t>(c * pp + s)] = n / v;
  }
  if (p.embedding_in_split) --out.per_chunk.front();
  if (p.loss_in_split) --out.per_chunk.back();
  for (const std::int64_t n : out.per_chunk)
    if (n < 0)
      return refuse(key, "the first or last of the " + str(pp * v) +
                             " chunks has no block to give up for the embedding or the loss");
  return out;
}

}  // namespace trainsim::scenario
