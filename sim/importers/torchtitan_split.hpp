#pragma once
// How torchtitan splits a model's transformer blocks over its pipeline stages (model parts), and
// the scenario's `parallel.split_points` that reproduce a split on a trainsim preset.
#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::importers {

// torchtitan of 2024 (torchtitan/parallelisms/pipelining_utils.py, generate_split_points):
// `chunks` parts of blocks / chunks each; the middle parts take one more while the remainder
// lasts, the last part the rest. Needs 1 <= chunks <= blocks.
std::vector<std::int64_t> split_2024(std::int64_t blocks, std::int64_t chunks);

// torchtitan since 2025 (torchtitan/distributed/pipeline_parallel.py,
// generate_llm_fqn_per_model_part): the embedding counts as `input_weight` blocks of the first
// part and norm + output as `output_weight` of the last; blocks + both weights divide over the
// parts, the first (blocks + weights) % chunks parts one more. Empty when torchtitan refuses the
// layout (`why` says as torchtitan does).
std::vector<std::int64_t> split_fqn(std::int64_t blocks, std::int64_t chunks, std::int64_t input_weight,
                                    std::int64_t output_weight, std::string* why);

// The layer indices (a preset's topological order) where parts 1.. start, for blocks per part
// (a first part of none holds the embedding alone, a last part of none the norm and output);
// empty when the parts are equal (trainsim's own even split) or `model` is no transformer preset.
std::vector<std::int64_t> preset_split_points(const std::string& model, const std::vector<std::int64_t>& per_part);

}  // namespace trainsim::importers
