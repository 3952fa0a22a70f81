#pragma once
// Replays of a device's memory log through the caching-allocator model, paused part way and
// shared across the plays of a sweep.
//
// A device's allocator run is a function of its start state and its log (the effects in the
// order its ledger took them). Points of a sweep that differ only in timing (all-reduce
// algorithm, links) or in the number of micro-batches log the same records up to late in the
// step: the data-parallel reductions of the last backward interleave with it differently, or
// another global batch starts its cooldown elsewhere. A play resumes the replay of an earlier
// point at the furthest record the two logs share and computes only the rest; it pauses a copy
// of its own replay where its log parted from the closest one stored (where the next point of
// the same kind is likely to part too). Resuming is exact — the paused replay holds everything
// the rest of the run reads — so reports are the same with and without the memo, whatever the
// order the points come in.
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/exec/allocator_model.hpp"

namespace trainsim::exec {

// One device's replay paused before log record `record`: the allocator model (its fingerprint
// detached), the peak so far and the requests that failed.
struct AllocatorReplay {
  AllocatorModel model;
  core::Bytes peak{};
  hw::MemBreakdown at_peak;
  std::int64_t failures = 0;  // requests that did not fit (the first is an OOM point)
  // A failed request as its OOM point will show it (the first only, unless every one is asked
  // for): where in the log — record, macro point (1.., 0 outside a macro), effect (index in the
  // program's effects); record kBeforeStep for the model states booked before the step — and what
  // it met. The play names and times it from its own log, so a resumed replay's points carry the
  // resuming play's times.
  static constexpr std::size_t kBeforeStep = ~std::size_t{0};
  struct Failure {
    std::size_t record;
    std::uint32_t point, effect;
    hw::MemCategory category;
    core::Bytes requested;
    hw::MemBreakdown in_use;  // before the request
    core::Bytes segment;      // the segment it asked for
  };
  std::vector<Failure> failed;
  std::size_t record = 0;
  // The failed requests that reserved more than every earlier failed one (with their segment):
  // under a larger capacity for which the state holds (CachingAllocator::holds_for) the same
  // requests give segments back, the ones that fail are those of these that still do not fit,
  // and the first of them is its first failure.
  struct Rise {
    std::int64_t reserved;
    Failure failure;
  };
  std::vector<Rise> rises;

  explicit AllocatorReplay(const parallel::Program& P) : model(P), peak(model.total()), at_peak(model.state()) {}

  // Whether this replay can go on as one made with `capacity`: made with it, or its state holds
  // for it (CachingAllocator::holds_for) and either nothing failed and its peak fits, or the
  // capacity is larger and its failures are named anew (set_device).
  bool serves(std::int64_t capacity) const {
    const hw::CachingAllocator& a = model.allocator();
    if (a.capacity() == capacity) return true;
    if (!a.holds_for(capacity)) return false;
    return failures == 0 ? a.peak_reserved() <= capacity : capacity > a.capacity();
  }
  // What this replay reports as it is on a device whose allocator has `capacity` bytes
  // (serves(capacity)) and whose CUDA context takes `context` bytes, without copying the
  // allocator's state (a replay that read its whole log is a point's whole outcome). The context
  // lies outside the allocator: it moves the peak and what failed requests met by the
  // difference. Failures are named anew for a larger capacity: the first rise that does not fit
  // it (only the first is recorded: a memo serves plays that record the first only).
  struct Outcome {
    core::Bytes peak;
    hw::MemBreakdown at_peak;
    std::int64_t failures = 0;
    std::vector<Failure> failed;
    core::Bytes allocated_peak, reserved_peak;
    core::Bytes tensors;  // the tensors' bytes held, with the context
  };
  Outcome outcome(core::Bytes capacity, core::Bytes context) const {
    const core::Bytes delta = context - model.context();
    const hw::CachingAllocator& a = model.allocator();
    Outcome o{peak, at_peak, failures, failed, core::Bytes{a.peak_allocated()}, core::Bytes{a.peak_reserved()},
              model.tensors().total() + delta};
    if (capacity.value != a.capacity() && failures != 0) {
      o.failures = 0;
      o.failed.clear();
      for (const Rise& r : rises)
        if (r.reserved > capacity.value) {
          o.failures = 1;
          o.failed.push_back(r.failure);
          break;
        }
    }
    o.peak += delta;
    o.at_peak[hw::MemCategory::reserved] += delta;
    for (Failure& f : o.failed) f.in_use[hw::MemCategory::reserved] += delta;
    return o;
  }
  // The replay as it is on such a device, to go on from (outcome's figures).
  void set_device(core::Bytes capacity, core::Bytes context) {
    Outcome o = outcome(capacity, context);
    const core::Bytes delta = context - model.context();
    peak = o.peak;
    at_peak = o.at_peak;
    failures = o.failures;
    failed = std::move(o.failed);
    for (Rise& r : rises) r.failure.in_use[hw::MemCategory::reserved] += delta;
    model.set_context(context);
    model.allocator().set_capacity(capacity);
  }
};

// Thread-safe; bounded in bytes and in logs per family (the least recently used go first).
class AllocatorMemo {
 public:
  explicit AllocatorMemo(std::size_t max_bytes = std::size_t{64} << 20) : max_bytes_(max_bytes) {}

  using Prefix = std::vector<std::uint64_t>;  // prefix[k]: a hash of log records [0, k)

  struct Match {
    std::shared_ptr<const AllocatorReplay> replay;  // the furthest paused replay this log can resume
    std::size_t shared = 0;  // the most records this log shares with a stored one (0: none)
    // Whether pausing copies on the way is likely to pay: a play of this family resumed a replay
    // before, or this is its first play and the memo shares (see worth_looking).
    bool promising = false;
  };
  // For a device of `family` (its start state but the CUDA context, which lies outside the
  // allocator; see Player) with `context` bytes of context, whose log hashes to `prefix`, with
  // `capacity` bytes for the allocator: a stored replay paused at a record up to which the logs
  // agree and that AllocatorReplay::serves that capacity (the caller adapts it with
  // AllocatorReplay::set_device). `shared` and closeness count logs of the same context only
  // (another device's play parts where its timing does).
  // A log sharing at least `close_from` records counts as close (see worth_looking; 0: half of
  // this log's records).
  Match find(std::uint64_t family, std::int64_t context, const Prefix& prefix, std::int64_t capacity,
             std::size_t close_from = 0);
  // Whether a play should hash its log and look: always while the memo shares (one of the
  // last kWindow lookups found a close log), else one play in
  // sixteen (in a grid of distinct layouts logs part early, and hashing every log would only
  // cost; the sample notices when that changes).
  bool worth_looking();
  // Keeps a played log and replays of it paused at some of its records.
  void add(std::uint64_t family, std::int64_t context, std::shared_ptr<const Prefix> prefix,
           std::vector<std::shared_ptr<const AllocatorReplay>> replays);

  struct Stats {
    std::uint64_t lookups = 0, hits = 0, paused = 0;
    std::uint64_t records = 0;          // log records of the plays that looked
    std::uint64_t records_resumed = 0;  // log records the hits did not replay
    std::size_t bytes = 0;              // held now
  };
  Stats stats() const;

 private:
  struct Log {
    std::int64_t context;
    std::shared_ptr<const Prefix> prefix;
    std::vector<std::shared_ptr<const AllocatorReplay>> replays;
    std::uint64_t used;
    std::size_t bytes;
  };
  void evict();  // the least recently used logs, down to 3/4 of the bound
  static constexpr std::uint64_t kWindow = 64;
  bool sharing() const;
  struct Uses {
    std::uint64_t plays = 0, hits = 0;
  };
  mutable std::mutex mu_;
  std::unordered_map<std::uint64_t, std::vector<Log>> families_;
  std::unordered_map<std::uint64_t, Uses> uses_;  // kept when the family's logs are evicted
  std::uint64_t clock_ = 0, passed_ = 0, since_close_ = 0;
  std::size_t bytes_ = 0, max_bytes_;
  Stats stats_;
};

}  // namespace trainsim::exec
