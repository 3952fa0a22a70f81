#include "sim/report/svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace trainsim::report {

using hw::MemCategory;

namespace {


// Bottom to top: what stays all step first, what comes and goes on top.
constexpr std::array<MemCategory, hw::kMemCategories> kStack = {
    MemCategory::reserved,  MemCategory::weights, MemCategory::optimizer_states,
    MemCategory::gradients, MemCategory::buffers, MemCategory::activations, MemCategory::allocator_cache};
const char* colour(MemCategory c) {
  switch (c) {
    case MemCategory::weights:
      return "#4e79a7";
    case MemCategory::gradients:
      return "#59a14f";
    case MemCategory::optimizer_states:
      return "#b07aa1";
    case MemCategory::activations:
      return "#f28e2b";
    case MemCategory::buffers:
      return "#76b7b2";
    case MemCategory::reserved:
      return "#bab0ac";
    case MemCategory::allocator_cache:
      return "#e15759";
  }
  return "#999999";
}

// Decimals enough to tell ticks `step` apart.
std::string tick_label(double v, double step) {
  const int decimals = step >= 1 ? 0 : step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3;
  char f[8];
  std::snprintf(f, sizeof f, "%%.%df", decimals);
  return core::format_number(f, v);
}

struct TimeAxis {
  double scale;  // seconds -> unit
  const char* unit;
};
TimeAxis time_axis(double step_s) {
  if (step_s >= 2) return {1, "s"};
  if (step_s >= 2e-3) return {1e3, "ms"};
  return {1e6, "us"};
}

struct Frame {
  double x, y, w, h;  // plot area in pixels
  double t_end_s, y_max_gib;
  double px(double t_s) const { return x + w * t_s / t_end_s; }
  double py(double gib) const { return y + h - h * gib / y_max_gib; }
};

void axes(std::ostream& out, const Frame& f, const TimeAxis& ta) {
  out << "<rect x=\"" << core::format_number("%.1f", f.x) << "\" y=\"" << core::format_number("%.1f", f.y) << "\" width=\""
      << core::format_number("%.1f", f.w) << "\" height=\"" << core::format_number("%.1f", f.h)
      << "\" fill=\"none\" stroke=\"#888\" stroke-width=\"0.5\"/>\n";
  const double ys = nice_step(f.y_max_gib, 5);
  for (double v = 0; v <= f.y_max_gib * (1 + 1e-9); v += ys) {
    const double y = f.py(v);
    out << "<line x1=\"" << core::format_number("%.1f", f.x) << "\" x2=\"" << core::format_number("%.1f", f.x + f.w) << "\" y1=\""
        << core::format_number("%.1f", y) << "\" y2=\"" << core::format_number("%.1f", y)
        << "\" stroke=\"#ddd\" stroke-width=\"0.5\"/>"
        << "<text x=\"" << core::format_number("%.1f", f.x - 4) << "\" y=\"" << core::format_number("%.1f", y + 3.5)
        << "\" text-anchor=\"end\">" << tick_label(v, ys) << "</text>\n";
  }
  out << "<text x=\"" << core::format_number("%.1f", f.x - 4) << "\" y=\"" << core::format_number("%.1f", f.y - 4)
      << "\" text-anchor=\"end\" fill=\"#555\">GiB</text>\n";
  const double span = f.t_end_s * ta.scale;
  const double xs = nice_step(span, 8);
  for (double v = 0; v <= span * (1 + 1e-9); v += xs) {
    const double x = f.px(v / ta.scale);
    out << "<line x1=\"" << core::format_number("%.1f", x) << "\" x2=\"" << core::format_number("%.1f", x) << "\" y1=\""
        << core::format_number("%.1f", f.y + f.h) << "\" y2=\"" << core::format_number("%.1f", f.y + f.h + 3)
        << "\" stroke=\"#888\"/><text x=\"" << core::format_number("%.1f", x) << "\" y=\""
        << core::format_number("%.1f", f.y + f.h + 14) << "\" text-anchor=\"middle\">" << tick_label(v, xs)
        << "</text>\n";
  }
  out << "<text x=\"" << core::format_number("%.1f", f.x + f.w) << "\" y=\"" << core::format_number("%.1f", f.y + f.h + 26)
      << "\" text-anchor=\"end\" fill=\"#555\">time (" << ta.unit << ")</text>\n";
}

// Stacked step areas: each category is drawn as the area from zero up to its cumulative top,
// top-most first, so the categories below paint over it; each path then needs only its top edge
// (H/V steps, a V only where the height changes).
void areas(std::ostream& out, const Frame& f, const std::vector<hw::MemBreakdown>& buckets) {
  const int n = static_cast<int>(buckets.size());
  const double bw = f.w / n;
  std::vector<std::vector<double>> top;  // per drawn category, cumulative GiB per bucket
  std::vector<MemCategory> drawn;
  std::vector<double> below(static_cast<std::size_t>(n), 0.0);
  for (MemCategory c : kStack) {
    bool any = false;
    for (const auto& b : buckets) any = any || b[c].value > 0;
    if (!any) continue;
    for (int b = 0; b < n; ++b) below[b] += core::to_gib(buckets[b][c]);
    top.push_back(below);
    drawn.push_back(c);
  }
  const std::string base = core::format_number("%.1f", f.py(0));
  for (std::size_t k = drawn.size(); k-- > 0;) {
    out << "<path class=\"area " << hw::to_string(drawn[k]) << "\" fill=\"" << colour(drawn[k])
        << "\" d=\"M" << core::format_number("%.1f", f.x) << ',' << base;
    std::string y_prev = base;
    for (int b = 0; b < n; ++b) {
      const std::string y = core::format_number("%.1f", f.py(top[k][b]));
      if (y != y_prev) out << 'H' << core::format_number("%.1f", f.x + b * bw) << 'V' << y;
      y_prev = y;
    }
    out << 'H' << core::format_number("%.1f", f.x + f.w) << 'V' << base << "Z\"/>\n";
  }
}

}  // namespace

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

double nice_step(double span, int max_ticks) {
  if (!(span > 0) || max_ticks < 1) return 1;
  const double raw = span / max_ticks;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (;; mag *= 10)
    for (double m : {1.0, 2.0, 2.5, 5.0})
      if (m * mag >= raw * (1 - 1e-12)) return m * mag;
}

std::vector<std::size_t> plotted_panels(const std::vector<MemorySeries>& series,
                                        std::size_t max_panels) {
  std::vector<std::size_t> all(series.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  if (series.size() <= max_panels) return all;
  const std::size_t want = std::max<std::size_t>(2, max_panels / 2);
  std::vector<std::size_t> pick{0, series.size() - 1};
  std::stable_sort(all.begin(), all.end(),
                   [&](std::size_t a, std::size_t b) { return series[a].peak > series[b].peak; });
  for (std::size_t i : all) {
    if (pick.size() >= want) break;
    if (i != 0 && i != series.size() - 1) pick.push_back(i);
  }
  std::sort(pick.begin(), pick.end());
  return pick;
}

std::vector<hw::MemBreakdown> downsample_max(const MemorySeries& s, core::TimePoint end,
                                             int buckets) {
  std::vector<hw::MemBreakdown> out(static_cast<std::size_t>(std::max(buckets, 1)));
  const std::int64_t span = std::max<std::int64_t>(end.ns, 1);
  const auto n = static_cast<std::int64_t>(out.size());
  std::size_t k = 0;
  hw::MemBreakdown cur{};
  for (std::int64_t b = 0; b < n; ++b) {
    // Slice b is [span * b / n, span * (b + 1) / n); the last one takes everything after.
    const std::int64_t t1 =
        b + 1 == n ? INT64_MAX
                   : static_cast<std::int64_t>(static_cast<double>(span) *
                                               static_cast<double>(b + 1) / static_cast<double>(n));
    hw::MemBreakdown best = cur;
    while (k < s.samples.size() && s.samples[k].time.ns < t1) {
      cur = s.samples[k++].in_use;
      if (cur.total() > best.total()) best = cur;
    }
    out[static_cast<std::size_t>(b)] = best;
  }
  return out;
}

void write_memory_svg(std::ostream& out, const Summary& r, const std::vector<MemorySeries>& series,
                      const PlotOptions& opt) {
  const std::vector<std::size_t> panels = plotted_panels(series, opt.max_panels);
  const int cols = panels.size() <= 4 ? 1 : 2;
  const int rows = static_cast<int>((panels.size() + cols - 1) / cols);
  const double col_w = static_cast<double>(opt.width) / cols;
  const double plot_h = cols == 1 ? 140 : 110, panel_h = 24 + plot_h + 34;
  const bool truncated = panels.size() < series.size();
  const double header_h = truncated ? 70 : 54;
  const double height = header_h + rows * panel_h + 4;
  const double end_s = r.step_time_s > 0 ? r.step_time_s : 1e-9;
  const auto end = core::TimePoint{std::max<std::int64_t>(std::llround(r.step_time_s * 1e9), 1)};
  double y_max = 0;
  for (std::size_t p : panels)
    y_max = std::max({y_max, core::to_gib(series[p].peak), core::to_gib(series[p].capacity)});
  y_max = y_max > 0 ? y_max * 1.08 : 1;
  const TimeAxis ta = time_axis(end_s);

  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"memory-plot\" width=\"" << opt.width
      << "\" height=\"" << core::format_number("%.0f", height) << "\" viewBox=\"0 0 " << opt.width << ' '
      << core::format_number("%.0f", height) << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<title>Memory over the step: " << xml_escape(r.name) << "</title>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
      << "<text x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"bold\">Memory per device over the "
         "step: "
      << xml_escape(r.name) << "</text>\n";
  double lx = 8;
  for (auto it = kStack.rbegin(); it != kStack.rend(); ++it) {
    const std::string name(hw::to_string(*it));
    out << "<rect class=\"legend\" x=\"" << core::format_number("%.0f", lx)
        << "\" y=\"32\" width=\"12\" height=\"12\" fill=\"" << colour(*it) << "\"/><text x=\""
        << core::format_number("%.0f", lx + 16) << "\" y=\"42\">" << name << "</text>\n";
    lx += 30 + 6.2 * static_cast<double>(name.size());
  }
  out << "<line x1=\"" << core::format_number("%.0f", lx) << "\" x2=\"" << core::format_number("%.0f", lx + 24)
      << "\" y1=\"38\" y2=\"38\" stroke=\"#d62728\" stroke-width=\"2\" stroke-dasharray=\"6 "
         "4\"/><text x=\""
      << core::format_number("%.0f", lx + 28) << "\" y=\"42\">capacity</text>\n<text x=\"" << core::format_number("%.0f", lx + 92)
      << "\" y=\"42\" fill=\"#d62728\" font-weight=\"bold\">| OOM point</text>\n";
  if (truncated)
    out << "<text class=\"note\" x=\"8\" y=\"60\" fill=\"#555\">showing " << panels.size() << " of "
        << series.size() << " stages: the first, the last and the " << panels.size() - 2
        << " fullest</text>\n";

  for (std::size_t k = 0; k < panels.size(); ++k) {
    const std::size_t p = panels[k];
    const MemorySeries& s = series[p];
    const DeviceSummary* d = p < r.devices.size() ? &r.devices[p] : nullptr;
    const double px0 = static_cast<double>(k % static_cast<std::size_t>(cols)) * col_w;
    const double py0 = header_h + static_cast<double>(k / static_cast<std::size_t>(cols)) * panel_h;
    const Frame f{px0 + 56, py0 + 24, col_w - 56 - 16, plot_h, end_s, y_max};
    const std::int64_t count = d ? d->count : 1;
    const std::int32_t stage = d ? d->stage : s.program;
    const bool fits = s.peak <= s.capacity;
    out << "<g class=\"panel\" data-stage=\"" << stage << "\">\n<text x=\"" << core::format_number("%.1f", f.x)
        << "\" y=\"" << core::format_number("%.1f", py0 + 16) << "\" font-weight=\"bold\">stage " << stage << " (x "
        << count << (count == 1 ? " device" : " devices") << "): peak "
        << core::format_number("%.2f", core::to_gib(s.peak)) << " of " << core::format_number("%.2f", core::to_gib(s.capacity))
        << " GiB" << (fits ? "" : " <tspan fill=\"#d62728\">OUT OF MEMORY</tspan>") << "</text>\n";
    axes(out, f, ta);  // grid under the areas
    areas(out, f, downsample_max(s, end, std::max(1, static_cast<int>(f.w / 2))));  // 2 px buckets
    const double cy = f.py(core::to_gib(s.capacity));
    out << "<line class=\"capacity\" x1=\"" << core::format_number("%.1f", f.x) << "\" x2=\""
        << core::format_number("%.1f", f.x + f.w) << "\" y1=\"" << core::format_number("%.1f", cy) << "\" y2=\"" << core::format_number("%.1f", cy)
        << "\" stroke=\"#d62728\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n";
    // OOM points: one mark per pixel column, at most 40 per panel.
    std::vector<long> marked;
    for (const OomSummary& o : r.ooms) {
      if (o.device != static_cast<std::int32_t>(p) || marked.size() >= 40) continue;
      const double x = f.px(std::min(o.time_s, end_s));
      if (std::find(marked.begin(), marked.end(), std::lround(x)) != marked.end()) continue;
      marked.push_back(std::lround(x));
      out << "<g class=\"oom\"><line x1=\"" << core::format_number("%.1f", x) << "\" x2=\"" << core::format_number("%.1f", x)
          << "\" y1=\"" << core::format_number("%.1f", f.y) << "\" y2=\"" << core::format_number("%.1f", f.y + f.h)
          << "\" stroke=\"#d62728\" stroke-width=\"1.5\"/><text x=\"" << core::format_number("%.1f", x + 3)
          << "\" y=\"" << core::format_number("%.1f", f.y + 11)
          << "\" fill=\"#d62728\" font-weight=\"bold\">OOM</text><title>"
          << xml_escape(o.op + (o.layer.empty() ? "" : " of " + o.layer)) << " asked "
          << core::format_number("%.2f GiB", core::to_gib(o.requested)) << "</title></g>\n";
    }
    out << "</g>\n";
  }
  out << "</svg>\n";
}

}  // namespace trainsim::report
