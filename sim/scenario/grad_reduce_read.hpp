#pragma once
// Reading and checking parallel.grad_reduce (docs/scenarios.md, "parallel"): when the
// data-parallel gradient all-reduce runs against the backward.
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/validate.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// Reads parallel.grad_reduce (overlapped | after_backward) from the parallel mapping `m`.
void read_grad_reduce(MapReader& m, ParallelSpec& p);

// Refuses, located at parallel.grad_reduce, the layouts after_backward does not describe:
// Megatron-LM's local DDP all-reduces every gradient of a chunk over the data ranks once per
// step, so it needs ZeRO 0, no FSDP, no expert parallelism, no optimizer offload and
// accumulate_grads fused or autograd (fp32 reduces its own fp32 copy per chunk).
void validate_grad_reduce(const YamlContext& ctx, const Scenario& s, const LayoutNodes& nodes);

}  // namespace trainsim::scenario
