#pragma once
// Report writers: format a Summary, compute nothing.
#include <ostream>

#include "sim/report/summary.hpp"

namespace trainsim::report {

// JSON keys are a public contract (docs/report.md); extend, never rename.
void write_json(std::ostream& out, const Summary& r);

struct TextOptions {
  bool color = false;  // ANSI colour (only when writing to a terminal)
};
void write_text(std::ostream& out, const Summary& r, const TextOptions& opt = {});

}  // namespace trainsim::report
