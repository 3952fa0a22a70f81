#pragma once
// Report writers: format a Summary, compute nothing.
#include <ostream>

#include "sim/report/json_writer.hpp"
#include "sim/report/summary.hpp"

namespace trainsim::report {

// JSON keys are a public contract (docs/report.md); extend, never rename. `pretty` false writes
// the same document on one line without a trailing newline (a JSON Lines record).
void write_json(std::ostream& out, const Summary& r, bool pretty = true);
// The `diagnosis` object (also printed alone by `trainsim diagnose --format json`).
void write_diagnosis_json(JsonWriter& j, const Diagnosis& d);
// The document of `trainsim diagnose --format json`: name, fits and the diagnosis (when any).
void write_diagnose_json(std::ostream& out, const Summary& r);

struct TextOptions {
  bool color = false;  // ANSI colour (only when writing to a terminal)
};
void write_text(std::ostream& out, const Summary& r, const TextOptions& opt = {});
void write_diagnosis_text(std::ostream& out, const Diagnosis& d, const TextOptions& opt = {});

}  // namespace trainsim::report
