#include "sim/exec/paging.hpp"

#include <algorithm>

namespace trainsim::exec {

void page_out_states(const parallel::Plan& plan, Timeline& tl) {
  core::Duration paging{};
  for (std::size_t p = 0; p < plan.programs.size(); ++p) {
    const parallel::Program& P = plan.programs[p];
    DeviceTimeline& d = tl.devices[p];
    const core::Bytes capacity = P.device.memory;
    if (P.paged.value == 0) continue;
    // Managed memory is not PyTorch's: the caching allocator's figures leave every paged byte
    // out, evicted or not (the states live from the step's start, so at their peaks too).
    d.allocated_peak -= std::min(P.paged, d.allocated_peak);
    d.reserved_peak -= std::min(P.paged, d.reserved_peak);
    if (d.peak <= capacity) continue;
    const core::Bytes excess = d.peak - capacity;
    const core::Bytes spill = std::min(excess, P.paged);
    d.paged_spill = spill;
    d.peak -= spill;
    d.tensor_peak -= std::min(spill, d.tensor_peak);
    auto& states = d.at_peak.bytes[static_cast<std::size_t>(hw::MemCategory::optimizer_states)];
    states -= std::min(spill, states);
    if (plan.pcie.bandwidth.bytes_per_s > 0) paging = std::max(paging, spill * 2 / plan.pcie.bandwidth);
    if (excess > P.paged) continue;
    d.fits = true;
    const auto program = static_cast<std::int32_t>(p);
    std::erase_if(tl.ooms, [&](const OomPoint& o) { return o.program == program; });
  }
  // The devices wait for each other at the step's end: the slowest one's paging counts.
  tl.step_time += paging;
}

}  // namespace trainsim::exec
