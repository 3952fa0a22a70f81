#include "sim/core/spelling.hpp"

#include <algorithm>

namespace trainsim::core {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein plus transposition of neighbours ("modle").
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    prev2.swap(prev);
    prev.swap(cur);
  }
  return prev[m];
}

bool near_miss(std::string_view typed, std::string_view intended) {
  if (typed == intended) return false;
  const std::size_t d = edit_distance(typed, intended);
  return d <= 2 && 2 * d < intended.size();
}

std::string closest_spelling(std::string_view typed, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = 0;
  for (const auto& c : candidates) {
    if (c == typed) return {};
    if (!near_miss(typed, c)) continue;
    const std::size_t d = edit_distance(typed, c);
    if (best.empty() || d < best_d) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

}  // namespace trainsim::core
