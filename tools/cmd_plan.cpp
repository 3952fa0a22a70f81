// `trainsim plan SCENARIO --gpus N`: the best parallel layouts for N GPUs, ranked by an
// objective, with why the best beats the runner-up and the overrides that reproduce each.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>

#include <boost/program_options.hpp>

#include "sim/core/units.hpp"
#include "sim/report/command_line.hpp"
#include "sim/report/json_writer.hpp"
#include "sim/scenario/ranges.hpp"
#include "sim/sweep/plan.hpp"
#include "sim/sweep/results_json.hpp"
#include "sim/sweep/runner.hpp"
#include "tools/commands.hpp"
#include "tools/progress.hpp"

namespace po = boost::program_options;

namespace trainsim::tools {

namespace {

// "8 GPUs per node, from the default (--gpus-per-node sets it)".
std::string node_shape_text(const sweep::PlanResult& r, const sweep::PlanOptions& o) {
  std::string s = std::to_string(r.gpus_per_node) + (r.gpus_per_node == 1 ? " GPU" : " GPUs") + " per node, from ";
  switch (r.node_shape_source) {
    case sweep::NodeShapeSource::scenario: return s + "the scenario's cluster.gpus_per_node";
    case sweep::NodeShapeSource::option: s += "--gpus-per-node"; break;
    case sweep::NodeShapeSource::default_shape: s += "the default (--gpus-per-node sets it)"; break;
  }
  if (r.gpus_per_node < o.gpus_per_node)  // fewer GPUs than a node holds: one node, partly used
    s += "; the " + std::to_string(o.gpus) + " GPUs sit in one node of " + std::to_string(o.gpus_per_node);
  return s;
}

}  // namespace

int cmd_plan(const std::vector<std::string>& args) {
  po::options_description opts("trainsim plan SCENARIO --gpus N [options]");
  std::vector<std::string> sets;
  std::string objective = "throughput", format = "text";
  sweep::PlanOptions po_;
  int top = 5, jobs = 0;
  opts.add_options()("help,h", "show this help")(
      "gpus", po::value<std::int64_t>(&po_.gpus)->required(), "number of GPUs to plan for")(
      "top", po::value<int>(&top)->default_value(5), "how many layouts to list")(
      "objective", po::value<std::string>(&objective)->default_value("throughput"),
      "throughput (shortest step) | memory (lowest peak) | cost (GPU-seconds per sample)")(
      "gpus-per-node", po::value<std::int64_t>(&po_.gpus_per_node)->default_value(8),
      "GPUs per node (bounds tensor parallelism; links within a node are the device's fast ones) "
      "when the scenario writes no cluster.gpus_per_node")(
      "max-micro-batch", po::value<std::int64_t>(&po_.max_micro_batch)->default_value(8), "largest micro-batch tried")(
      "jobs,j", po::value<int>(&jobs)->default_value(0), "worker threads (0 = one per hardware thread)")(
      "set", po::value<std::vector<std::string>>(&sets)->composing(), "override a scenario key (repeatable)")(
      "format", po::value<std::string>(&format)->default_value("text"), "text | json")(
      "exhaustive", po::bool_switch(&po_.exhaustive),
      "also screen micro-batches at the rungs a smaller micro-batch of the layout ran out of memory "
      "at (slower; the same result)")(
      "quiet,q", "no progress on standard error (it is drawn only on a terminal anyway)");
  po::variables_map vm = parse_command(args, opts, "scenario");
  if (vm.count("help")) {
    std::cout << opts
              << "\nexit codes: 0 a layout fits, 3 none fits, 2 bad input or usage (or no layout "
                 "of N GPUs exists), 5 resources exhausted, 1 internal error\n";
    return kExitFits;
  }
  po::notify(vm);
  if (!vm.count("scenario")) throw po::error("missing SCENARIO file");
  if (format != "text" && format != "json") throw po::error("--format must be text or json, got '" + format + "'");
  if (objective == "throughput") po_.objective = sweep::Objective::throughput;
  else if (objective == "memory") po_.objective = sweep::Objective::memory;
  else if (objective == "cost") po_.objective = sweep::Objective::cost;
  else throw po::error("--objective must be throughput, memory or cost, got '" + objective + "'");
  if (top < 1) throw po::error("--top must be >= 1");
  const auto [gpus_min, gpus_max] = scenario::ranges::kClusterCount;
  if (po_.gpus < gpus_min || po_.gpus > gpus_max)
    throw po::error("--gpus must be in " + std::to_string(gpus_min) + ".." +
                    std::to_string(gpus_max) + " (the devices a scenario may hold), got " +
                    std::to_string(po_.gpus));
  const auto [mb_min, mb_max] = scenario::ranges::kMicroBatch;
  if (po_.max_micro_batch < mb_min || po_.max_micro_batch > mb_max)
    throw po::error("--max-micro-batch must be in " + std::to_string(mb_min) + ".." +
                    std::to_string(mb_max) + ", got " + std::to_string(po_.max_micro_batch));
  if (po_.gpus_per_node < gpus_min || po_.gpus_per_node > gpus_max)
    throw po::error("--gpus-per-node must be in " + std::to_string(gpus_min) + ".." + std::to_string(gpus_max) +
                    ", got " + std::to_string(po_.gpus_per_node));
  po_.gpus_per_node_given = !vm["gpus-per-node"].defaulted();
  po_.top = top;
  if (jobs < 0) throw po::error("--jobs must be >= 0 (0 = one per hardware thread)");
  std::string note;
  po_.jobs = sweep::worker_threads(jobs, std::numeric_limits<std::size_t>::max(), &note);
  if (!note.empty()) std::cerr << "trainsim plan: " << note << "\n";

  const std::string file = vm["scenario"].as<std::string>();
  const auto base = sweep::BaseScenario::from_file(file);
  Progress progress("simulations", 0, progress_wanted(vm.count("quiet") > 0));
  po_.on_progress = progress.callback();
  const sweep::PlanResult r = sweep::plan(base, sets, po_);
  progress.end();
  if (format == "json") {
    sweep::write_plan_json(std::cout, r, static_cast<std::size_t>(top));
    return r.ranked.empty() ? kExitOom : kExitFits;
  }
  std::cout << "plan for " << po_.gpus << " x " << r.device << ", global batch " << r.global_batch
            << ", objective " << objective << "\n"
            << "  " << r.layouts << " layouts considered, " << r.pruned << " pruned before simulating (model states "
            << "exceed memory, pipeline never fills, invalid, out of memory at a smaller micro-batch), " << r.screened << " screened, " << r.confirmed
            << " confirmed in full; " << r.simulations << " simulations\n"
            << "  node shape: " << node_shape_text(r, po_) << "\n\n";
  if (r.ranked.empty()) {
    std::cout << "no layout fits\n";
    return kExitOom;
  }
  // The layout column is as wide as the longest layout shown, so the figures stay aligned.
  const std::size_t shown = std::min(r.ranked.size(), static_cast<std::size_t>(top));
  int width = 6;
  for (std::size_t i = 0; i < shown; ++i)
    width = std::max(width, static_cast<int>(sweep::describe(r.ranked[i].layout).size()));
  std::printf("%-4s %-*s %10s %22s %7s %7s\n", "rank", width, "layout", "step (s)", "peak", "MFU", "bubble");
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& s = r.ranked[i].summary;
    std::printf("%-4zu %-*s %10.3f %22s %6.1f%% %6.1f%%\n", i + 1, width, sweep::describe(r.ranked[i].layout).c_str(),
                s.step_time_s, core::format_bytes(s.peak).c_str(), 100 * s.mfu, 100 * s.bubble_fraction);
  }
  std::cout << "\n";
  if (r.ranked.size() > 1)
    std::cout << "why 1 beats 2: " << sweep::explain(r.ranked[0].summary, r.ranked[1].summary, po_.objective) << "\n";
  if (r.has_reference)
    std::printf("the scenario's own layout: step %.3f s%s\n", r.reference.step_time_s,
                r.reference.fits ? "" : " (out of memory)");
  std::cout << "reproduce the best: " << report::run_command(file, r.ranked[0].sets) << "\n";
  return kExitFits;
}

}  // namespace trainsim::tools
