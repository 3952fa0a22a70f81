#pragma once
// Runs points: one full simulation each (load -> lower -> play -> summarize), each on its own
// engine value, on N worker threads, handing results on in point order.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/exec/allocator_memo.hpp"
#include "sim/report/summary.hpp"
#include "sim/sweep/spec.hpp"

namespace trainsim::sweep {

enum class Status { fits, oom, invalid };
std::string_view to_string(Status s);

struct PointResult {
  Status status = Status::invalid;
  std::string reason;                     // why a point is invalid (the ConfigError message)
  std::optional<core::ConfigError> error;  // that error (a sweep relocates it to the axis value)
  std::optional<report::Summary> summary;  // fits and oom points
};

// Simulates base + sets. A ConfigError or OverflowError (the point's scenario is not valid) is
// an `invalid` result; an InternalError propagates (a bug must not look like a result).
// `memo`: caching-allocator replays shared with the other points (sim/exec/allocator_memo.hpp;
// results are the same without it).
PointResult run_point(const BaseScenario& base, const std::vector<std::string>& sets,
                      exec::AllocatorMemo* memo = nullptr);

// The same as run_point(spec.base, point_sets(spec, p), memo), except that an invalid point
// whose error lies in one of its axis values names that value's place in the sweep file (not
// the `--set key=value` text the point was loaded with).
PointResult run_point(const SweepSpec& spec, const Point& p, exec::AllocatorMemo* memo = nullptr);

// Calls work(i) for i in [0, n) on `jobs` threads and sink(i, result) for i = 0, 1, ... in order
// as soon as each is ready (a reorder buffer), the sink one call at a time. When *stop becomes
// true, no new item starts; items in flight finish, and only the unbroken prefix reaches the
// sink. The first exception from work or sink stops the run and is rethrown after the join.
// Returns how many items reached the sink.
template <class R>
std::size_t run_in_order(std::size_t n, int jobs, const std::function<R(std::size_t)>& work,
                         const std::function<void(std::size_t, R&&)>& sink,
                         std::atomic<bool>* stop = nullptr) {
  std::mutex mu;
  std::map<std::size_t, R> ready;
  std::size_t next_item = 0, next_out = 0;
  std::exception_ptr error;
  std::atomic<bool> local_stop{false};
  std::atomic<bool>& halt = stop ? *stop : local_stop;
  // No more threads than items: a thread with nothing to do only costs its start.
  const int threads = static_cast<int>(std::clamp<std::size_t>(
      static_cast<std::size_t>(std::max(jobs, 1)), 1, std::max<std::size_t>(n, 1)));
  // Items go out in runs of consecutive ones (at least eight runs per thread): a sweep's
  // neighbouring points differ in its innermost axes, and one thread playing them in turn reuses
  // its plan and the allocator replays the one before stored, where two threads playing them at
  // once would each start from scratch.
  const std::size_t run = std::clamp<std::size_t>(n / (static_cast<std::size_t>(threads) * 8), 1, 32);
  auto worker = [&] {
    std::size_t i = 0, end = 0;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (halt.load() || error) return;
        if (i == end) {
          if (next_item >= n) return;
          i = next_item;
          end = std::min(n, next_item + run);
          next_item = end;
        }
      }
      try {
        R r = work(i);
        std::lock_guard<std::mutex> lock(mu);
        if (error) return;
        ready.emplace(i++, std::move(r));
        while (!ready.empty() && ready.begin()->first == next_out) {
          R out = std::move(ready.begin()->second);
          ready.erase(ready.begin());
          sink(next_out, std::move(out));
          ++next_out;
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads));
  for (int t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error& e) {
      // The system refused a thread (a process or memory limit): stop the started workers,
      // join them (a joinable std::thread destroyed would terminate), then say what failed.
      std::lock_guard<std::mutex> lock(mu);
      if (!error)
        error = std::make_exception_ptr(core::ResourceError(
            "cannot start worker thread " + std::to_string(t + 1) + " of " +
            std::to_string(threads) + " (" + e.what() + "); run with fewer threads (-j)"));
      break;
    }
  }
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return next_out;
}

// Worker threads to use for `-j 0`: the machine's hardware threads.
int default_jobs();

// Most worker threads a command starts: 4 x the hardware threads (at least 4, at most 256).
// More only add memory (each thread keeps its own plans and model cache) and thread starts.
int max_jobs();

// The worker threads for `-j requested` (0 = default_jobs()) over `items` items: at most
// max_jobs() and `items` (at least 1). When an explicit request is lowered, `note` says so
// ("-j 1000 lowered to 4 worker threads (4 points to run)"; `what` names the items).
int worker_threads(int requested, std::size_t items, std::string* note = nullptr,
                   const char* what = "points");

}  // namespace trainsim::sweep
