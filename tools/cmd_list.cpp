#include <cstdio>
#include <iostream>
#include <optional>

#include <boost/program_options.hpp>

#include "models/presets.hpp"
#include "sim/cost/cost.hpp"
#include "sim/hw/device.hpp"
#include "tools/commands.hpp"

namespace po = boost::program_options;

namespace trainsim::tools {

namespace {

struct ListOptions {
  bool markdown = false;  // a Markdown table (what docs/presets.md is generated from)
};

// The options of a listing; nullopt when --help was printed.
std::optional<ListOptions> parse_list(const std::vector<std::string>& args, const char* usage) {
  po::options_description opts(usage);
  opts.add_options()("help,h", "show this help")(
      "markdown", "print Markdown tables (tools/update_presets_doc.sh writes them into docs/presets.md)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  if (vm.count("help")) {
    std::cout << opts << "\nexit codes: 0 listed, 2 usage, 5 resources exhausted, 1 internal error\n";
    return std::nullopt;
  }
  return ListOptions{.markdown = vm.count("markdown") > 0};
}

double tflops(core::FlopRate r) { return r.per_s / 1e12; }

void devices_markdown() {
  std::printf("| name | device | memory (MiB) | memory (GiB) | reserved (MiB) | FP32 | TF32 | FP16/BF16 "
              "| bandwidth (GB/s) | flash fwd / bwd |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& d : hw::device_presets()) {
    // Flash-attention efficiencies; in parentheses where no figure is published for the part
    // and cost::flash_forward_efficiency's rule gives them (docs/devices.md, "Flash attention").
    const bool rule = d.flash_efficiency == 0;
    std::printf("| `%s` | %s | %lld | %.2f | %lld | %g | %g | %g | %g | %s%.3g / %.3g%s |\n",
                d.name.c_str(), d.description.c_str(),
                static_cast<long long>(d.memory.value / core::kMiB), core::to_gib(d.memory),
                static_cast<long long>(d.reserved.value / core::kMiB), tflops(d.peak_fp32),
                tflops(d.peak_tf32), tflops(d.peak_16bit), d.memory_bandwidth.bytes_per_s / 1e9,
                rule ? "(" : "", cost::flash_forward_efficiency(d),
                cost::flash_backward_efficiency(d), rule ? ")" : "");
  }
  std::printf("\n| link | bandwidth (GB/s) | latency (us) |\n|---|---|---|\n");
  for (const auto& l : hw::link_presets())
    std::printf("| `%s` | %g | %g |\n", l.name.c_str(), l.bandwidth.bytes_per_s / 1e9,
                static_cast<double>(l.latency.ns) / 1e3);
}

}  // namespace

int cmd_models(const std::vector<std::string>& args) {
  const auto o = parse_list(args, "trainsim models: list the built-in model presets");
  if (!o) return kExitFits;
  if (o->markdown) std::printf("| name | parameters | description |\n|---|---|---|\n");
  for (const auto& p : models::presets()) {
    models::BuildOptions opts;
    const auto m = models::build_preset(p, opts);
    const auto params = static_cast<long long>(m.parameters());
    if (o->markdown)
      std::printf("| `%s` | %lld | %s |\n", p.name.c_str(), params, p.description.c_str());
    else
      std::printf("%-16s %16lld params  %s\n", p.name.c_str(), params, p.description.c_str());
  }
  return kExitFits;
}

int cmd_devices(const std::vector<std::string>& args) {
  const auto o = parse_list(args, "trainsim devices: list device and link presets");
  if (!o) return kExitFits;
  if (o->markdown) {
    devices_markdown();
    return kExitFits;
  }
  std::printf("%-12s %10s %14s %13s %12s  %s\n", "device", "memory", "16-bit", "fp32", "bandwidth", "");
  for (const auto& d : hw::device_presets())
    std::printf("%-12s %6.2f GiB %7.1f TFLOPS %6.1f TFLOPS %7.0f GB/s  %s\n", d.name.c_str(),
                core::to_gib(d.memory), tflops(d.peak_16bit), tflops(d.peak_fp32),
                d.memory_bandwidth.bytes_per_s / 1e9, d.description.c_str());
  std::printf("\n%-12s %12s %10s\n", "link", "bandwidth", "latency");
  for (const auto& l : hw::link_presets())
    std::printf("%-12s %7.1f GB/s %7.1f us\n", l.name.c_str(), l.bandwidth.bytes_per_s / 1e9,
                static_cast<double>(l.latency.ns) / 1e3);
  return kExitFits;
}

}  // namespace trainsim::tools
