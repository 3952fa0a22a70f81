#include <unistd.h>
#include <iostream>
#include <optional>

#include <boost/program_options.hpp>

#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"
#include "sim/diagnose/diagnose.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/html.hpp"
#include "sim/report/memory_series.hpp"
#include "sim/report/svg.hpp"
#include "sim/report/trace.hpp"
#include "sim/report/writers.hpp"
#include "sim/scenario/scenario.hpp"
#include "tools/commands.hpp"
#include "tools/progress.hpp"

namespace po = boost::program_options;

namespace trainsim::tools {

int cmd_run(const std::vector<std::string>& args, bool validate_only, bool diagnose_only) {
  const char* name = validate_only ? "validate" : (diagnose_only ? "diagnose" : "run");
  po::options_description opts(std::string("trainsim ") + name + " SCENARIO [options]");
  std::string format = "text";
  std::vector<std::string> sets;
  opts.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(),
      "override a scenario key: key.path=value (repeatable), e.g. --set training.micro_batch=4");
  if (!validate_only)
    opts.add_options()("quiet,q", "no progress of the remedies' simulations on standard error (drawn only on a terminal anyway)");
  if (diagnose_only)
    opts.add_options()("format", po::value<std::string>(&format)->default_value("text"),
                       "diagnosis format: text | json");
  if (!validate_only && !diagnose_only)
    opts.add_options()("format", po::value<std::string>(&format)->default_value("text"),
                       "report format: text | json")(
        "no-diagnosis", "do not re-simulate remedies when the step does not fit")(
        "all-ooms", "play on with unbounded memory and list every point that exceeds capacity")(
        "output,o", po::value<std::string>(), "write the report to this file instead of stdout")(
        "trace", po::value<std::string>(),
        "also write a Chrome trace-event JSON of the step (open in ui.perfetto.dev or chrome://tracing)")(
        "plot", po::value<std::string>(), "also write an SVG plot of memory over the step per stage")(
        "html", po::value<std::string>(), "also write a self-contained HTML report with the memory plot");
  po::variables_map vm = parse_command(args, opts, "scenario");
  po::notify(vm);
  if (vm.count("help")) {
    // validate never plays the step, so it never answers 3.
    std::cout << opts
              << (validate_only ? "\nexit codes: 0 valid, 2 bad input or usage, 5 resources exhausted, 1 "
                                  "internal error\n"
                                : "\nexit codes: 0 fits, 3 out of memory, 2 bad input or usage, 5 "
                                  "resources exhausted, 1 internal error\n");
    return kExitFits;
  }
  if (!vm.count("scenario")) throw po::error("missing SCENARIO file");
  if (format != "text" && format != "json")
    throw po::error("--format must be text or json, got '" + format + "'");

  const scenario::Scenario s = scenario::load_scenario(vm["scenario"].as<std::string>(), sets);
  if (validate_only) {
    // The op limit is checked on the plan itself (parallel::lower): valid means a plain `run`
    // would play it (a trace's expanded plan holds more ops).
    (void)parallel::lower(s, {.compress = true});
    std::cout << "ok: " << s.name << " — " << s.model.name << " (" << s.model.parameters()
              << " parameters) on " << s.parallel.devices() << " x " << s.device.name << "\n";
    return kExitFits;
  }
  // Traces and memory plots show every op; otherwise the compressed plan gives the same report.
  const bool visuals = vm.count("trace") || vm.count("plot") || vm.count("html");
  const parallel::Plan plan = parallel::lower(s, {.compress = !visuals});
  exec::PlayOptions play_opts;
  play_opts.all_ooms = vm.count("all-ooms") > 0;
  const exec::Timeline tl = exec::play(plan, play_opts);
  report::Summary summary = report::summarize(s, plan, tl, play_opts.all_ooms);
  if (!summary.fits && !vm.count("no-diagnosis")) {
    Progress progress("simulations", 0, progress_wanted(vm.count("quiet") > 0));
    diagnose::Options options;
    options.on_progress = progress.callback();
    summary.diagnosis = diagnose::diagnose(vm["scenario"].as<std::string>(), sets, s, summary, options);
  }
  if (diagnose_only) {
    if (format == "json") {
      report::write_diagnose_json(std::cout, summary);
    } else if (!summary.diagnosis) {
      std::cout << "fits: peak " << core::format_bytes(summary.peak) << "; nothing to diagnose\n";
    } else {
      report::TextOptions t;
      t.color = isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
      report::write_diagnosis_text(std::cout, *summary.diagnosis, t);
    }
    return summary.fits ? kExitFits : kExitOom;
  }

  // Visual outputs (docs/report-visuals.md), written before the report.
  if (visuals) {
    const std::vector<report::MemorySeries> series = report::memory_series(plan, tl);
    auto write = [&](const char* option, auto&& writer) {
      if (!vm.count(option)) return;
      core::OutputFile f(vm[option].as<std::string>(), std::string("--") + option);
      writer(f.stream());
      f.close();
    };
    write("trace", [&](std::ostream& f) { report::write_trace(f, s, plan, tl, series); });
    write("plot", [&](std::ostream& f) { report::write_memory_svg(f, summary, series); });
    write("html", [&](std::ostream& f) { report::write_html(f, summary, series); });
  }

  std::optional<core::OutputFile> file;
  const bool to_file = vm.count("output") > 0;
  if (to_file) file.emplace(vm["output"].as<std::string>(), "--output", std::ios::trunc);
  std::ostream& out = to_file ? file->stream() : std::cout;
  if (format == "json") {
    report::write_json(out, summary);
  } else {
    report::TextOptions t;
    t.color = !to_file && isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
    report::write_text(out, summary, t);
  }
  if (file) file->close();  // (standard output is checked in main)
  return summary.fits ? kExitFits : kExitOom;
}

}  // namespace trainsim::tools
