// core::FlatTable against std::map on the same operations: growth past the first slots, clear()
// keeping nothing, and probing under a hash that sends every key to one slot.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>

#include "sim/core/flat_table.hpp"

using trainsim::core::FlatTable;

namespace {
struct Spread {
  std::size_t operator()(std::uint64_t k) const { return static_cast<std::size_t>(k * 0x9E3779B97F4A7C15ULL >> 7); }
};
struct OneSlot {
  std::size_t operator()(std::uint64_t) const { return 5; }
};

template <typename Hash>
void check_against_map() {
  FlatTable<std::uint64_t, int, Hash> table;
  for (int round = 0; round < 3; ++round) {
    table.clear();
    std::map<std::uint64_t, int> reference;
    // 1,000 lookups over 300 keys (so most keys are found again), beyond the first 64 slots.
    for (int i = 0; i < 1000; ++i) {
      const std::uint64_t key = static_cast<std::uint64_t>((i * 7919 + round) % 300);
      auto [value, added] = table.find_or_add(key);
      const bool fresh = reference.find(key) == reference.end();
      REQUIRE(added == fresh);
      if (added) {
        CHECK(*value == 0);
        *value = i;
        reference[key] = i;
      } else {
        CHECK(*value == reference[key]);
      }
    }
    CHECK(table.size() == reference.size());
  }
}
}  // namespace

TEST_CASE("a flat table finds what it was given, across growth and clears") { check_against_map<Spread>(); }

TEST_CASE("a flat table probes past colliding keys") { check_against_map<OneSlot>(); }

TEST_CASE("a cleared flat table holds nothing") {
  FlatTable<std::uint64_t, int, Spread> table;
  *table.find_or_add(42).first = 7;
  table.clear();
  CHECK(table.size() == 0);
  auto [value, added] = table.find_or_add(42);
  CHECK(added);
  CHECK(*value == 0);
}
