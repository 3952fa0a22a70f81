// `trainsim merge OUT SHARD...`: joins `trainsim sweep --shard` outputs (CSV or JSON Lines) in
// point order, byte for byte what one unsharded run writes.
#include <iostream>

#include <boost/program_options.hpp>

#include "sim/sweep/output.hpp"
#include "tools/commands.hpp"

namespace po = boost::program_options;

namespace trainsim::tools {

int cmd_merge(const std::vector<std::string>& args) {
  po::options_description opts("trainsim merge OUT.csv|OUT.jsonl SHARD... [options]");
  opts.add_options()("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("files", po::value<std::vector<std::string>>(), "output then inputs");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("files", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts
              << "\nShard files must all be CSV (same header) or all JSON Lines; point indices "
                 "must not repeat.\n"
                 "exit codes: 0 merged, 2 bad input or usage, 5 resources exhausted, 1 internal error\n";
    return kExitFits;
  }
  if (!vm.count("files") || vm["files"].as<std::vector<std::string>>().size() < 2)
    throw po::error("expected OUT and at least one SHARD file");
  auto files = vm["files"].as<std::vector<std::string>>();
  const std::string out = files.front();
  files.erase(files.begin());
  for (const auto& f : files)
    if (f == out) throw po::error("OUT '" + out + "' is also an input");
  const std::size_t n = sweep::merge_files(out, files);
  std::cerr << "merged " << n << " points from " << files.size() << " files into " << out << "\n";
  return kExitFits;
}

}  // namespace trainsim::tools
