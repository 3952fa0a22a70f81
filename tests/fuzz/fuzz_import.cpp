// libFuzzer target: see fuzz_entry.hpp for what counts as a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  trainsim::fuzz::import_input(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
