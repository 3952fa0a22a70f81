#include "sim/validation/ratchet.hpp"

#include <cstdio>
#include <iostream>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/core/text_file.hpp"

namespace trainsim::validation {

std::map<std::string, double> read_ratchet(const std::string& path) {
  std::istringstream in(core::read_text_file(path, {path, 0, 0}, "--ratchet"));
  std::map<std::string, double> out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (const auto hash = line.find('#'); hash != std::string::npos) line = line.substr(0, hash);
    char name[256];
    double pct;
    if (std::sscanf(line.c_str(), "%255s %lf", name, &pct) == 2) out[name] = pct;
    else if (line.find_first_not_of(" \t\r") != std::string::npos)
      throw core::ConfigError({path, n, 1}, "", "expected 'SUBSET MAPE_PERCENT'");
  }
  return out;
}

int ratchet_failures(const std::string& path, const std::map<std::string, double>& mape,
                     const std::string& items) {
  int worse = 0;
  for (const auto& [name, pct] : read_ratchet(path)) {
    const auto it = mape.find(name);
    if (it == mape.end()) {
      std::cerr << "ratchet: subset '" << name << "' has no " << items << "\n";
      ++worse;
    } else if (100 * it->second > pct + 1e-9) {
      std::fprintf(stderr, "ratchet: %s MAPE %.2f%% is worse than the recorded %.2f%%\n",
                   name.c_str(), 100 * it->second, pct);
      ++worse;
    }
  }
  return worse;
}

}  // namespace trainsim::validation
