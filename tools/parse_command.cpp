#include "tools/commands.hpp"

namespace po = boost::program_options;

namespace trainsim::tools {

po::variables_map parse_command(const std::vector<std::string>& args,
                                const po::options_description& opts, const char* positional) {
  po::options_description hidden;
  hidden.add_options()(positional, po::value<std::string>(), "positional argument");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add(positional, 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  return vm;
}

}  // namespace trainsim::tools
