// Megatron-Core's uneven pipeline split (scenario::stage_blocks, parallel::partition_layers):
// transformer_block.py's get_num_layers_to_build, checked on cases computed by hand.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/parallel/partition.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/stage_blocks.hpp"
#include "tests/scenario/scenario_files.hpp"

using namespace trainsim;
using scenario::ParallelSpec;
using Blocks = std::vector<std::int64_t>;

namespace {

ParallelSpec pipeline(std::int64_t p, std::int64_t v = 1) {
  ParallelSpec s;
  s.pipeline = p;
  if (v > 1) {
    s.schedule = scenario::Schedule::interleaved;
    s.virtual_stages = v;
  }
  return s;
}

// Blocks of each chunk of a loaded model cut by partition_layers.
Blocks blocks_of(const scenario::Scenario& s, int chunks, const Blocks& per_chunk) {
  const auto& m = s.model;
  Blocks out;
  for (const auto& r : parallel::partition_layers(m, {}, chunks, {}, per_chunk)) {
    int last = -1;
    std::int64_t n = 0;
    for (std::int32_t i = r.first; i < r.end; ++i) {
      const int b = m.graph[m.order[static_cast<std::size_t>(i)]].block;
      if (b >= 0 && b != last) ++n, last = b;
    }
    out.push_back(n);
  }
  return out;
}

}  // namespace

TEST_CASE("uneven first and last stages hold their blocks, the others share the rest", "[parallel][pipeline]") {
  // 10 blocks over 4 stages, first 1 and last 3: the middle two share 6, three each.
  ParallelSpec p = pipeline(4);
  p.first_stage_blocks = 1;
  p.last_stage_blocks = 3;
  CHECK(scenario::stage_blocks(p, 10).per_chunk == Blocks{1, 3, 3, 3});
  // Only the last: 10 - 1 = 9 over 3.
  p.first_stage_blocks = 0;
  p.last_stage_blocks = 1;
  CHECK(scenario::stage_blocks(p, 10).per_chunk == Blocks{3, 3, 3, 1});
  // Interleaved, 2 stages x 2 chunks, first 2 and last 4 of 6: chunk g = c x 2 + s holds
  // the stage's blocks / 2.
  ParallelSpec q = pipeline(2, 2);
  q.first_stage_blocks = 2;
  q.last_stage_blocks = 4;
  CHECK(scenario::stage_blocks(q, 6).per_chunk == Blocks{1, 2, 1, 2});
  // Nothing set: the even rule.
  CHECK(scenario::stage_blocks(pipeline(4), 10).per_chunk.empty());
  CHECK(scenario::stage_blocks(pipeline(4), 10).error.empty());
}

TEST_CASE("the embedding and the loss counted as blocks take one block off the first and last chunks",
          "[parallel][pipeline]") {
  // 6 blocks + embedding + loss = 8 over 2 stages x 2 chunks: 2 per chunk, the first and the
  // last chunk build one block fewer.
  ParallelSpec p = pipeline(2, 2);
  p.embedding_in_split = true;
  p.loss_in_split = true;
  CHECK(scenario::stage_blocks(p, 6).per_chunk == Blocks{1, 2, 2, 1});
  // The embedding alone: 7 + 1 = 8 over 4 stages, the first stage 1 block.
  ParallelSpec e = pipeline(4);
  e.embedding_in_split = true;
  CHECK(scenario::stage_blocks(e, 7).per_chunk == Blocks{1, 2, 2, 2});
}

TEST_CASE("an uneven split Megatron-Core refuses is refused with the key to blame", "[parallel][pipeline]") {
  ParallelSpec p = pipeline(4);
  p.first_stage_blocks = 2;
  const auto odd = scenario::stage_blocks(p, 9);  // 7 over 3 middle and last stages
  CHECK(odd.per_chunk.empty());
  CHECK(odd.key == "first_stage_blocks");
  CHECK(odd.error.find("remaining 7 blocks") != std::string::npos);
  p.loss_in_split = true;  // not beside an uneven stage
  CHECK(scenario::stage_blocks(p, 10).error.find("does not count") != std::string::npos);
  ParallelSpec v = pipeline(2, 2);
  v.last_stage_blocks = 3;  // of 5: stage 0 holds 2, stage 1 3 blocks over its 2 chunks
  CHECK(scenario::stage_blocks(v, 5).error.find("stage 1's 3 blocks") != std::string::npos);
  ParallelSpec l = pipeline(4);
  l.loss_in_split = true;  // 10 + 1 over 4
  CHECK(scenario::stage_blocks(l, 10).key == "loss_in_split");
  CHECK(scenario::stage_blocks(pipeline(1), 10).error.empty());
  // More chunks than blocks is refused before anything is laid out (16 stages x 1024 chunks).
  ParallelSpec many = pipeline(16, 1024);
  many.last_stage_blocks = 1;
  CHECK(scenario::stage_blocks(many, 10).error.find("16384 chunks for the model's 10 blocks") !=
        std::string::npos);
  ParallelSpec one = pipeline(1);
  one.first_stage_blocks = 3;
  CHECK(scenario::stage_blocks(one, 10).error.find("pipeline >= 2") != std::string::npos);
}

TEST_CASE("the layers are cut at the block boundaries of the uneven split", "[parallel][pipeline]") {
  // GPT-2's 12 blocks over 4 stages, first 1 and last 5: 1 / 3 / 3 / 5 blocks; the embedding
  // joins the first chunk and the final norm and loss the last.
  const test::TempDir dir;
  const auto s = scenario::load_scenario(dir.write("uneven.yaml",
      "model: gpt2\ndevice: a100-80gb\ntraining: {micro_batch: 1, global_batch: 8, seq_len: 128}\n"
      "parallel: {pipeline: 4, first_stage_blocks: 1, last_stage_blocks: 5}\n"));
  const Blocks per = scenario::stage_blocks(s.parallel, s.model.num_blocks).per_chunk;
  REQUIRE(per == Blocks{1, 3, 3, 5});
  CHECK(blocks_of(s, 4, per) == per);
  const auto ranges = parallel::partition_layers(s.model, {}, 4, {}, per);
  CHECK(ranges.front().first == 0);
  CHECK(ranges.back().end == static_cast<std::int32_t>(s.model.order.size()));
  // Counting the embedding and the loss, 12 + 2 = 14 over 2 stages, 7 each: the first chunk
  // builds 6 blocks beside the embedding, the last 6 beside the loss.
  const auto c = scenario::load_scenario(dir.write("counted.yaml",
      "model: gpt2\ndevice: a100-80gb\ntraining: {micro_batch: 1, global_batch: 8, seq_len: 128}\n"
      "parallel: {pipeline: 2, embedding_in_split: true, loss_in_split: true}\n"));
  const Blocks counted = scenario::stage_blocks(c.parallel, c.model.num_blocks).per_chunk;
  REQUIRE(counted == Blocks{6, 6});
  CHECK(blocks_of(c, 2, counted) == counted);
}
