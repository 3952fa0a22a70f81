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

TEST_CASE("a shifted queue runs its renumbered events later in the same order", "[engine]") {
  // What a play does when it writes periods down: every waiting event moves the same time later
  // and takes a new payload and key that keep the order; the clock and the count move on.
  EventQueue<int> q;
  q.schedule(TimePoint{10}, 1, 5);
  q.schedule(TimePoint{20}, 2, 3);
  q.schedule(TimePoint{20}, 3, 7);
  q.schedule(TimePoint{15}, 4, 1);
  CHECK(q.pop().payload == 1);  // the root's slot is left for the next event
  std::vector<int> waiting;
  q.for_each([&](const auto& e) { waiting.push_back(e.payload); });
  std::sort(waiting.begin(), waiting.end());
  CHECK(waiting == std::vector<int>{2, 3, 4});
  q.shift(Duration{100}, 6, [](EventQueue<int>::Event& e) {
    e.payload += 10;
    e.key += 2;
  });
  CHECK(q.now().ns == 110);
  CHECK(q.events_run() == 7);
  q.schedule(TimePoint{120}, 5, 6);  // between the two events at 120 (keys 5 and 9)
  std::vector<int> seen;
  std::vector<std::int64_t> times;
  while (!q.empty()) {
    const auto e = q.pop();
    seen.push_back(e.payload);
    times.push_back(e.time.ns);
  }
  CHECK(seen == std::vector<int>{14, 12, 5, 13});
  CHECK(times == std::vector<std::int64_t>{115, 120, 120, 120});
  CHECK(q.events_run() == 11);
}

TEST_CASE("a postponed event runs at its new time among the others, its key kept", "[engine]") {
  EventQueue<int> q;
  for (int i = 0; i < 6; ++i) q.schedule(TimePoint{10 * (i + 1)}, i, 0);  // 10, 20, ..., 60
  (void)q.pop();  // 0 at 10: its slot waits for the next event
  // 1 (at 20) moves to 45; `later` that asks for no change leaves every other event.
  CHECK(q.postpone_first([](const auto& e) { return e.payload == 1 ? TimePoint{45} : e.time; }));
  CHECK_FALSE(q.postpone_first([](const auto& e) { return e.time; }));
  // An earlier time is not a postponement.
  CHECK_FALSE(q.postpone_first([](const auto&) { return TimePoint{15}; }));
  std::vector<int> order;
  std::vector<std::int64_t> times;
  while (!q.empty()) {
    const auto e = q.pop();
    order.push_back(e.payload);
    times.push_back(e.time.ns);
  }
  CHECK(order == std::vector<int>{2, 3, 1, 4, 5});
  CHECK(times == std::vector<std::int64_t>{30, 40, 45, 50, 60});
}
