#include <catch2/catch.hpp>

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
