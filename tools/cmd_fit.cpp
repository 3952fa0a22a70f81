// `trainsim fit SCENARIO --find KEY`: the largest value of KEY that fits (exponential then binary
// search, assuming memory grows with KEY); exit 0 found, 3 even the smallest OOMs, 2 bad input.
#include <iostream>

#include <boost/program_options.hpp>

#include "sim/core/units.hpp"
#include "sim/sweep/fit.hpp"
#include "sim/sweep/results_json.hpp"
#include "tools/commands.hpp"
#include "tools/progress.hpp"

namespace po = boost::program_options;

namespace trainsim::tools {

int cmd_fit(const std::vector<std::string>& args) {
  po::options_description opts("trainsim fit SCENARIO --find KEY [options]");
  std::string key, format = "text";
  std::vector<std::string> sets;
  sweep::FitOptions fo;
  opts.add_options()("help,h", "show this help")(
      "find", po::value<std::string>(&key), "integer key to maximise, e.g. training.micro_batch, training.seq_len, model.layers")(
      "from", po::value<std::int64_t>(&fo.from)->default_value(1), "smallest value to try")(
      "max", po::value<std::int64_t>(&fo.limit)->default_value(1LL << 40), "largest value to try")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "override a scenario key (repeatable)")(
      "format", po::value<std::string>(&format)->default_value("text"), "text | json")(
      "quiet,q", "no progress on standard error (it is drawn only on a terminal anyway)");
  po::variables_map vm = parse_command(args, opts, "scenario");
  po::notify(vm);
  if (vm.count("help")) {
    std::cout
        << opts
        << "\nexit codes: 0 found, 3 even the smallest value is out of memory, 2 bad input or "
           "usage, 5 resources exhausted, 1 internal error\n";
    return kExitFits;
  }
  if (!vm.count("scenario")) throw po::error("missing SCENARIO file");
  if (key.empty()) throw po::error("missing --find KEY");
  if (format != "text" && format != "json") throw po::error("--format must be text or json, got '" + format + "'");
  if (fo.from < 1 || fo.limit < fo.from) throw po::error("need 1 <= --from <= --max");

  const auto base = sweep::BaseScenario::from_file(vm["scenario"].as<std::string>());
  Progress progress("simulations", 0, progress_wanted(vm.count("quiet") > 0));
  fo.on_progress = progress.callback();
  const sweep::FitResult r = sweep::fit(base, sets, key, fo);
  progress.end();
  if (format == "json") {
    sweep::write_fit_json(std::cout, r);
  } else {
    auto gib = [](std::int64_t b) { return core::format_bytes(core::Bytes{b}); };
    if (r.falls) {
      std::cout << key << " = " << r.value << " is the smallest that fits (memory falls as " << key
                << " grows): peak " << gib(r.peak_bytes) << " of " << gib(r.capacity_bytes) << "\n"
                << key << " = " << *r.next_value << " does not fit: peak " << gib(r.next_peak_bytes) << "\n"
                << r.simulations << " simulations (the first value did not fit and a larger one did: binary search "
                << "for the smallest that fits)\n";
      return kExitFits;
    }
    if (r.flat) {
      std::cout << key << " = " << r.value << " fits with the same peak " << gib(r.peak_bytes) << " of "
                << gib(r.capacity_bytes) << " as " << key << " = " << (r.value >> sweep::kFlatDoublings)
                << ": memory does not grow with " << key << ", so it has no largest value that fits\n"
                << r.simulations << " simulations (exponential search, ended when the peak stayed the same over "
                << "three doublings)\n";
      return kExitFits;
    }
    if (r.found)
      std::cout << key << " = " << r.value << " is the largest that fits: peak " << gib(r.peak_bytes) << " of "
                << gib(r.capacity_bytes) << "\n";
    else
      std::cout << "even " << key << " = " << *r.next_value << " does not fit: peak " << gib(r.next_peak_bytes)
                << " of " << gib(r.capacity_bytes) << "\n";
    if (r.found && r.next_value)
      std::cout << key << " = " << *r.next_value << " does not fit: peak " << gib(r.next_peak_bytes) << "\n";
    else if (r.found)
      std::cout << "no larger valid value was found (the scenario rejects the next ones, or --max was reached)\n";
    std::cout << r.simulations << " simulations (exponential then binary search; assumes peak memory grows with "
              << key << ")\n";
  }
  return r.found ? kExitFits : kExitOom;
}

}  // namespace trainsim::tools
