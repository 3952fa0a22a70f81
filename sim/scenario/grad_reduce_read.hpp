#pragma once
// Reading and checking parallel.grad_reduce and parallel.param_gather (docs/scenarios.md,
// "parallel"): when the data-parallel gradient reduction runs against the backward, and when
// ZeRO-1/2's weight all-gather runs against the forward.
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/validate.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// Reads parallel.grad_reduce (overlapped | after_backward | after_backward_in_place) from the
// parallel mapping `m`.
void read_grad_reduce(MapReader& m, ParallelSpec& p);

// Refuses, located at parallel.grad_reduce, the layouts after_backward does not describe:
// Megatron-LM's local DDP all-reduces every gradient of a chunk over the data ranks once per
// step, so it needs ZeRO 0, no FSDP, no expert parallelism, no optimizer offload and
// accumulate_grads fused or autograd (fp32 reduces its own fp32 copy per chunk).
// after_backward_in_place likewise, but reduce-scatters under ZeRO 1 (the distributed optimizer).
void validate_grad_reduce(const YamlContext& ctx, const Scenario& s, const LayoutNodes& nodes);

// Reads parallel.param_gather (after_step | overlapped) from the parallel mapping `m`.
void read_param_gather(MapReader& m, ParallelSpec& p);

// Refuses, located at parallel.param_gather, what overlapped does not describe: Megatron-Core's
// distributed optimizer gathers the weights ZeRO-1/2 sharded (ZeRO 1 or 2, no FSDP), on the GPU
// (no optimizer offload), and is not modelled beside expert parallelism's separate optimizer.
void validate_param_gather(const YamlContext& ctx, const Scenario& s, const LayoutNodes& nodes);

}  // namespace trainsim::scenario
