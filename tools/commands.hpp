#pragma once
// Subcommands of the `trainsim` tool. Each parses its own options (Boost.Program_options) and
// returns an exit code; errors propagate as exceptions that main() maps to codes.
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace trainsim::tools {

// Parses a subcommand's arguments against `opts` plus one positional argument `positional`
// (stored under that name). Does not call notify(), so required options can wait for --help.
boost::program_options::variables_map parse_command(
    const std::vector<std::string>& args, const boost::program_options::options_description& opts,
    const char* positional);

inline constexpr int kExitFits = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitOom = 3;
inline constexpr int kExitRatchet = 4;        // compare: a subset is worse than --ratchet
// The machine ran out of host memory or threads (not the input's fault, not a bug).
inline constexpr int kExitResources = 5;
inline constexpr int kExitInterrupted = 130;  // a sweep stopped by SIGINT/SIGTERM

int cmd_run(const std::vector<std::string>& args, bool validate_only, bool diagnose_only = false);
int cmd_models(const std::vector<std::string>& args);
int cmd_devices(const std::vector<std::string>& args);
int cmd_sweep(const std::vector<std::string>& args);
int cmd_fit(const std::vector<std::string>& args);
int cmd_plan(const std::vector<std::string>& args);
int cmd_merge(const std::vector<std::string>& args);
int cmd_compare(const std::vector<std::string>& args);
int cmd_compare_memory(const std::vector<std::string>& args);
int cmd_calibrate(const std::vector<std::string>& args);
int cmd_import(const std::vector<std::string>& args);

}  // namespace trainsim::tools
