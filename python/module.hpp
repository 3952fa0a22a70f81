#pragma once
// Shared by the compiled module's files (python/module.cpp, python/sweep_stream.cpp).
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "sim/scenario/scenario.hpp"
#include "sim/sweep/spec.hpp"

namespace trainsim::python {

// A scenario or sweep handed over from Python: a file (`text` empty), or YAML text held in
// memory, which `name` ("<string>", "<dict>") names in error messages.
struct Source {
  std::string name;
  std::optional<std::string> text;
};

// load_scenario of the file, or of the text.
scenario::Scenario load(const Source& src, const std::vector<std::string>& sets);
// The base scenario fit and plan search from (a located ConfigError when it does not parse).
sweep::BaseScenario base_of(const Source& src);

// Adds the `Sweep` class (python/sweep_stream.cpp).
void bind_sweep(pybind11::module_& m);

}  // namespace trainsim::python
