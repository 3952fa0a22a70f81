#include <cstdio>
#include <iostream>

#include <boost/program_options.hpp>

#include "models/presets.hpp"
#include "sim/hw/device.hpp"
#include "tools/commands.hpp"

namespace po = boost::program_options;

namespace trainsim::tools {

namespace {
bool wants_help(const std::vector<std::string>& args, const char* usage) {
  po::options_description opts(usage);
  opts.add_options()("help,h", "show this help");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  if (vm.count("help")) {
    std::cout << opts << "\nexit codes: 0 listed, 2 usage, 5 resources exhausted, 1 internal error\n";
    return true;
  }
  return false;
}
}  // namespace

int cmd_models(const std::vector<std::string>& args) {
  if (wants_help(args, "trainsim models: list the built-in model presets")) return kExitFits;
  for (const auto& p : models::presets()) {
    models::BuildOptions opts;
    const auto m = models::build_preset(p, opts);
    std::printf("%-16s %16lld params  %s\n", p.name.c_str(),
                static_cast<long long>(m.parameters()), p.description.c_str());
  }
  return kExitFits;
}

int cmd_devices(const std::vector<std::string>& args) {
  if (wants_help(args, "trainsim devices: list device and link presets")) return kExitFits;
  std::printf("%-12s %10s %14s %13s %12s  %s\n", "device", "memory", "16-bit", "fp32", "bandwidth", "");
  for (const auto& d : hw::device_presets())
    std::printf("%-12s %6.2f GiB %7.1f TFLOPS %6.1f TFLOPS %7.0f GB/s  %s\n", d.name.c_str(),
                core::to_gib(d.memory), d.peak_16bit.per_s / 1e12, d.peak_fp32.per_s / 1e12,
                d.memory_bandwidth.bytes_per_s / 1e9, d.description.c_str());
  std::printf("\n%-12s %12s %10s\n", "link", "bandwidth", "latency");
  for (const auto& l : hw::link_presets())
    std::printf("%-12s %7.1f GB/s %7.1f us\n", l.name.c_str(), l.bandwidth.bytes_per_s / 1e9,
                static_cast<double>(l.latency.ns) / 1e3);
  return kExitFits;
}

}  // namespace trainsim::tools
