#include "sim/sweep/digest.hpp"

#include <algorithm>
#include <map>

#include "sim/core/units.hpp"

namespace trainsim::sweep {

namespace {

// Values of one axis in the order "smallest" means: numeric when all are numbers.
std::vector<std::size_t> value_order(const Axis& a) {
  std::vector<std::size_t> idx(a.values.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  const bool numeric = std::all_of(a.values.begin(), a.values.end(),
                                   [](const std::string& v) { return parse_value(v).is_number; });
  if (numeric)
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) {
      return parse_value(a.values[x]).number < parse_value(a.values[y]).number;
    });
  return idx;
}

}  // namespace

void write_digest(std::ostream& out, const SweepSpec& spec, const std::vector<Point>& points,
                  const std::vector<Brief>& briefs) {
  std::map<std::size_t, const Brief*> by_point;
  std::size_t counts[3] = {0, 0, 0};
  const Brief* best = nullptr;
  for (const auto& b : briefs) {
    by_point[b.point] = &b;
    ++counts[static_cast<int>(b.status)];
    if (b.status == Status::fits &&
        (!best || b.throughput > best->throughput ||
         (b.throughput == best->throughput && b.point < best->point)))
      best = &b;
  }
  out << briefs.size() << " of " << points.size() << " points: " << counts[0] << " fit, "
      << counts[1] << " out of memory, " << counts[2] << " invalid\n";
  if (!best) {
    out << "no point fits\n";
    return;
  }
  const Point* bp = nullptr;
  for (const auto& p : points)
    if (p.index == best->point) bp = &p;
  if (!bp) return;
  out << "fastest that fits (highest throughput): point " << best->point << ", " << best->throughput
      << (best->tokens ? " tokens/s" : " samples/s") << ", step " << best->step_time_s << " s, peak " << core::format_bytes(core::Bytes{best->peak_bytes}) << "\n  ";
  for (const auto& s : point_sets(spec, *bp)) out << " --set " << s;
  out << "\nwhere OOM begins (other axes as in the fastest point):\n";
  for (const auto& dim : spec.dims) {
    const Axis& a = spec.axes[dim[0]];
    // Points that match the best on every other dimension, by this dimension's value index.
    std::map<std::size_t, Status> along;
    for (const auto& p : points) {
      bool same = true;
      for (const auto& other : spec.dims)
        if (other != dim && p.choice[other[0]] != bp->choice[other[0]]) same = false;
      auto it = by_point.find(p.index);
      if (same && it != by_point.end()) along[p.choice[dim[0]]] = it->second->status;
    }
    std::string name = a.key;
    for (std::size_t k = 1; k < dim.size(); ++k) name += " + " + spec.axes[dim[k]].key;
    std::string first_oom, last_fit;
    for (std::size_t v : value_order(a)) {
      auto it = along.find(v);
      if (it == along.end()) continue;
      if (it->second == Status::oom && first_oom.empty()) first_oom = a.values[v];
      if (it->second == Status::fits && first_oom.empty()) last_fit = a.values[v];
    }
    out << "  " << name << ": ";
    if (first_oom.empty()) out << "no value OOMs in the grid";
    else out << "OOM from " << first_oom << (last_fit.empty() ? " (the smallest value tried)" : " (largest below it that fits: " + last_fit + ")");
    out << "\n";
  }
}

}  // namespace trainsim::sweep
