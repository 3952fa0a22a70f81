#include "sim/sweep/digest.hpp"

#include <algorithm>
#include <map>

#include "sim/core/units.hpp"
#include "sim/report/command_line.hpp"

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

std::string join(const std::vector<AxisStatus>& along, bool oom) {
  std::string s;
  for (const auto& a : along)
    if (a.oom == oom) s += (s.empty() ? "" : ", ") + a.value;
  return s;
}

}  // namespace

std::string oom_boundary(const std::vector<AxisStatus>& along) {
  std::size_t changes = 0;
  for (std::size_t i = 1; i < along.size(); ++i) changes += along[i].oom != along[i - 1].oom;
  const auto first_oom = std::find_if(along.begin(), along.end(), [](const AxisStatus& a) { return a.oom; });
  if (first_oom == along.end()) return "no value OOMs in the grid";
  if (changes == 0) return "OOM from " + along.front().value + " (the smallest value tried; every value OOMs)";
  if (changes == 1 && !along.front().oom)
    return "OOM from " + first_oom->value + " (largest below it that fits: " + std::prev(first_oom)->value + ")";
  if (changes == 1) {
    const auto first_fit = std::find_if(along.begin(), along.end(), [](const AxisStatus& a) { return !a.oom; });
    return "OOM up to " + std::prev(first_fit)->value + " (fits from " + first_fit->value + ")";
  }
  return "not monotone: OOM at " + join(along, true) + "; fits at " + join(along, false);
}

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
  // A base scenario of its own file reproduces as a pasteable `run` command; one written inside
  // the sweep file has no file `run` could take, so only its overrides are listed.
  if (spec.base.subkey.empty()) out << report::run_command(spec.base.path, point_sets(spec, *bp));
  else
    for (const auto& s : point_sets(spec, *bp)) out << " --set " << report::shell_quote(s);
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
    std::vector<AxisStatus> statuses;
    for (std::size_t v : value_order(a)) {
      auto it = along.find(v);
      if (it != along.end() && it->second != Status::invalid)
        statuses.push_back({a.values[v], it->second == Status::oom});
    }
    out << "  " << name << ": " << oom_boundary(statuses);
    out << "\n";
  }
}

}  // namespace trainsim::sweep
