#include "sim/importers/torchtitan_split.hpp"

#include <algorithm>

#include "models/builders.hpp"
#include "models/presets.hpp"

namespace trainsim::importers {

std::vector<std::int64_t> split_2024(std::int64_t blocks, std::int64_t chunks) {
  const std::int64_t base = blocks / chunks;
  std::int64_t extra = blocks % chunks, used = 0;
  std::vector<std::int64_t> per(static_cast<std::size_t>(chunks), base);
  for (std::int64_t i = 1; i + 1 < chunks; ++i)
    if (extra > 0) {
      ++per[static_cast<std::size_t>(i)];
      --extra;
    }
  for (std::int64_t i = 0; i + 1 < chunks; ++i) used += per[static_cast<std::size_t>(i)];
  per.back() = blocks - used;
  return per;
}

std::vector<std::int64_t> split_fqn(std::int64_t blocks, std::int64_t chunks, std::int64_t input_weight,
                                    std::int64_t output_weight, std::string* why) {
  if (chunks == 1) return {blocks};
  const std::int64_t effective = blocks + input_weight + output_weight;
  const std::int64_t per = effective / chunks, extra = effective % chunks;
  if (per == 0 || input_weight > per || output_weight > per) {
    *why = "torchtitan cannot lay " + std::to_string(blocks) + " blocks + " + std::to_string(input_weight) +
           " + " + std::to_string(output_weight) + " over " + std::to_string(chunks) +
           " stages (each needs at least one block and at least its input / output weight)";
    return {};
  }
  std::vector<std::int64_t> parts;
  std::int64_t left = blocks;
  for (std::int64_t i = 0; i < chunks; ++i) {
    std::int64_t n = per + (i < extra ? 1 : 0);
    if (i == 0) n -= input_weight;
    if (i + 1 == chunks) n -= output_weight;
    n = std::min(n, left);  // torchtitan stops at the last block
    parts.push_back(n);
    left -= n;
  }
  return parts;
}

std::vector<std::int64_t> preset_split_points(const std::string& model, const std::vector<std::int64_t>& per_part) {
  if (per_part.size() < 2 || std::all_of(per_part.begin(), per_part.end(),
                                         [&](std::int64_t n) { return n == per_part.front(); }))
    return {};
  const models::Preset* p = models::find_preset(model);
  if (!p || !std::holds_alternative<models::TransformerConfig>(p->config)) return {};
  const models::Model m = models::build_preset(*p, models::BuildOptions{});
  // A part after the last block (torchtitan's norm + output alone) starts at the bounds' last.
  const std::vector<std::int32_t> bound = models::block_bounds(m);
  if (bound.empty()) return {};
  std::vector<std::int64_t> points;
  std::int64_t block = 0;
  for (std::size_t c = 0; c + 1 < per_part.size(); ++c) {
    block += per_part[c];
    if (block < 0 || block >= static_cast<std::int64_t>(bound.size())) return {};
    points.push_back(bound[static_cast<std::size_t>(block)]);
  }
  return points;
}

}  // namespace trainsim::importers
