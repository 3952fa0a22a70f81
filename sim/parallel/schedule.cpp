#include "sim/parallel/schedule.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace trainsim::parallel {

namespace {

std::vector<WorkUnit> gpipe(int m) {
  std::vector<WorkUnit> u;
  u.reserve(2 * m);
  for (int j = 0; j < m; ++j) u.push_back({true, 0, j});
  for (int j = m - 1; j >= 0; --j) u.push_back({false, 0, j});
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

// Megatron-LM interleaved 1F1B (Narayanan et al. 2021): forward unit k of this device runs
// chunk (k / p) % v on micro-batch (k / (p v)) p + k % p; backward units visit chunks in
// reverse.
std::vector<WorkUnit> interleaved(int stage, int p, int m, int v) {
  const int total = m * v;
  auto fwd = [&](int k) {
    return WorkUnit{true, (k / p) % v, (k / (p * v)) * p + k % p};
  };
  auto bwd = [&](int k) {
    return WorkUnit{false, v - 1 - (k / p) % v, (k / (p * v)) * p + k % p};
  };
  int warmup = (m == p) ? total : std::min(total, (p - stage - 1) * 2 + (v - 1) * p);
  std::vector<WorkUnit> u;
  u.reserve(2 * total);
  int f = 0, b = 0;
  for (; f < warmup; ++f) u.push_back(fwd(f));
  while (f < total) {
    u.push_back(fwd(f++));
    u.push_back(bwd(b++));
  }
  while (b < total) u.push_back(bwd(b++));
  return u;
}

}  // namespace

std::vector<WorkUnit> schedule_stage(scenario::Schedule s, int stage, int stages, int microbatches,
                                     int virtual_stages) {
  TRAINSIM_CHECK(stages >= 1 && stage >= 0 && stage < stages && microbatches >= 1,
                 "bad schedule arguments");
  switch (s) {
    case scenario::Schedule::gpipe: return gpipe(microbatches);
    case scenario::Schedule::one_f_one_b: return one_f_one_b(stage, stages, microbatches);
    case scenario::Schedule::interleaved:
      TRAINSIM_CHECK(virtual_stages >= 1, "virtual_stages must be positive");
      if (virtual_stages == 1) return one_f_one_b(stage, stages, microbatches);
      TRAINSIM_CHECK(microbatches % stages == 0,
                     "interleaved schedule needs micro-batches divisible by pipeline stages");
      return interleaved(stage, stages, microbatches, virtual_stages);
  }
  return {};
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
