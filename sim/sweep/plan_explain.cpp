// Why one layout beats another, in one sentence built from the two reports' figures: the
// pipeline bubble, communication that compute did not hide, recomputed work and per-GPU
// efficiency, each turned into seconds of the step so the largest can be named first.
#include <algorithm>
#include <cstdio>

#include "sim/core/units.hpp"
#include "sim/sweep/plan.hpp"

namespace trainsim::sweep {

namespace {

double exposed_s(const report::Summary& s) {
  double t = 0;
  for (const auto& c : s.comm) t += c.exposed_s;
  return t;
}

// Share of the hardware FLOPs spent on recomputation.
double recompute_share(const report::Summary& s) { return s.hfu > 0 ? 1.0 - s.mfu / s.hfu : 0.0; }

std::string fmt(const char* f, double a, double b) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

const report::DeviceSummary* fullest(const report::Summary& s) {
  const report::DeviceSummary* d = nullptr;
  for (const auto& x : s.devices)
    if (!d || x.peak > d->peak) d = &x;
  return d;
}

}  // namespace

std::string explain(const report::Summary& best, const report::Summary& ru, Objective o) {
  if (o == Objective::memory) {
    const auto* a = fullest(best);
    const auto* b = fullest(ru);
    std::string s = "its fullest device peaks at " + core::format_bytes(best.peak) + " against " +
                    core::format_bytes(ru.peak);
    if (a && b) {
      const auto act = hw::MemCategory::activations;
      s += ": model states " + core::format_bytes(a->model_states.total()) + " vs " +
           core::format_bytes(b->model_states.total()) + ", activations " +
           core::format_bytes(a->peak_breakdown[act]) + " vs " + core::format_bytes(b->peak_breakdown[act]);
    }
    return s + ".";
  }
  const double dt = ru.step_time_s - best.step_time_s;
  struct Reason {
    double seconds;  // how much of the step this difference is worth
    std::string text;
  };
  std::vector<Reason> reasons;
  const double bubble = (ru.bubble_fraction - best.bubble_fraction) * ru.step_time_s;
  reasons.push_back({bubble, fmt("pipeline bubble %.1f%% vs %.1f%%", 100 * best.bubble_fraction, 100 * ru.bubble_fraction)});
  reasons.push_back({exposed_s(ru) - exposed_s(best), fmt("exposed communication %.3f s vs %.3f s", exposed_s(best), exposed_s(ru))});
  reasons.push_back({(recompute_share(ru) - recompute_share(best)) * ru.step_time_s,
                     fmt("recomputed work %.1f%% vs %.1f%% of the FLOPs", 100 * recompute_share(best), 100 * recompute_share(ru))});
  std::stable_sort(reasons.begin(), reasons.end(), [](const Reason& a, const Reason& b) { return a.seconds > b.seconds; });
  std::string s = fmt("it is %.3f s (%.1f%%) faster per step", dt, ru.step_time_s > 0 ? 100 * dt / ru.step_time_s : 0.0);
  if (dt <= 0) s = "it ties on step time and wins the tie-break";
  std::string why;
  for (const auto& r : reasons)
    if (r.seconds > 1e-4 * ru.step_time_s) why += (why.empty() ? "" : ", ") + r.text;
  if (why.empty()) why = fmt("with the same bubble, communication and recomputation, its kernels are more efficient (MFU %.1f%% vs %.1f%%)", 100 * best.mfu, 100 * ru.mfu);
  else why = "mainly from lower " + why + fmt(" (MFU %.1f%% vs %.1f%%)", 100 * best.mfu, 100 * ru.mfu);
  return s + ": " + why + ".";
}

}  // namespace trainsim::sweep
