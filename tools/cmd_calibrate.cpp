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
    std::cout
        << opts
        << "\nMEASUREMENTS.csv columns: kind (matmul | memory), then for matmul either flops or "
           "m,n,k (flops = 2mnk), for memory bytes, and seconds (or us).\n"
           "Writes a device file for a scenario's `device: {file: ...}`; refuses (exit 2) times "
           "that are not positive and finite, faster than the device allows, or that fit "
           "parameters outside their physical range.\n"
           "exit codes: 0 written, 2 bad input or usage, 5 resources exhausted, 1 internal error\n";
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
  const int header = table.header_line;
  if (kind < 0)
    throw core::ConfigError({file, header, 1}, "", "expected a 'kind' column (matmul | memory)");
  if (seconds < 0 && us < 0)
    throw core::ConfigError({file, header, 1}, "", "expected a 'seconds' or 'us' column");
  const bool mnk = m >= 0 && n >= 0 && k >= 0;
  const bool half = !vm.count("fp32");
  std::vector<cost::Measurement> rows;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    cost::Measurement r;
    const std::string& kd = table.rows[i][kind];
    if (kd != "matmul" && kd != "memory") table.fail(i, kind, "expected matmul or memory");
    r.matmul = kd == "matmul";
    const int time_col = seconds >= 0 ? seconds : us;
    r.seconds = seconds >= 0 ? table.positive_time(i, seconds, "in seconds")
                             : table.positive_time(i, us, "in microseconds") * 1e-6;
    if (r.matmul) {
      if (flops < 0 && !mnk)
        throw core::ConfigError(
            {file, header, 1}, "",
            "expected a 'flops' column or 'm', 'n' and 'k' columns for the matmul rows");
      r.flops = flops >= 0 ? table.positive_number(i, flops)
                           : 2.0 * static_cast<double>(table.positive_integer(i, m)) *
                                 static_cast<double>(table.positive_integer(i, n)) *
                                 static_cast<double>(table.positive_integer(i, k));
    } else {
      if (bytes < 0)
        throw core::ConfigError({file, header, 1}, "",
                                "expected a 'bytes' column for the memory rows");
      r.bytes = table.positive_number(i, bytes);
    }
    // A kernel faster than the device's peak is a wrong unit, device or --fp32, not a fit input.
    if (const std::string why = cost::impossible(*device, r, half); !why.empty())
      table.fail(i, time_col, why + "; check the time unit, --device and --fp32", false);
    rows.push_back(r);
  }
  cost::Calibration c;
  try {
    c = cost::calibrate(*device, rows, half);
  } catch (const std::invalid_argument& e) {
    throw core::ConfigError({file, 0, 0}, "",
                            std::string(e.what()) + "; no device file was written");
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
