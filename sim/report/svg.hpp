#pragma once
// A hand-written SVG plot of memory over the step: one small-multiple panel per device role,
// stacked areas by category, the capacity as a red dashed line and the OOM points marked.
// Formats a Summary and the memory series; computes only the drawing.
#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/report/memory_series.hpp"
#include "sim/report/summary.hpp"

namespace trainsim::report {

struct PlotOptions {
  int width = 960;              // pixels of the whole figure
  std::size_t max_panels = 16;  // beyond this: the first, last and fullest stages only
};

// Writes one <svg> element (standalone file or inline in HTML). `series[i]` belongs to
// `r.devices[i]`.
void write_memory_svg(std::ostream& out, const Summary& r, const std::vector<MemorySeries>& series,
                      const PlotOptions& opt = {});

// Escapes &, <, >, " and ' for XML/HTML text and attribute values.
std::string xml_escape(std::string_view s);

// A tick step of 1, 2, 2.5 or 5 x 10^k giving at most `max_ticks` steps over `span` (> 0).
double nice_step(double span, int max_ticks);

// Indices of the device roles to draw: all when at most `max_panels`, else the first, the last
// and the fullest (highest peak) to make max_panels / 2, in index order.
std::vector<std::size_t> plotted_panels(const std::vector<MemorySeries>& series,
                                        std::size_t max_panels);

// The series resampled to `buckets` equal slices of [0, end): each slice holds the largest
// (by total) state in use at any time inside it, so peaks survive downsampling.
std::vector<hw::MemBreakdown> downsample_max(const MemorySeries& s, core::TimePoint end,
                                             int buckets);

}  // namespace trainsim::report
