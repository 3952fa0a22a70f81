#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"
#include "sim/cost/calibrate.hpp"
#include "sim/validation/compare.hpp"
#include "tools/commands.hpp"

namespace po = boost::program_options;

namespace trainsim::tools {

namespace {
double cell(const validation::Table& t, std::size_t row, int col, const std::string& file,
            const std::string& name) {
  if (col < 0) return 0;
  const std::string& text = t.rows[row][col];
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (...) {
  }
  throw core::ConfigError({file, static_cast<int>(row + 2), col + 1}, name,
                          "expected a number, got '" + text + "'");
}
}  // namespace

int cmd_calibrate(const std::vector<std::string>& args) {
  po::options_description opts("trainsim calibrate MEASUREMENTS.csv --device NAME [options]");
  std::string device_name, output;
  opts.add_options()("help,h", "show this help")(
      "device", po::value<std::string>(&device_name), "device preset the timings were taken on")(
      "fp32", "the matmul timings are FP32 (default: FP16/BF16 tensor cores)")(
      "output,o", po::value<std::string>(&output), "write the device file here (default: stdout)");
  po::variables_map vm = parse_command(args, opts, "measurements");
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts
              << "\nMEASUREMENTS.csv columns: kind (matmul | memory), then for matmul either flops or "
                 "m,n,k (flops = 2mnk), for memory bytes, and seconds (or us).\n"
                 "Writes a device file for a scenario's `device: {file: ...}`.\n";
    return kExitFits;
  }
  if (!vm.count("measurements")) throw po::error("missing MEASUREMENTS.csv");
  if (device_name.empty()) throw po::error("missing --device NAME");
  const auto device = hw::find_device(device_name);
  if (!device) throw core::ConfigError({"--device", 1, 1}, "--device", "unknown device preset '" + device_name + "'");
  const std::string file = vm["measurements"].as<std::string>();
  const auto table = validation::read_csv(file);
  const int kind = table.column("kind"), flops = table.column("flops"), bytes = table.column("bytes");
  const int m = table.column("m"), n = table.column("n"), k = table.column("k");
  const int seconds = table.column("seconds"), us = table.column("us");
  if (kind < 0) throw core::ConfigError({file, 1, 1}, "kind", "expected a 'kind' column (matmul | memory)");
  if (seconds < 0 && us < 0) throw core::ConfigError({file, 1, 1}, "seconds", "expected a 'seconds' or 'us' column");
  std::vector<cost::Measurement> rows;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    cost::Measurement r;
    const std::string& kd = table.rows[i][kind];
    if (kd != "matmul" && kd != "memory")
      throw core::ConfigError({file, static_cast<int>(i + 2), kind + 1}, "kind", "expected matmul or memory, got '" + kd + "'");
    r.matmul = kd == "matmul";
    r.seconds = seconds >= 0 ? cell(table, i, seconds, file, "seconds") : cell(table, i, us, file, "us") * 1e-6;
    if (r.matmul)
      r.flops = flops >= 0 ? cell(table, i, flops, file, "flops")
                           : 2 * cell(table, i, m, file, "m") * cell(table, i, n, file, "n") * cell(table, i, k, file, "k");
    else
      r.bytes = cell(table, i, bytes, file, "bytes");
    rows.push_back(r);
  }
  cost::Calibration c;
  try {
    c = cost::calibrate(*device, rows, !vm.count("fp32"));
  } catch (const std::invalid_argument& e) {
    throw core::ConfigError({file, 0, 0}, "", e.what());
  }
  std::ostringstream y;
  char buf[128];
  y << "# Device calibrated by `trainsim calibrate` from " << file << " (" << c.matmul_rows
    << " matmul, " << c.memory_rows << " memory-bound timings).\n";
  std::snprintf(buf, sizeof buf, "# RMS relative error of the fitted model: %.2f%%\n", 100 * c.rms_relative_error);
  y << buf;
  for (const auto& note : c.notes) y << "# note: " << note << "\n";
  y << "preset: " << device->name << "\nname: " << device->name << "-calibrated\n";
  std::snprintf(buf, sizeof buf, "matmul_efficiency: %.4f\nmemory_efficiency: %.4f\n", c.device.matmul_efficiency,
                c.device.memory_efficiency);
  y << buf;
  std::snprintf(buf, sizeof buf, "matmul_ramp: %.3fus\nkernel_launch: %.3fus\n", c.device.matmul_ramp_s * 1e6,
                static_cast<double>(c.device.kernel_launch.ns) / 1e3);
  y << buf;
  if (output.empty()) {
    std::cout << y.str();
  } else {
    core::OutputFile f(output, "--output");
    f.stream() << y.str();
    f.close();
    std::cerr << "wrote " << output << " (RMS relative error " << 100 * c.rms_relative_error << "%)\n";
  }
  return kExitFits;
}

}  // namespace trainsim::tools
