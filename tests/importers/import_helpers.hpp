#pragma once
// Helpers the importer tests share: options for N GPUs on a device, a key of the Draft's
// training or parallel section, and the message of the ConfigError a call throws.
#include <functional>
#include <string>

#include "sim/importers/import.hpp"

namespace trainsim::importers::testing {

inline ImportOptions gpus(std::int64_t n, const char* device = "a100-80gb") {
  ImportOptions o;
  o.gpus = n;
  o.device = device;
  return o;
}

inline std::string value(const Section& s, const char* key) {
  const std::string* v = Draft::get(s, key);
  return v ? *v : "(absent)";
}
inline std::string training(const Draft& d, const char* key) { return value(d.training, key); }
inline std::string parallel(const Draft& d, const char* key) { return value(d.parallel, key); }

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace trainsim::importers::testing
