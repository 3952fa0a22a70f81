#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/event_queue.hpp"

using namespace trainsim::core;

TEST_CASE("events run in time order and ties run in insertion order", "[engine]") {
  EventQueue<int> q;
  q.schedule(TimePoint{30}, 1);
  q.schedule(TimePoint{10}, 2);
  q.schedule(TimePoint{30}, 3);
  q.schedule(TimePoint{10}, 4);
  std::vector<int> seen;
  while (!q.empty()) seen.push_back(q.pop().payload);
  CHECK(seen == std::vector<int>{2, 4, 1, 3});
  CHECK(q.now().ns == 30);
  CHECK(q.events_run() == 4);
}

TEST_CASE("an event scheduled in the past is an internal error", "[engine]") {
  EventQueue<int> q;
  q.schedule(TimePoint{50}, 1);
  q.pop();
  CHECK_THROWS_AS(q.schedule(TimePoint{49}, 2), InternalError);
}

TEST_CASE("interleaved pops and schedules run events in (time, key, order scheduled) order",
          "[engine]") {
  // A loop that pops an event and schedules a few more at or after it (the popped root's slot
  // takes the first), against a plain sorted list of what is pending.
  struct Pending {
    std::int64_t time;
    std::uint64_t key, seq;
    int payload;
    bool operator<(const Pending& o) const {
      if (time != o.time) return time < o.time;
      if (key != o.key) return key < o.key;
      return seq < o.seq;
    }
  };
  std::uint64_t state = 12345;
  auto next_random = [&](std::uint64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % n;
  };
  EventQueue<int> q;
  std::vector<Pending> reference;
  std::uint64_t seq = 0;
  int payload = 0;
  auto add = [&](std::int64_t time) {
    const std::uint64_t key = next_random(4);  // many ties of time and key
    q.schedule(TimePoint{time}, payload, key);
    reference.push_back({time, key, seq++, payload++});
  };
  for (int i = 0; i < 20; ++i) add(static_cast<std::int64_t>(next_random(10)));
  int popped = 0;
  while (!q.empty()) {
    REQUIRE(q.size() == reference.size());
    const auto first = std::min_element(reference.begin(), reference.end());
    if (next_random(3) == 0) CHECK(q.next().payload == first->payload);
    const auto e = q.pop();
    REQUIRE(e.payload == first->payload);
    CHECK(e.time.ns == first->time);
    CHECK(e.key == first->key);
    reference.erase(first);
    if (++popped < 3000)
      for (std::uint64_t k = next_random(3); k > 0; --k)
        add(e.time.ns + static_cast<std::int64_t>(next_random(5)));
  }
  CHECK(reference.empty());
  CHECK(q.events_run() == static_cast<std::uint64_t>(popped));
}
