#include "sim/cost/all_to_all.hpp"

#include <algorithm>
#include <stdexcept>

namespace trainsim::cost {

core::Duration all_to_all_across_nodes(core::Bytes bytes, std::int64_t n,
                                       std::int64_t ranks_per_node, const hw::LinkSpec& intra,
                                       const hw::LinkSpec& inter) {
  if (n < 1) throw std::invalid_argument("all-to-all needs at least 1 rank");
  if (bytes.value < 0) throw std::invalid_argument("all-to-all size must not be negative");
  if (!(intra.bandwidth.bytes_per_s > 0) || !(inter.bandwidth.bytes_per_s > 0))
    throw std::invalid_argument("all-to-all links need a positive bandwidth");
  if (n == 1 || bytes.value == 0) return core::Duration{};
  const std::int64_t p = std::clamp<std::int64_t>(ranks_per_node, 1, n);
  const double s = static_cast<double>(bytes.value), nn = static_cast<double>(n);
  const double remote = static_cast<double>(n - p) * s / (nn * inter.bandwidth.bytes_per_s);
  const double local = static_cast<double>(p - 1) * s / (nn * intra.bandwidth.bytes_per_s);
  return core::duration_from_seconds(std::max(remote, local)) + inter.latency * (n - 1);
}

}  // namespace trainsim::cost
