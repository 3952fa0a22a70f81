#pragma once
// bitsandbytes' paged optimizers (training.optimizer: paged-adamw, paged-adamw-8bit) allocate
// their states in CUDA unified memory (cudaMallocManaged, bitsandbytes' get_paged). When the
// device runs out, the driver evicts unified-memory pages to host memory instead of failing
// the allocation, and the optimizer step faults them back in. The tensors are made with
// torch.frombuffer over that memory, so PyTorch's caching allocator never hands them out:
// torch.cuda's allocated, active and reserved figures do not count them.
#include "sim/exec/timeline.hpp"
#include "sim/parallel/program.hpp"

namespace trainsim::exec {

// After a play: a device whose peak demand exceeds its capacity by no more than its paged
// states fits; the excess is evicted (DeviceTimeline::paged_spill, taken off its peaks) and its
// OOM points are dropped. Each step moves the evicted bytes host -> device for the optimizer
// step and device -> host again when the next forward needs the room: 2 x spill over the PCIe
// link, exposed (the faulting kernel waits), added to the step time. A device whose excess is
// larger evicts all its paged states and still runs out. Every device's allocated and reserved
// peaks (DeviceTimeline, PyTorch's figures) leave its paged states out; its peak (what the
// device holds, for fitting) keeps those not evicted.
void page_out_states(const parallel::Plan& plan, Timeline& tl);

}  // namespace trainsim::exec
