// The `trainsim` command. Only this file maps outcomes to exit codes:
//   0 the step fits, 3 out of memory, 2 bad input or usage (or an output that cannot be
//   written), 5 resources exhausted (host memory, threads), 1 internal error; the commands
//   add 4 (compare --ratchet regression) and 130 (sweep interrupted). README.md lists them.
#include <cstdio>
#include <iostream>
#include <new>
#include <string>
#include <unistd.h>
#include <vector>

#include <boost/program_options.hpp>

#include "sim/core/error.hpp"
#include "sim/core/memory_tuning.hpp"
#include "sim/core/output_file.hpp"
#include "sim/core/units.hpp"
#include "sim/core/version.hpp"
#include "tools/commands.hpp"

namespace po = boost::program_options;
using namespace trainsim;

namespace {

constexpr const char* kUsage =
    "usage: trainsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run SCENARIO       play one training step; report fit, OOM points and step time\n"
    "  validate SCENARIO  check a scenario (and its model) without simulating\n"
    "  diagnose SCENARIO  why a step does not fit, and re-simulated remedies that do\n"
    "  models             list the built-in model presets\n"
    "  devices            list the device and link presets\n"
    "  sweep SWEEP.yaml   simulate every point of a grid of overrides (CSV / JSON Lines)\n"
    "  fit SCENARIO       the largest value of one key that fits (--find training.micro_batch)\n"
    "  plan SCENARIO      rank parallel layouts for N GPUs (--gpus N)\n"
    "  merge OUT SHARD... join sweep shard outputs in point order\n"
    "  compare CSV        simulate a table of measured runs and report the error\n"
    "  compare-memory CASES.yaml --measured FILE\n"
    "                     predicted peak memory against published measurements\n"
    "  calibrate CSV      fit a device's cost-model parameters to measured kernel timings\n"
    "  import KIND FILE   a scenario from a Megatron-LM, DeepSpeed, torchtitan, HF Trainer, TRL,\n"
    "                     torchtune, LitGPT or llm-foundry config\n"
    "\n"
    "Run 'trainsim <command> --help' for a command's options; 'trainsim --version' prints the version.\n"
    "exit codes: 0 fits (or done), 3 out of memory, 2 bad input or usage, 1 internal error,\n"
    "            4 compare: worse than its --ratchet, 5 resources exhausted (host memory,\n"
    "            threads), 130 sweep: interrupted (--resume)\n";

// Runs one command; its exit code (errors propagate as exceptions).
int dispatch(const std::string& command, const std::vector<std::string>& args) {
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "--version") {
    std::cout << "trainsim " << core::kVersion << "\n";
    return 0;
  }
  if (command == "run") return tools::cmd_run(args, /*validate_only=*/false);
  if (command == "validate") return tools::cmd_run(args, /*validate_only=*/true);
  if (command == "diagnose") return tools::cmd_run(args, false, /*diagnose_only=*/true);
  if (command == "models") return tools::cmd_models(args);
  if (command == "devices") return tools::cmd_devices(args);
  if (command == "sweep") return tools::cmd_sweep(args);
  if (command == "fit") return tools::cmd_fit(args);
  if (command == "plan") return tools::cmd_plan(args);
  if (command == "merge") return tools::cmd_merge(args);
  if (command == "compare") return tools::cmd_compare(args);
  if (command == "compare-memory") return tools::cmd_compare_memory(args);
  if (command == "calibrate") return tools::cmd_calibrate(args);
  if (command == "import") return tools::cmd_import(args);
  std::cerr << "trainsim: unknown command '" << command << "'\n\n" << kUsage;
  return tools::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  core::keep_freed_memory_for_reuse();
  if (argc < 2) {
    std::cerr << kUsage;
    return tools::kExitUsage;
  }
  const std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  try {
    const int code = dispatch(command, args);
    // A report lost to a full disk or a closed pipe must not look like success.
    core::check_stdout();
    return code;
  } catch (const core::ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return tools::kExitBadInput;
  } catch (const po::error& e) {
    std::cerr << "trainsim " << command << ": " << e.what() << "\n(see 'trainsim " << command
              << " --help')\n";
    return tools::kExitUsage;
  } catch (const core::OverflowError& e) {
    std::cerr << "error: the scenario's sizes exceed what 64-bit counters hold (" << e.what()
              << "); check for an implausibly large model, batch or sequence\n";
    return tools::kExitBadInput;
  } catch (const core::ResourceError& e) {
    std::cerr << "trainsim " << command << ": " << e.what() << "\n";
    return tools::kExitResources;
  } catch (const std::bad_alloc&) {
    std::cerr << "trainsim " << command << ": out of host memory (std::bad_alloc): this machine "
              << "cannot hold what the command needs; lower limits.max_ops, run fewer points at "
              << "once (-j) or use a machine with more memory\n";
    return tools::kExitResources;
  } catch (const core::InternalError& e) {
    std::cerr << "trainsim: " << e.what() << "\nThis is a bug in trainsim; please report it with the scenario.\n";
    return tools::kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "trainsim: internal error: " << e.what() << "\n";
    return tools::kExitInternal;
  }
}
