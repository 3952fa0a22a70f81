#include "sim/parallel/schedule.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace trainsim::parallel {

namespace {

// PyTorch's ScheduleGPipe runs the backwards in micro-batch order (schedules.py, "Run
// backward": `for i in range(self._n_microbatches)`); GPipe's own order is newest first.
std::vector<WorkUnit> gpipe(int m, bool oldest_first) {
  std::vector<WorkUnit> u;
  u.reserve(2 * m);
  for (int j = 0; j < m; ++j) u.push_back({true, 0, j});
  for (int k = 0; k < m; ++k) u.push_back({false, 0, oldest_first ? k : m - 1 - k});
  return u;
}

std::vector<WorkUnit> one_f_one_b(int stage, int stages, int m) {
  std::vector<WorkUnit> u;
  u.reserve(2 * m);
  const int warmup = std::min(stages - stage - 1, m);
  int f = 0, b = 0;
  for (; f < warmup; ++f) u.push_back({true, 0, f});
  while (f < m) {
    u.push_back({true, 0, f++});
    u.push_back({false, 0, b++});
  }
  while (b < m) u.push_back({false, 0, b++});
  return u;
}

// Megatron's interleaved 1F1B (Narayanan et al. 2021; Megatron-Core's schedules.py,
// get_schedule_table): the micro-batches in groups of n (the last group takes the rest), each
// group run through every chunk in turn, n micro-batches per chunk; forward unit k is entry k of
// that table, backward unit k the same entry with the chunks reversed. Warm-up:
// (p - stage - 1) x 2 + (v - 1) x n forwards (at most all of them); every stage runs all of them
// as warm-up when m = n = p (Megatron-LM's schedules.py of 2021, `num_microbatches ==
// pipeline_parallel_size`; Megatron-Core caps the count only). PyTorch's
// ScheduleInterleaved1F1B (torch/distributed/pipelining/schedules.py,
// `_calculate_single_rank_operations`) builds the same table from its rounds of n micro-batches
// and warms up with (v - 1) x n + 2 (p - stage - 1) forwards, capped, with no exception:
// `all_warmup` false.
std::vector<WorkUnit> interleaved(int stage, int p, int m, int v, int n, bool all_warmup) {
  std::vector<WorkUnit> table;
  table.reserve(static_cast<std::size_t>(m) * v);
  for (int first = 0; first < m; first += n) {
    const int last = first + n >= m ? m : first + n;
    for (int c = 0; c < v; ++c)
      for (int j = first; j < last; ++j) table.push_back({true, c, j});
  }
  const int total = m * v;
  const int warmup =
      all_warmup && m == p && n == p ? total : std::min(total, (p - stage - 1) * 2 + (v - 1) * n);
  const auto bwd = [&](int k) {
    const WorkUnit& f = table[static_cast<std::size_t>(k)];
    return WorkUnit{false, v - 1 - f.chunk, f.microbatch};
  };
  std::vector<WorkUnit> u;
  u.reserve(2 * static_cast<std::size_t>(total));
  int f = 0, b = 0;
  for (; f < warmup; ++f) u.push_back(table[static_cast<std::size_t>(f)]);
  while (f < total) {
    u.push_back(table[static_cast<std::size_t>(f++)]);
    u.push_back(bwd(b++));
  }
  while (b < total) u.push_back(bwd(b++));
  return u;
}

}  // namespace

std::vector<WorkUnit> schedule_stage(scenario::Schedule s, int stage, int stages, int microbatches,
                                     int virtual_stages, int group, scenario::PipelineEngine engine) {
  TRAINSIM_CHECK(stages >= 1 && stage >= 0 && stage < stages && microbatches >= 1,
                 "bad schedule arguments");
  const bool pytorch = engine == scenario::PipelineEngine::pytorch;
  switch (s) {
    case scenario::Schedule::gpipe: return gpipe(microbatches, pytorch);
    case scenario::Schedule::one_f_one_b: return one_f_one_b(stage, stages, microbatches);
    case scenario::Schedule::interleaved:
      TRAINSIM_CHECK(virtual_stages >= 1, "virtual_stages must be positive");
      if (virtual_stages == 1) return one_f_one_b(stage, stages, microbatches);
      if (pytorch) {
        TRAINSIM_CHECK(group >= 1 && microbatches % group == 0,
                       "PyTorch's interleaved schedule needs rounds that divide the micro-batches");
        return interleaved(stage, stages, microbatches, virtual_stages, group, false);
      }
      if (group == 0) group = stages;
      TRAINSIM_CHECK(group >= stages && group <= microbatches &&
                         (microbatches % group == 0 || microbatches % group >= stages),
                     "interleaved schedule needs groups of pipeline..micro-batches, the last one "
                     "at least pipeline");
      return interleaved(stage, stages, microbatches, virtual_stages, group, true);
  }
  return {};
}

std::vector<WorkUnit> schedule_step(scenario::Schedule s, int stage, int stages, int microbatches,
                                    int per_schedule, int virtual_stages, int group,
                                    scenario::PipelineEngine engine) {
  TRAINSIM_CHECK(per_schedule >= 1 && microbatches % per_schedule == 0,
                 "a step needs a whole number of schedules");
  const std::vector<WorkUnit> one =
      schedule_stage(s, stage, stages, per_schedule, virtual_stages, group, engine);
  if (per_schedule == microbatches) return one;
  std::vector<WorkUnit> units;
  units.reserve(one.size() * static_cast<std::size_t>(microbatches / per_schedule));
  for (int first = 0; first < microbatches; first += per_schedule)
    for (WorkUnit u : one) {
      u.microbatch += first;
      units.push_back(u);
    }
  return units;
}

std::string describe(const std::vector<WorkUnit>& units) {
  std::string out;
  for (const auto& u : units) {
    if (!out.empty()) out += ' ';
    out += u.forward ? 'F' : 'B';
    out += std::to_string(u.microbatch);
    if (u.chunk > 0) out += "." + std::to_string(u.chunk);
  }
  return out;
}

}  // namespace trainsim::parallel
