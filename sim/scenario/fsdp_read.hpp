#pragma once
// Reading `parallel.fsdp` (PyTorch FSDP2 / HSDP; docs/scenarios.md).
#include <string>

#include "sim/scenario/scenario.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// `true` / `false`, `{}` (every default) or a mapping of reshard_after_forward, param_dtype,
// reduce_dtype, shard_size, offload, separate_outer_layers, gradient_sync and flat_parameter.
// Checks what the parallel section alone decides, located at the key: shard_size divides
// parallel.data; no ZeRO stage beside it; no pipeline parallelism yet.
FsdpSpec read_fsdp(const YamlContext& ctx, const YAML::Node& node, const std::string& path,
                   const ParallelSpec& p);

}  // namespace trainsim::scenario
