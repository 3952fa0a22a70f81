#pragma once
// A time-ordered event queue with deterministic tie-breaking: events at the same instant run in
// order of their key, then in the order they were scheduled (sequence number), so every run of
// the same input is identical.
// The queue is a value: a sweep runs many simulations side by side, each with its own queue.
#include <cstdint>
#include <queue>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace trainsim::core {

template <class Payload>
class EventQueue {
 public:
  struct Event {
    TimePoint time;
    std::uint64_t key;
    std::uint64_t seq;
    Payload payload;
  };

  // Schedules `payload` at `time`; `time` must not lie before the current clock.
  void schedule(TimePoint time, Payload payload, std::uint64_t key = 0) {
    TRAINSIM_CHECK(!(time < now_), "event scheduled before the current time");
    heap_.push(Event{time, key, next_seq_++, std::move(payload)});
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  TimePoint now() const { return now_; }
  std::uint64_t events_run() const { return popped_; }

  // The earliest event, left in place (the queue must not be empty).
  const Event& next() const { return heap_.top(); }
  // Removes the earliest event and advances the clock to it. The clock never goes back.
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    now_ = e.time;
    ++popped_;
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time != b.time) return a.time > b.time;
      if (a.key != b.key) return a.key > b.key;
      return a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  TimePoint now_{};
  std::uint64_t next_seq_ = 0;
  std::uint64_t popped_ = 0;
};

}  // namespace trainsim::core
