#pragma once
// SMs a collective takes from compute (docs/collectives.md, "SMs a collective takes from
// compute"). NCCL runs a collective as one kernel of one thread block per channel, each block
// holding an SM for the kernel's whole run; a compute kernel launched beside it gets the SMs left.
// Pure functions: the player (sim/exec/player.cpp) decides which ops run beside which.
#include "sim/core/units.hpp"
#include "sim/hw/device.hpp"

namespace trainsim::cost {

// The device as a compute kernel sees it while a collective holds `sms` of its SMs: that many
// fewer SMs (the GEMMs' tiles and waves are quantised on the rest) and the tensor-core and
// vector peaks in proportion. Memory bandwidth stays whole: the model charges the SMs only. A
// device without an SM count, or sms <= 0, is returned as it is; at least one SM is left.
hw::DeviceSpec beside_collective(const hw::DeviceSpec& d, int sms);

// An op of duration `alone` that would take `beside` with a collective running the whole time,
// started with a collective in flight for `window` more: it runs at alone / beside of its speed
// for the window and at full speed after, so it takes
//   beside                                  when window >= beside,
//   alone + window x (1 - alone / beside)    otherwise (alone when window <= 0).
core::Duration contended(core::Duration alone, core::Duration beside, core::Duration window);

}  // namespace trainsim::cost
