#include "sim/report/html.hpp"

#include <cstdio>
#include <sstream>
#include <string>

#include "sim/report/writers.hpp"

namespace trainsim::report {

namespace {

std::string gib(core::Bytes b) {
  return core::format_number("%.2f GiB", core::to_gib(b));
}
std::string seconds(double s) {
  if (s >= 1) return core::format_number("%.3f s", s);
  if (s >= 1e-3) return core::format_number("%.2f ms", s * 1e3);
  return core::format_number("%.1f us", s * 1e6);
}
std::string pct(double v) {
  return core::format_number("%.1f%%", 100 * v);
}

constexpr const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{margin:0 0 6px 0;font-size:26px}h2{font-size:18px;margin:28px 0 8px 0;border-bottom:1px solid #ddd}
.verdict{padding:12px 16px;border-radius:6px;border-left:8px solid}
.verdict.fits{background:#eef8ee;border-color:#2ca02c}.verdict.fits h1{color:#1e7b1e}
.verdict.oom{background:#fdeeee;border-color:#d62728}.verdict.oom h1{color:#b01c1d}
pre{white-space:pre-wrap;margin:0;font-size:13px}
p{font-size:14px}.wide{overflow-x:auto}
table{border-collapse:collapse;font-size:13px}td,th{padding:3px 6px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{background:#f5f5f5}td.l,th.l{text-align:left}td.wrap{white-space:normal}td.no{color:#b01c1d;font-weight:bold}
.muted{color:#666}svg{max-width:100%;height:auto}
)";

void row(std::ostream& out, const std::string& key, const std::string& value) {
  out << "<tr><th class=\"l\">" << xml_escape(key) << "</th><td class=\"l\">" << xml_escape(value)
      << "</td></tr>\n";
}

void summary_table(std::ostream& out, const Summary& r) {
  out << "<section id=\"summary\"><h2>Summary</h2><table>\n";
  row(out, "Scenario", r.name + (r.file.empty() ? "" : "  (" + r.file + ")"));
  row(out, "Model", r.model_name + "  " + std::to_string(r.parameters) + " parameters");
  std::string par = std::to_string(r.devices_total) + " x " + device_kinds(r) + "   data " +
                    std::to_string(r.parallel.data) + " x tensor " +
                    std::to_string(r.parallel.tensor) + " x pipeline " +
                    std::to_string(r.parallel.pipeline);
  if (r.parallel.context > 1)
    par += " x context " + std::to_string(r.parallel.context) + " (" +
           std::string(scenario::to_string(r.parallel.context_attention)) + ")";
  if (r.parallel.zero > 0) par += "   ZeRO-" + std::to_string(r.parallel.zero);
  if (r.parallel.pipeline > 1)
    par += "   schedule " + std::string(scenario::to_string(r.parallel.schedule));
  row(out, "Devices", par);
  std::string tr = "micro-batch " + std::to_string(r.training.micro_batch) + " x accumulation " +
                   std::to_string(r.training.gradient_accumulation) + " x data " +
                   std::to_string(r.parallel.data) + " = global batch " +
                   std::to_string(r.training.global_batch);
  if (r.sequence_model) tr += ", seq " + std::to_string(r.training.seq_len);
  tr += ", " + std::string(scenario::to_string(r.training.precision)) + ", " +
        std::string(scenario::to_string(r.training.optimizer));
  if (r.training.recompute != scenario::Recompute::none)
    tr += ", recompute " + std::string(scenario::to_string(r.training.recompute));
  if (r.training.flash_attention) tr += ", flash attention";
  row(out, "Training", tr);
  row(out, "Step time",
      seconds(r.step_time_s) + (r.fits ? "" : "  (timing assumes the memory were there)"));
  row(out, "Throughput",
      core::format_number("%.1f samples/s", r.samples_per_s) +
          (r.sequence_model ? core::format_number("   %.0f tokens/s", r.tokens_per_s) : ""));
  row(out, "MFU", pct(r.mfu) + (r.hfu > r.mfu * 1.0001 ? "   HFU " + pct(r.hfu) : ""));
  if (r.parallel.pipeline > 1) row(out, "Pipeline bubble", pct(r.bubble_fraction));
  row(out, "Peak memory", core::format_bytes(r.peak) + " on the fullest device");
  out << "</table></section>\n";
}

void stage_table(std::ostream& out, const Summary& r) {
  out << "<section id=\"stages\"><h2>Memory at peak, per device</h2><div "
         "class=\"wide\"><table>\n<tr><th class=\"l\">stage</th>"
         "<th>devices</th><th class=\"l\">layers</th>";
  for (std::size_t c = 0; c < hw::kMemCategories; ++c)
    out << "<th>"
        << (c == static_cast<std::size_t>(hw::MemCategory::optimizer_states)
                ? "optimizer"
                : hw::to_string(static_cast<hw::MemCategory>(c)))
        << "</th>";
  out << "<th>peak</th><th>capacity</th><th>model states</th><th>fits</th></tr>\n";
  for (const DeviceSummary& d : r.devices) {
    const char* mark = d.fits ? "" : " class=\"no\"";
    out << "<tr><td class=\"l\">" << d.stage << "</td><td>" << d.count << "</td><td class=\"l\">"
        << xml_escape(d.layers) << "</td>";
    for (std::size_t c = 0; c < hw::kMemCategories; ++c)
      out << "<td>" << gib(d.peak_breakdown.bytes[c]) << "</td>";
    out << "<td" << mark << ">" << gib(d.peak) << "</td><td>" << gib(d.capacity) << "</td><td>"
        << gib(d.model_states.total()) << "</td><td" << mark << ">" << (d.fits ? "yes" : "NO")
        << "</td></tr>\n";
  }
  out << "</table></div><p class=\"muted\">GiB = 2<sup>30</sup> bytes. Peak: "
      << xml_escape(core::format_bytes(r.peak)) << ".</p></section>\n";
}

void oom_table(std::ostream& out, const Summary& r) {
  out << "<section id=\"ooms\"><h2>Out-of-memory points</h2>\n";
  if (r.ooms.empty()) {
    out << "<p>None: every device fits.</p></section>\n";
    return;
  }
  out << "<p class=\"muted\">"
      << (r.all_ooms ? "Memory unbounded, every point." : "The first point per device.")
      << "</p><table>\n<tr><th class=\"l\">stage</th><th>time</th><th class=\"l\">op</th><th "
         "class=\"l\">layer</th>"
         "<th>micro-batch</th><th class=\"l\">category</th><th>requested</th><th>in "
         "use</th><th>capacity</th>"
         "<th class=\"l\">cause</th></tr>\n";
  for (const OomSummary& o : r.ooms)
    out << "<tr><td class=\"l\">" << o.device << "</td><td>" << seconds(o.time_s)
        << "</td><td class=\"l\">" << xml_escape(o.op) << "</td><td class=\"l\">"
        << xml_escape(o.layer) << "</td><td>"
        << (o.microbatch >= 0 ? std::to_string(o.microbatch) : "") << "</td><td class=\"l\">"
        << xml_escape(o.category) << "</td><td>" << gib(o.requested) << "</td><td>" << gib(o.in_use)
        << "</td><td>" << gib(o.capacity) << "</td><td class=\"l\">" << xml_escape(o.cause)
        << "</td></tr>\n";
  out << "</table>";
  if (r.ooms_dropped > 0) out << "<p>... and " << r.ooms_dropped << " more.</p>";
  out << "</section>\n";
}

// What went wrong and the remedies that were re-simulated to fit (sim/diagnose).
void diagnosis_section(std::ostream& out, const Diagnosis& d) {
  out << "<section id=\"diagnosis\"><h2>Diagnosis: "
      << xml_escape(diagnosis_title(d.kind)) << "</h2>\n<p>"
      << xml_escape(d.summary) << "</p>\n";
  if (!d.data_parallel_note.empty()) out << "<p>" << xml_escape(d.data_parallel_note) << "</p>\n";
  if (d.remedies.empty()) {
    out << "<p>None of the " << d.tried << " remedies tried fits.</p></section>\n";
    return;
  }
  out << "<p class=\"muted\">Remedies that fit, each re-simulated; fastest first (" << d.tried
      << " tried).</p><div class=\"wide\"><table>\n<tr><th>#</th><th "
         "class=\"l\">remedy</th><th>step</th>"
         "<th>peak</th><th>devices</th><th class=\"l\">command</th></tr>\n";
  for (std::size_t i = 0; i < d.remedies.size(); ++i) {
    const Remedy& m = d.remedies[i];
    out << "<tr><td>" << i + 1 << "</td><td class=\"l\">" << xml_escape(m.description)
        << (m.changes_workload ? " <em>(changes the workload)</em>" : "") << "</td><td>"
        << seconds(m.step_time_s) << "</td><td>" << gib(m.peak) << "</td><td>" << m.devices_total
        << "</td><td class=\"l wrap\"><code>" << xml_escape(m.command) << "</code></td></tr>\n";
  }
  out << "</table></div></section>\n";
}

void comm_table(std::ostream& out, const Summary& r) {
  out << "<section id=\"comm\"><h2>Communication per device</h2>\n";
  if (r.comm.empty()) {
    out << "<p>No communication.</p></section>\n";
    return;
  }
  out << "<table><tr><th class=\"l\">kind</th><th>time</th><th>exposed</th></tr>\n";
  for (const CommSummary& c : r.comm)
    out << "<tr><td class=\"l\">" << xml_escape(c.kind) << "</td><td>" << seconds(c.time_s)
        << "</td><td>" << seconds(c.exposed_s) << "</td></tr>\n";
  out << "</table><p class=\"muted\">Exposed: the part compute did not hide.</p></section>\n";
}

}  // namespace

void write_html(std::ostream& out, const Summary& r, const std::vector<MemorySeries>& series,
                const PlotOptions& plot) {
  std::ostringstream text;
  write_text(text, r);
  const std::string full = text.str();
  // The verdict paragraph is the text report's first one, so both always agree.
  const std::size_t blank = full.find("\n\n");
  std::string verdict = full.substr(0, blank == std::string::npos ? full.size() : blank);
  // The heading says FITS / OUT OF MEMORY; the paragraph goes on from there.
  for (const std::string word : {"FITS", "OUT OF MEMORY"})
    if (verdict.starts_with(word)) {
      const std::size_t rest = verdict.find_first_not_of(' ', word.size());
      verdict = rest == std::string::npos ? "" : verdict.substr(rest);
    }
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
      << "<title>trainsim: " << xml_escape(r.name) << "</title>\n<style>" << kStyle
      << "</style>\n</head>\n<body>\n"
      << "<header id=\"verdict\" class=\"verdict " << (r.fits ? "fits" : "oom") << "\"><h1>"
      << (r.fits ? "FITS" : "OUT OF MEMORY") << "</h1><pre>" << xml_escape(verdict)
      << "</pre></header>\n";
  summary_table(out, r);
  out << "<section id=\"memory-plot\"><h2>Memory over the step</h2>\n";
  write_memory_svg(out, r, series, plot);
  out << "</section>\n";
  if (r.diagnosis) diagnosis_section(out, *r.diagnosis);
  stage_table(out, r);
  oom_table(out, r);
  comm_table(out, r);
  out << "<details><summary>Text report</summary><pre>" << xml_escape(full)
      << "</pre></details>\n<footer class=\"muted\"><p>Generated by "
         "trainsim.</p></footer>\n</body>\n</html>\n";
}

}  // namespace trainsim::report
