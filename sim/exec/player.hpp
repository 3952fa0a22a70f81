#pragma once
// Plays a Plan on the discrete-event engine: each device role has ordered compute and
// communication streams; an op starts when its stream predecessor and its dependencies are done,
// books its allocations at start and releases its frees at the end; the ledger flags the first
// allocation that does not fit (an OOM point). Memory is then treated as unbounded so the step
// plays to its end and its full demand and step time are known.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/exec/dependency_graph.hpp"
#include "sim/exec/timeline.hpp"
#include "sim/parallel/program.hpp"

namespace trainsim::exec {

class AllocatorMemo;

// What plays of one plan share however its links, all-reduce algorithm and devices are set (a
// sweep's reused plans, sim/sweep/runner.cpp): each program's hashes of its memory effects and
// macro templates, from which the allocator memo's log hashes are made. The first play that
// needs them fills them in; pass a digest only with the plan (the same programs) it was filled
// from.
struct PlayProfiles;  // sim/exec/play_state.hpp
struct PlayLayout;    // sim/exec/play_state.hpp
struct PlaySnapshot;  // sim/exec/play_state.hpp

struct PlanDigest {
  struct Program {
    std::vector<std::uint64_t> effects;    // [e]: the program's effects [0, e) folded
    std::vector<std::uint64_t> templates;  // per macro template: its ops and effects
    // Per macro template, [j]: the allocator requests of its points 1..j (point j frees op j-2's
    // tensors and books op j-1's).
    std::vector<std::vector<std::uint32_t>> requests;
    bool filled = false;
    // Per op, what the allocator memo reads of it for each record of a log (Player::log_ops):
    // 16 bytes, so a pass over a log does not bring in each record's op.
    struct LogOp {
      std::uint64_t word = 0;  // (macro << 8) ^ (micro-batch << 32), each as 32 bits
      std::int32_t microbatch = -1;
      bool compute = true;  // on the compute stream
    };
    std::vector<LogOp> log_ops;
  };
  std::vector<Program> programs;
  // The plan's dependency graph (which ops wait for which) and its ops' numbering (the expanded
  // plan's, which orders the events of one instant), made by its first play.
  std::shared_ptr<const DependencyGraph> graph;
  std::shared_ptr<const PlayLayout> layout;
  // The macro templates' profiles (their ops' durations and memory levels), with the devices,
  // links and precision they were costed for; a play on other ones costs them anew.
  std::shared_ptr<PlayProfiles> profiles;
  // Plays paused before their first data-parallel reduction could start (the two last used): a
  // later play whose ops started by then last as long goes on from one (a point with another
  // all-reduce algorithm replays only the step's end).
  std::vector<std::shared_ptr<const PlaySnapshot>> snapshots;
  // Where the plan repeats itself with a period's shifts (a steady state its plays wrote down,
  // PlayOptions::steady_skip): each program's op j + shift[p] repeats op j for every j in
  // [from[p], until[p]), and not for j = until[p]. The two last found.
  struct Repeat {
    std::vector<std::uint32_t> shift;
    std::vector<std::uint64_t> fine_shift;
    std::vector<std::uint32_t> from, until;
  };
  std::vector<Repeat> repeats;
};

struct PlayOptions {
  bool all_ooms = false;              // record every allocation that exceeds capacity
  std::size_t max_oom_points = 10000; // cap on recorded points with all_ooms
  // Caching-allocator replays shared with other plays (a sweep's points): each device resumes
  // the furthest stored replay of a log it shares a prefix with, and stores its own part way
  // (sim/exec/allocator_memo.hpp). Reports are the same without it.
  AllocatorMemo* allocator_memo = nullptr;
  // Replays shared between the devices of this play (fast play only): a stage whose log begins
  // as an earlier stage's goes on from a copy of that one's replay where the two logs part
  // (DeviceTimeline::replay_source). Reports are the same without it.
  bool share_stages = true;
  // Hashes kept for the next play of the same plan (PlanDigest); computed anew when null.
  PlanDigest* plan_digest = nullptr;
  // Compressed plans: periods of a steady state that repeat the one before exactly (same
  // events, memory and waits, shifted by a micro-batch and a period) are written down instead of
  // played (Timeline::events_skipped). Reports are the same without it.
  bool steady_skip = true;
};

// Throws core::InternalError when an invariant breaks (deadlock, negative ledger, leaked bytes).
Timeline play(const parallel::Plan& plan, const PlayOptions& options = {});

// Duration of one op on its program's device (roofline or alpha-beta), including the
// tensor-parallel collectives folded into a compute op.
core::Duration op_duration(const parallel::Plan& plan, const parallel::Program& program,
                           const parallel::Op& op);
// The op with a collective beside it for its whole run (Plan::collective_sms): a compute op on
// the SMs the collective leaves (cost::beside_collective, docs/collectives.md); any other op as
// op_duration.
core::Duration contended_op_duration(const parallel::Plan& plan, const parallel::Program& program,
                                     const parallel::Op& op);
// The tensor-parallel collectives' share of a compute op's duration (zero when none).
core::Duration tensor_parallel_time(const parallel::Plan& plan, const parallel::Program& program,
                                    const parallel::Op& op);

}  // namespace trainsim::exec
