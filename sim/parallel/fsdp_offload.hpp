#pragma once
// FSDP CPU offload (`parallel.fsdp.offload: cpu`) as PyTorch does it: FSDP2's
// CPUOffloadPolicy(pin_memory=True), FSDP1's CPUOffload(offload_params=True). Each rank's
// sharded parameters live in pinned host memory, and so do their sharded gradients and the
// optimizer states (the optimizer, built over the sharded parameters, steps on the CPU). Per FSDP
// unit: the rank's shard is copied host -> device before the unit's all-gather (its input) and
// freed when the gather ends; after the reduce-scatter the rank's reduced shard is copied device
// -> host. The optimizer step runs on the CPU after the last copy. Sources and formulas:
// docs/fsdp.md, "CPU offload". The pass_fsdp.cpp pass calls these at its points.
#include <cstdint>

#include "sim/parallel/program.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::parallel {

struct StageContext;
struct UnitStep;

// Moves the stage's booked sharded states (Program::persistent, model_states) to Program::host:
// weights, gradients and optimizer states; marks the optimizer as stepping on the host.
void place_fsdp_offload(StageContext& c);

// The rank's shard of a unit (`bytes`), copied host -> device after op `after`: returns the
// copy op; `staged` is the tensor it books, which the all-gather that reads it frees.
std::int32_t fetch_fsdp_shard(StageContext& c, const UnitStep& u, std::int32_t layer,
                              core::Bytes bytes, std::int32_t after, MemEffect& staged);

// The reduced shard (`on_gpu` bytes, booked by the reduce-scatter as `reduced`) copied device
// -> host (`to_host` bytes, the sharded parameter's dtype) after op `after`: returns the copy op.
std::int32_t copy_fsdp_grad_out(StageContext& c, const UnitStep& u, std::int32_t layer,
                                const MemEffect& reduced, core::Bytes to_host, std::int32_t after);

// The CPU optimizer step over the rank's `params` trained parameters, after op `after` (the
// last gradient copy): it reads each gradient, reads and writes each optimizer state and each
// parameter, in the shard dtype (memory-bound, as offload.hpp's cpu_optimizer_traffic).
std::int32_t fsdp_cpu_step(StageContext& c, std::int64_t params, std::int32_t after);

}  // namespace trainsim::parallel
