#pragma once
// Near-miss spelling, for "unknown key 'micro_bach' — did you mean 'micro_batch'?".
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::core {

// Edits (insert, delete, substitute, swap two neighbours) that turn a into b.
std::size_t edit_distance(std::string_view a, std::string_view b);

// Whether `typed` is probably a slip for `intended`: at most 2 edits, and fewer than half the
// intended word's length (so "data" is not a slip for "tensor").
bool near_miss(std::string_view typed, std::string_view intended);

// The candidate `typed` is a near miss for, nearest first (the first listed on a tie); empty
// when none is, or when `typed` is itself a candidate.
std::string closest_spelling(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace trainsim::core
