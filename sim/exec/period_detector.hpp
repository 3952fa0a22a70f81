#pragma once
// The one detector of repeated periods, which both of the player's skips use: the event loop's
// (steady_state.cpp, over the ends of the first program's macro ops) and the allocator replay's
// (allocator_replay.cpp, over the first points of the memory log's macro units). Both go the same
// three steps:
//   1. find: an anchor whose key was seen at an earlier anchor proposes the distance between
//      them as a period (PeriodDetector::exchange);
//   2. verify: the state at a later anchor equals the state an anchor of that key kept, moved one
//      period on (the caller's comparison: of two projections of the loop's state, SteadyMark;
//      of two allocator states, canonical blocks);
//   3. extrapolate: count how many more periods the input goes on repeating (repetition) and
//      write them down instead of playing them.
// What differs is the input. The loop's state has no cheap fingerprint (every op's times move
// each period), so its key is the anchor's template and its turn among `lag` (SteadyMark::full
// tells a light mark from a full one); the allocator's state has one (its canonical blocks'
// fingerprint, hw::CachingAllocator::fingerprint), so its key is that, with the template.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>

namespace trainsim::exec {

// How far a sequence goes on repeating itself `period` items on: from item `from`, `periods`
// whole periods of items x with same(x - period, x), then `part` more.
struct Repetition {
  std::size_t periods = 0, part = 0;
  std::size_t items(std::size_t period) const { return periods * period + part; }
};

// Items x = from, from + 1, ... below `end` while same(x - period, x).
template <typename Same>
Repetition repetition(std::size_t from, std::size_t period, std::size_t end, Same&& same) {
  std::size_t x = from;
  while (x < end && same(x - period, x)) ++x;
  return {(x - from) / period, (x - from) % period};
}

// The last anchor seen under each key.
template <typename Anchor>
class PeriodDetector {
 public:
  // Keeps `now` under `key`; returns the anchor it replaces (false: the key is new).
  std::pair<bool, Anchor> exchange(std::uint64_t key, Anchor now) {
    auto [it, fresh] = last_.try_emplace(key, now);
    if (fresh) return {false, Anchor{}};
    return {true, std::exchange(it->second, std::move(now))};
  }
  // The anchor under `key`, made when there is none.
  Anchor& at(std::uint64_t key) { return last_[key]; }
  void clear() { last_.clear(); }
  template <typename F>
  void for_each(F&& f) {
    for (auto& [key, anchor] : last_) f(anchor);
  }

 private:
  std::unordered_map<std::uint64_t, Anchor> last_;
};

}  // namespace trainsim::exec
