#pragma once
// Chrome trace-event JSON of one played step, for Perfetto (ui.perfetto.dev) and
// chrome://tracing: a process per device role, a thread per stream, a complete event per op,
// memory counters by category and the OOM points as instant events. docs/report-visuals.md
// describes the tracks.
#include <ostream>
#include <string>
#include <vector>

#include "sim/exec/timeline.hpp"
#include "sim/parallel/program.hpp"
#include "sim/report/memory_series.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::report {

// Thread ids of the streams inside each process; p2p transfers overlap, so they are spread over
// lanes kTraceP2pTid, kTraceP2pTid + 1, ... (first lane free at the op's start).
inline constexpr int kTraceComputeTid = 1;
inline constexpr int kTraceCommTid = 2;
inline constexpr int kTraceP2pTid = 3;
// Offload streams (PCIe host->device, device->host, the host CPU's optimizer), after any p2p lane.
inline constexpr int kTracePcieH2dTid = 1001;
inline constexpr int kTracePcieD2hTid = 1002;
inline constexpr int kTraceHostTid = 1003;

// "forward block.3.attn mb2", "all_reduce data", "p2p block.7 mb0": how a trace names an op.
std::string trace_op_name(const scenario::Scenario& s, const parallel::Op& op);

// Microseconds with three decimals, exact from integer nanoseconds: 1234567 ns -> "1234.567".
std::string trace_us(std::int64_t ns);

// Writes the whole trace; deterministic (same inputs, same bytes). Timestamps are exact
// microseconds from the integer-nanosecond timeline; memory counters are in bytes. `series`
// is memory_series(plan, tl).
void write_trace(std::ostream& out, const scenario::Scenario& s, const parallel::Plan& plan,
                 const exec::Timeline& tl, const std::vector<MemorySeries>& series);

}  // namespace trainsim::report
