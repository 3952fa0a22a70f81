#pragma once
// One self-contained HTML report: the verdict, the summary, the per-stage memory table, the OOM
// points, the communication table and the memory plot as inline SVG. No network: inline CSS,
// no scripts, no external fonts or images. Every user string is escaped.
#include <ostream>
#include <vector>

#include "sim/report/memory_series.hpp"
#include "sim/report/summary.hpp"
#include "sim/report/svg.hpp"

namespace trainsim::report {

// `series[i]` belongs to `r.devices[i]` (memory_series of the same plan and timeline).
void write_html(std::ostream& out, const Summary& r, const std::vector<MemorySeries>& series,
                const PlotOptions& plot = {});

}  // namespace trainsim::report
