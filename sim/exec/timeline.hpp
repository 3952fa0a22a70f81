#pragma once
// What playing a Plan produced: per device role its memory peak and breakdown, OOM points with
// the op that asked, busy time per stream, communication time by purpose and how much of it
// compute did not hide, and the start/end of every op (for traces).
#include <cstdint>
#include <map>
#include <vector>

#include "sim/parallel/program.hpp"

namespace trainsim::exec {

// host_memory: the offloaded states of a node's GPUs exceed the node's host memory
// (cluster.host_memory); the GPUs may fit.
enum class OomCause { model_states, activations, host_memory };
std::string_view to_string(OomCause c);

struct OomPoint {
  std::int32_t program = 0;  // = pipeline stage
  core::TimePoint time{};
  std::int32_t op = -1;  // index in the program; -1 for the model states booked before the step
  parallel::OpKind kind = parallel::OpKind::forward;
  std::int32_t layer = -1;
  std::int32_t microbatch = -1;
  hw::MemCategory category = hw::MemCategory::activations;
  core::Bytes requested{};
  hw::MemBreakdown in_use;  // before the request
  core::Bytes capacity{};
  OomCause cause = OomCause::activations;
  // With the caching-allocator model: the segment it asked the device for (the request found no
  // cached block that holds it); 0 without the model.
  core::Bytes segment{};
  // Where the request falls in the expanded plan's order (op, then effect): points at one
  // instant are listed in this order, whichever way the plan was played.
  std::uint64_t order = 0;
};

struct CommStats {
  core::Duration time{};     // summed over ops of the representative devices
  core::Duration exposed{};  // part of it during which the device's compute stream was idle
};

struct DeviceTimeline {
  core::Bytes capacity{};
  core::Bytes peak{};             // peak demand (allocations that did not fit still counted)
  hw::MemBreakdown at_peak;
  // As PyTorch reports them (torch.cuda.max_memory_allocated / max_memory_reserved): peak bytes
  // of blocks handed out and of segments held, without the CUDA context. Without the allocator
  // model both are the peak of the tensors' bytes. Paged optimizer states (CUDA managed memory,
  // not PyTorch's) are not in them (paging.hpp).
  core::Bytes allocated_peak{}, reserved_peak{};
  // The peak of the tensors' bytes and the context alone (the ledger's; = peak without the
  // allocator model).
  core::Bytes tensor_peak{};
  core::Duration compute_busy{};  // forward/backward/recompute/TP collectives on compute
  core::Duration pipeline_busy{}; // compute busy before the optimizer step
  // Of compute_busy, what compute ops lost to collectives holding SMs beside them
  // (Plan::collective_sms; docs/collectives.md): their spans less their durations alone.
  core::Duration contention{};
  core::TimePoint end{};
  bool fits = true;
  // Paged optimizer states the driver evicted to host memory so that the step fits
  // (exec/paging.cpp); their return over PCIe is in the step time.
  core::Bytes paged_spill{};
  std::vector<core::TimePoint> start, finish;  // per op
  // Per op with a folded pipeline transfer (Op::arrival): the window the player timed that
  // transfer in (its time is exec::op_duration of its p2p); both empty when the program has none.
  std::vector<core::TimePoint> arrival_start, arrival_end;
  // With the caching-allocator model in a fast play: the earlier program of the same play whose
  // replay this one's went on from, and how many of its log records it did not replay (see
  // Player::model_allocator; -1 and 0 when it replayed them all or resumed from the memo).
  std::int32_t replay_source = -1;
  std::uint64_t replay_shared = 0;
};

struct Timeline {
  std::vector<DeviceTimeline> devices;  // one per Program
  std::vector<OomPoint> ooms;           // first per device, or every one with all_ooms
  bool host_fits = true;                // every node's host memory holds its GPUs' offloaded states
  std::int64_t ooms_dropped = 0;        // beyond the cap (the latest are dropped)
  core::Duration step_time{};
  core::TimePoint pipeline_end{};       // last forward/backward end over all devices
  std::map<parallel::CommPurpose, CommStats> comm;
  std::uint64_t events = 0;
  // Events this play took over from an earlier play of its plan paused before them
  // (exec::PlanDigest::snapshots) instead of running them; 0 when it ran them all.
  std::uint64_t events_resumed = 0;
  // Events of a steady state's repeated periods that the play wrote down instead of running
  // (PlayOptions::steady_skip), counted as its event loop counts them (a macro op's end is one).
  std::uint64_t events_skipped = 0;
};

}  // namespace trainsim::exec
