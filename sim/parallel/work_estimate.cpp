#include "sim/parallel/work_estimate.hpp"

#include <limits>
#include <string>

#include "sim/core/units.hpp"
#include "sim/parallel/shard.hpp"

namespace trainsim::parallel {

namespace {

std::string with_commas(std::int64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::int64_t ops_at_least(const scenario::Scenario& s, const LowerOptions& options) {
  const auto& p = s.parallel;
  const std::int64_t chunks =
      p.pipeline * (p.schedule == scenario::Schedule::interleaved ? p.virtual_stages : 1);
  const bool zero3 = p.data > 1 && p.zero == 3;
  const bool fetches = s.training.offload.parameters_on_cpu();
  const bool expanded = !options.compress || zero3 || fetches || s.cluster.collective_sms > 0;
  try {
    const std::int64_t mcount = s.training.gradient_accumulation;
    if (!expanded) return core::checked_mul(core::checked_mul(mcount, 2), chunks);
    // Per micro-batch: every layer's forward and backward, and their fetches where there are
    // (ZeRO-3's gathers take a bucket of layers each, and none for persistent parameters: not
    // counted, so that this stays a lower bound).
    std::int64_t per_microbatch = 0;
    const auto shards = shard_layers(s.model, p.tensor, p.sequence_parallel && p.tensor > 1,
                                     p.expert);
    for (const LayerShard& l : shards) per_microbatch += 2 + (fetches && l.params > 0 ? 2 : 0);
    return core::checked_mul(mcount, per_microbatch);
  } catch (const core::OverflowError&) {
    return std::numeric_limits<std::int64_t>::max();  // more than 64 bits of ops: over any limit
  }
}

void check_work(const scenario::Scenario& s, const LowerOptions& options) {
  const std::int64_t ops = ops_at_least(s, options);
  if (ops <= s.limits.max_ops) return;
  const bool zero3 = s.parallel.data > 1 && s.parallel.zero == 3;
  const bool fetches = s.training.offload.parameters_on_cpu();
  std::string how = "micro-batches x ";
  const bool contention = s.cluster.collective_sms > 0;
  if (!options.compress || zero3 || fetches || contention)
    how += "layers x forward and backward" +
           std::string(fetches      ? ", each with its fetch"
                       : zero3      ? ", expanded for ZeRO-3's gathers"
                       : contention ? ", expanded for cluster.collective_sms"
                                    : "") +
           (!options.compress ? "; expanded for a trace or memory series: every layer an op" : "");
  else
    how += "pipeline chunks x forward and backward";
  throw s.limits.refusal("this step would play at least " + with_commas(ops) + " ops (" + how +
                             "), over limits.max_ops = " + with_commas(s.limits.max_ops),
                         " (a plan and its play take about 300-500 bytes per op)");
}

}  // namespace trainsim::parallel
