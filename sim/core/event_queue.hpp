#pragma once
// A time-ordered event queue with deterministic tie-breaking: events at the same instant run in
// order of their key, then in the order they were scheduled (sequence number), so every run of
// the same input is identical (the order is total, so how the heap stores ties cannot show).
// The queue is a value: a sweep runs many simulations side by side, each with its own queue.
//
// A binary min-heap. A discrete-event loop pops an event and, handling it, usually schedules the
// next event of the same stream: pop() leaves the popped event in the root slot (marked taken),
// and the next schedule() puts its event there and sifts it down once — instead of a sift-down
// to remove the root and a sift-up to add the new event.
#include <cstdint>
#include <utility>
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
    Event e{time, key, next_seq_++, std::move(payload)};
    if (root_taken_) {
      root_taken_ = false;
      sift_down(std::move(e));
      return;
    }
    heap_.push_back(std::move(e));
    sift_up(heap_.size() - 1);
  }
  bool empty() const { return heap_.size() == static_cast<std::size_t>(root_taken_); }
  std::size_t size() const { return heap_.size() - static_cast<std::size_t>(root_taken_); }
  TimePoint now() const { return now_; }
  std::uint64_t events_run() const { return popped_; }

  // The earliest event, left in place (the queue must not be empty).
  const Event& next() {
    drop_taken_root();
    return heap_.front();
  }
  // Calls f(event) for every event waiting, in no particular order.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = root_taken_ ? 1 : 0; i < heap_.size(); ++i) f(heap_[i]);
  }
  // Moves the whole queue `dt` later, as if `events` more had been run: every waiting event is
  // `dt` later and `remap` may renumber its key and payload, which must keep the order of any
  // two events (it is not checked; the heap is left as it is).
  template <class F>
  void shift(Duration dt, std::uint64_t events, F&& remap) {
    for (std::size_t i = root_taken_ ? 1 : 0; i < heap_.size(); ++i) {
      heap_[i].time = heap_[i].time + dt;
      remap(heap_[i]);
    }
    now_ = now_ + dt;
    popped_ += events;
  }
  // Moves the first waiting event for which `later(event)` gives a time after its own to that
  // time (its key and sequence number stay); false when none does. For an event a change of
  // circumstance delays: `later` sees each event at most once, in no particular order.
  template <class F>
  bool postpone_first(F&& later) {
    drop_taken_root();
    for (std::size_t i = 0; i < heap_.size(); ++i) {
      const TimePoint t = later(std::as_const(heap_[i]));
      if (!(heap_[i].time < t)) continue;
      Event e = heap_[i];
      e.time = t;
      sift_down(std::move(e), i);
      return true;
    }
    return false;
  }
  // Removes the earliest event and advances the clock to it. The clock never goes back.
  Event pop() {
    drop_taken_root();
    const Event e = heap_.front();
    root_taken_ = true;
    now_ = e.time;
    ++popped_;
    return e;
  }

 private:
  static bool earlier(const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.key != b.key) return a.key < b.key;
    return a.seq < b.seq;
  }
  // The root was popped and no event took its slot: the last event does.
  void drop_taken_root() {
    if (!root_taken_) return;
    root_taken_ = false;
    Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(std::move(last));
  }
  // Puts `e` in slot `hole` (the root by default; whose event is gone) and moves it down to its
  // place (e is not earlier than the slot's parent).
  void sift_down(Event e, std::size_t hole = 0) {
    const std::size_t n = heap_.size();
    for (;;) {
      std::size_t child = 2 * hole + 1;
      if (child >= n) break;
      if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
      if (!earlier(heap_[child], e)) break;
      heap_[hole] = std::move(heap_[child]);
      hole = child;
    }
    heap_[hole] = std::move(e);
  }
  void sift_up(std::size_t hole) {
    Event e = std::move(heap_[hole]);
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / 2;
      if (!earlier(e, heap_[parent])) break;
      heap_[hole] = std::move(heap_[parent]);
      hole = parent;
    }
    heap_[hole] = std::move(e);
  }

  std::vector<Event> heap_;
  bool root_taken_ = false;  // heap_[0] was popped; its slot waits for the next event
  TimePoint now_{};
  std::uint64_t next_seq_ = 0;
  std::uint64_t popped_ = 0;
};

}  // namespace trainsim::core
