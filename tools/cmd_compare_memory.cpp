// `trainsim compare-memory CASES.yaml --measured MEASURED.yaml`: predicted peak memory against
// published measurements, each compared as the kind of figure its source reports.
#include <map>
#include <cstdio>
#include <iostream>

#include <boost/program_options.hpp>

#include "sim/core/units.hpp"
#include "sim/report/json_writer.hpp"
#include "sim/validation/memory.hpp"
#include "sim/validation/ratchet.hpp"
#include "tools/commands.hpp"
#include "tools/progress.hpp"

namespace po = boost::program_options;

namespace trainsim::tools {

namespace {

void write_json(const std::vector<validation::MemoryResult>& results,
                const std::map<std::string, validation::ErrorStats>& groups) {
  report::JsonWriter j(std::cout);
  j.begin_object();
  j.key("cases").begin_array();
  for (const auto& r : results) {
    j.begin_object();
    j.field("id", r.id);
    j.field("group", r.group);
    j.field("scenario", r.scenario);
    j.field("kind", validation::kind_name(r.kind));
    j.field("measured_gib", r.measured_gib);
    j.field("predicted_gib", r.predicted_gib);
    j.field("error", r.error);
    j.field("allocated_peak_bytes", r.simulated.allocated.value);
    j.field("reserved_peak_bytes", r.simulated.reserved.value);
    j.field("nvidia_smi_bytes", r.simulated.nvidia_smi.value);
    j.field("fits", r.simulated.fits);
    j.field("step_time_s", r.simulated.step_time_s);
    if (r.throughput) {
      j.key("throughput").begin_object();
      j.field("unit", r.throughput->unit);
      j.field("scope", validation::scope_name(r.throughput->scope));
      j.field("measured", r.throughput->measured);
      j.field("predicted", r.throughput->predicted);
      j.field("step_error", r.throughput->step_error);
      j.end_object();
    } else {
      j.key("throughput").null();
    }
    j.end_object();
  }
  j.end_array();
  j.key("subsets").begin_object();
  for (const auto& [name, s] : groups) {
    j.key(name).begin_object();
    j.field("n", static_cast<std::int64_t>(s.n));
    j.field("mape", s.mape);
    j.field("median", s.median);
    j.field("worst", s.worst);
    j.field("bias", s.bias);
    j.end_object();
  }
  j.end_object();
  j.end_object();
}

void write_subsets(const std::map<std::string, validation::ErrorStats>& groups) {
  std::printf("\n%-40s %5s %8s %8s %8s %8s\n", "subset", "cases", "MAPE", "median", "worst", "bias");
  for (const auto& [name, s] : groups)
    std::printf("%-40s %5zu %7.1f%% %7.1f%% %7.1f%% %+7.1f%%\n", name.c_str(), s.n, 100 * s.mape,
                100 * s.median, 100 * s.worst, 100 * s.bias);
}

void write_text(const std::vector<validation::MemoryResult>& results,
                const std::map<std::string, validation::ErrorStats>& groups,
                const std::map<std::string, validation::ErrorStats>& time_groups) {
  std::printf("%-40s %-10s %9s %9s %8s   %9s %9s %10s\n", "case", "kind", "measured", "predicted",
              "error", "allocated", "reserved", "nvidia-smi");
  for (const auto& r : results)
    std::printf("%-40s %-10s %5.2f GiB %5.2f GiB %+7.1f%%   %5.2f GiB %5.2f GiB %6.2f GiB%s\n",
                r.id.c_str(), validation::kind_name(r.kind).c_str(), r.measured_gib, r.predicted_gib,
                100 * r.error, core::to_gib(r.simulated.allocated), core::to_gib(r.simulated.reserved),
                core::to_gib(r.simulated.nvidia_smi), r.simulated.fits ? "" : "  (OOM in simulation)");
  write_subsets(groups);
  if (time_groups.empty()) return;
  std::printf("\nThroughput, where the source prints one (step error: measured rate / predicted - 1)\n");
  std::printf("%-40s %-8s %10s %10s %-9s %10s\n", "case", "scope", "measured", "predicted", "unit", "step error");
  for (const auto& r : results)
    if (r.throughput)
      std::printf("%-40s %-8s %10.2f %10.2f %-9s %+9.1f%%\n", r.id.c_str(),
                  validation::scope_name(r.throughput->scope).c_str(), r.throughput->measured,
                  r.throughput->predicted, r.throughput->unit.c_str(), 100 * r.throughput->step_error);
  write_subsets(time_groups);
}

}  // namespace

int cmd_compare_memory(const std::vector<std::string>& args) {
  po::options_description opts("trainsim compare-memory CASES.yaml --measured MEASURED.yaml [options]");
  std::string measured_path;
  std::string format = "text";
  opts.add_options()("help,h", "show this help")(
      "measured", po::value<std::string>(&measured_path),
      "the published measurements (cases with id, group, measured.peak_memory_GiB, "
      "measured.kind), e.g. ../shared/validation/measured_memory_public.yaml")(
      "format", po::value<std::string>(&format)->default_value("text"), "text | json")(
      "ratchet", po::value<std::string>(),
      "fail (exit 4) when a subset's MAPE is worse than recorded in this file")(
      "quiet,q", "no progress on standard error (it is drawn only on a terminal anyway)");
  po::variables_map vm = parse_command(args, opts, "cases");
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts
              << "\nSimulates the scenario of every case and compares its peak memory with the "
                 "measured one,\nas the figure the source reports: allocated, active, reserved "
                 "or nvidia-smi, and its\nstep time with the source's throughput where it prints "
                 "one (subsets time:...; docs/validation.md).\nexit codes: 0 ok, 2 bad input or usage, 4 "
                 "a subset is worse than the --ratchet file, 5 resources exhausted, 1 internal "
                 "error\n";
    return kExitFits;
  }
  if (!vm.count("cases")) throw po::error("missing CASES.yaml");
  if (measured_path.empty()) throw po::error("missing --measured MEASURED.yaml");
  if (format != "text" && format != "json") throw po::error("--format must be text or json");

  const auto cases = validation::read_memory_cases(vm["cases"].as<std::string>());
  const auto measured = validation::read_measured_memory(measured_path);
  Progress progress("cases", cases.size(), progress_wanted(vm.count("quiet") > 0));
  const auto results = validation::compare_memory(cases, measured, progress.callback());
  progress.end();
  const auto groups = validation::memory_subsets(results);
  const auto time_groups = validation::throughput_subsets(results);
  auto all = groups;  // the JSON report and the ratchet take both kinds of subset
  all.insert(time_groups.begin(), time_groups.end());
  if (format == "json") write_json(results, all);
  else write_text(results, groups, time_groups);

  if (vm.count("ratchet")) {
    std::map<std::string, double> mape;
    for (const auto& [name, g] : all) mape[name] = g.mape;
    if (validation::ratchet_failures(vm["ratchet"].as<std::string>(), mape, "cases") > 0)
      return kExitRatchet;
  }
  return kExitFits;
}

}  // namespace trainsim::tools
