#pragma once
// `--set key.path=value` overrides, applied to the YAML tree before it is read, so they go
// through exactly the same validation (and error messages) as the file itself.
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// Applies each "a.b.c=value" to `root`. A scalar met on the way (e.g. `model: gpt2` under
// `--set model.layers=36`) becomes `{preset: <scalar>}` so presets can be adjusted; a `true`
// (`parallel.fsdp: true`) becomes the empty mapping it stands for, and a `false` is an error.
// Records each override's origin in `ctx` for error locations. Malformed arguments are
// ConfigErrors.
void apply_overrides(YAML::Node& root, const std::vector<std::string>& sets, YamlContext& ctx);

}  // namespace trainsim::scenario
