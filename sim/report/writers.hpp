#pragma once
// Report writers: format a Summary, compute nothing.
#include <ostream>

#include "sim/report/summary.hpp"

namespace trainsim::report {

// JSON keys are a public contract (docs/report.md); extend, never rename. `pretty` false writes
// the same document on one line without a trailing newline (a JSON Lines record).
void write_json(std::ostream& out, const Summary& r, bool pretty = true);

struct TextOptions {
  bool color = false;  // ANSI colour (only when writing to a terminal)
};
void write_text(std::ostream& out, const Summary& r, const TextOptions& opt = {});

}  // namespace trainsim::report
