#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <boost/program_options.hpp>

#include "sim/core/error.hpp"
#include "sim/core/text_file.hpp"
#include "sim/core/output_file.hpp"
#include "sim/report/json_writer.hpp"
#include "sim/validation/compare.hpp"
#include "sim/validation/ratchet.hpp"
#include "tools/commands.hpp"
#include "tools/progress.hpp"

namespace po = boost::program_options;

namespace trainsim::tools {

int cmd_compare(const std::vector<std::string>& args) {
  po::options_description opts("trainsim compare MEASURED.csv [options]");
  std::string base;
  std::string format = "text";
  std::vector<std::string> maps;
  std::vector<std::string> subset_by;
  std::string unit;
  opts.add_options()("help,h", "show this help")(
      "base", po::value<std::string>(&base),
      "scenario whose device, links and training settings every row shares (default: "
      "scenarios/validation/megatron_a100_vtrain.yaml, found beside trainsim, not in the "
      "working folder)")(
      "map", po::value<std::vector<std::string>>(&maps)->composing(),
      "KEY=COLUMN: which column holds layers, hidden, heads, seq_len, micro_batch, global_batch, "
      "tensor, data, pipeline, gpus, measured, label, and optionally model (a preset or a "
      "config.json per row, instead of layers/hidden/heads), vocab, zero, fsdp (yes/no, a "
      "shard size or FULL_SHARD / SHARD_GRAD_OP / HYBRID_SHARD / NO_SHARD), expert, context, "
      "precision, recompute, device (a preset), nodes, gpus_per_node, virtual_stages (above 1: the interleaved schedule), lora (a rank, or "
      "none), lora_targets (e.g. 'q v' or all-linear), grad_reduce (overlapped, "
      "after_backward or after_backward_in_place), sequence_parallel (yes/no)")(
      "measured-unit", po::value<std::string>(&unit),
      "what the measured column holds: ms (default) | s | tokens/s | tokens/s/gpu | samples/s | "
      "tflops/gpu | mfu (a fraction); rates become step times (docs/validation.md)")(
      "seconds", "the same as --measured-unit s")(
      "subset-by", po::value<std::vector<std::string>>(&subset_by)->composing(),
      "KEY: also summarise the rows by the value of this mapped key's column (e.g. device)")(
      "rows", po::value<std::string>(), "write every row's prediction to this CSV file")(
      "format", po::value<std::string>(&format)->default_value("text"), "text | json")(
      "ratchet", po::value<std::string>(),
      "fail (exit 4) when a subset's MAPE is worse than recorded in this file")(
      "quiet,q", "no progress on standard error (it is drawn only on a terminal anyway)");
  po::variables_map vm = parse_command(args, opts, "measured");
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts
              << "\nSimulates every row of a table of measured runs and reports the error "
                 "per row and per subset.\nexit codes: 0 ok, 2 bad input or usage, 4 a "
                 "subset is worse than the --ratchet file, 5 resources exhausted, 1 internal error\n";
    return kExitFits;
  }
  if (!vm.count("measured")) throw po::error("missing MEASURED.csv");
  if (format != "text" && format != "json") throw po::error("--format must be text or json");

  validation::ColumnMap map;
  for (const auto& m : maps) validation::apply_mapping(map, m);
  if (vm.count("seconds") && vm.count("measured-unit") && unit != "s")
    throw po::error("--seconds is --measured-unit s; it contradicts --measured-unit " + unit);
  if (vm.count("seconds")) map.unit = validation::MeasuredUnit::s;
  if (vm.count("measured-unit")) map.unit = validation::parse_measured_unit(unit);
  map.subset_by = subset_by;
  const auto table = validation::read_csv(vm["measured"].as<std::string>());
  // The shipped base is found from the executable, so compare runs from any folder.
  if (base.empty())
    base = validation::find_shipped_file(validation::kDefaultBase, validation::shipped_roots(),
                                         "pass --base SCENARIO");
  Progress progress("rows", table.rows.size(), progress_wanted(vm.count("quiet") > 0));
  const auto results = validation::compare(table, map, base, progress.callback());
  progress.end();
  const auto groups = validation::subsets(results);

  if (vm.count("rows")) {
    core::OutputFile file(vm["rows"].as<std::string>(), "--rows");
    std::ostream& out = file.stream();
    out << "row,label,tensor,pipeline,data,measured_s,predicted_s,error,fits,skipped,measured,measured_unit\n";
    for (const auto& r : results)
      out << r.row << ',' << r.label << ',' << r.tensor << ',' << r.pipeline << ',' << r.data << ','
          << r.measured_s << ',' << r.predicted_s << ',' << r.error << ',' << (r.fits ? 1 : 0) << ",\""
          << r.skipped << "\"," << r.measured << ',' << validation::unit_name(map.unit) << '\n';
    file.close();
  }
  if (format == "json") {
    report::JsonWriter j(std::cout);
    j.begin_object();
    j.field("rows", static_cast<std::int64_t>(results.size()));
    j.field("measured_unit", std::string(validation::unit_name(map.unit)));
    j.key("subsets").begin_object();
    for (const auto& [name, s] : groups) {
      j.key(name).begin_object();
      j.field("n", static_cast<std::int64_t>(s.n));
      j.field("mape", s.mape);
      j.field("median", s.median);
      j.field("worst", s.worst);
      j.field("worst_row", static_cast<std::int64_t>(s.worst_row));
      j.field("bias", s.bias);
      j.end_object();
    }
    j.end_object();
    j.end_object();
  } else {
    int width = 7;  // the label column fits the longest label ("megatron-39.1b")
    for (const auto& r : results) width = std::max(width, static_cast<int>(r.label.size()));
    std::printf("%5s %*s %4s %4s %4s %12s %12s %8s\n", "row", width, "label", "t", "p", "d", "measured", "predicted", "error");
    for (const auto& r : results) {
      if (!r.skipped.empty()) {
        std::printf("%5zu %*s skipped: %s\n", r.row, width, r.label.c_str(), r.skipped.c_str());
        continue;
      }
      std::printf("%5zu %*s %4lld %4lld %4lld %10.3f s %10.3f s %+7.1f%%%s\n", r.row, width, r.label.c_str(),
                  static_cast<long long>(r.tensor), static_cast<long long>(r.pipeline),
                  static_cast<long long>(r.data), r.measured_s, r.predicted_s, 100 * r.error,
                  r.fits ? "" : "  (OOM in simulation)");
    }
    std::printf("\n%-24s %5s %8s %8s %8s %8s\n", "subset", "rows", "MAPE", "median", "worst", "bias");
    for (const auto& [name, s] : groups)
      std::printf("%-24s %5zu %7.1f%% %7.1f%% %7.1f%% %+7.1f%%\n", name.c_str(), s.n, 100 * s.mape,
                  100 * s.median, 100 * s.worst, 100 * s.bias);
  }
  if (vm.count("ratchet")) {
    std::map<std::string, double> mape;
    for (const auto& [name, g] : groups) mape[name] = g.mape;
    if (validation::ratchet_failures(vm["ratchet"].as<std::string>(), mape, "rows") > 0)
      return kExitRatchet;
  }
  return kExitFits;
}

}  // namespace trainsim::tools
