// The period detector both of the player's skips use (sim/exec/period_detector.hpp).
#include <catch2/catch.hpp>
#include <string>

#include "sim/exec/period_detector.hpp"

using trainsim::exec::PeriodDetector;
using trainsim::exec::Repetition;
using trainsim::exec::repetition;

namespace {
Repetition of(const std::string& s, std::size_t from, std::size_t period) {
  return repetition(from, period, s.size(),
                    [&](std::size_t a, std::size_t b) { return s[a] == s[b]; });
}
}  // namespace

TEST_CASE("repetition counts the whole periods and the part period a sequence repeats") {
  // "abcabcabx" from 3, period 3: items 3..7 repeat the item 3 back (a b c a b), item 8 ('x'
  // against 'c') does not: 5 items, one whole period and 2 more.
  const Repetition r = of("abcabcabx", 3, 3);
  CHECK(r.periods == 1);
  CHECK(r.part == 2);
  CHECK(r.items(3) == 5);
  // To the end of the sequence: "abababab" from 2, period 2: items 2..7, three whole periods.
  const Repetition whole = of("abababab", 2, 2);
  CHECK(whole.periods == 3);
  CHECK(whole.part == 0);
  // Nothing repeats: the first item differs.
  const Repetition none = of("abcd", 2, 2);
  CHECK(none.periods == 0);
  CHECK(none.part == 0);
  // The end bounds the run: "aaaaaa" from 1, period 1, end 4: items 1..3.
  const Repetition bounded =
      repetition(1, 1, 4, [](std::size_t, std::size_t) { return true; });
  CHECK(bounded.items(1) == 3);
}

TEST_CASE("the period detector proposes the distance to the last anchor of the same key") {
  PeriodDetector<std::size_t> anchors;  // key -> position of its last anchor
  // Keys at positions 0..5: 7 9 7 9 7 4. The third anchor (key 7 at 2) finds position 0,
  // the fourth (9 at 3) position 1, the fifth (7 at 4) position 2: each the last of its key.
  const std::uint64_t keys[] = {7, 9, 7, 9, 7, 4};
  const std::size_t expected[] = {0, 0, 0, 1, 2, 0};
  const bool found[] = {false, false, true, true, true, false};
  for (std::size_t pos = 0; pos < 6; ++pos) {
    const auto [f, earlier] = anchors.exchange(keys[pos], pos);
    CHECK(f == found[pos]);
    if (f) CHECK(earlier == expected[pos]);
  }
  // at: the anchor kept under a key (key 7's last at position 4), value-initialised if none.
  CHECK(anchors.at(7) == 4);
  CHECK(anchors.at(5) == 0);
  std::size_t kept = 0;
  anchors.for_each([&](std::size_t&) { ++kept; });
  CHECK(kept == 4);  // keys 7, 9, 4 and 5
  anchors.clear();
  CHECK(anchors.exchange(7, 10).first == false);
}
