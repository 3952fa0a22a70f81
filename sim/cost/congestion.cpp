#include "sim/cost/congestion.hpp"

#include "sim/cost/all_to_all.hpp"

#include <algorithm>
#include <stdexcept>

namespace trainsim::cost {

namespace {

void check(const hw::LinkSpec& inter, std::int64_t pod_members, double oversubscription) {
  if (pod_members < 0) throw std::invalid_argument("members per pod must not be negative");
  if (!(oversubscription >= 1)) throw std::invalid_argument("oversubscription must be at least 1");
  if (!(inter.bandwidth.bytes_per_s > 0))
    throw std::invalid_argument("link '" + inter.name + "': bandwidth must be positive");
}

}  // namespace

hw::LinkSpec congested_link(const hw::LinkSpec& spanning, const hw::LinkSpec& inter,
                            std::int64_t pod_members, double oversubscription) {
  check(inter, pod_members, oversubscription);
  hw::LinkSpec l = spanning;
  if (pod_members == 0) return l;
  const double uplink_share =
      static_cast<double>(pod_members) * inter.bandwidth.bytes_per_s / oversubscription;
  l.bandwidth.bytes_per_s = std::min(l.bandwidth.bytes_per_s, uplink_share);
  return l;
}

double congestion_factor(const hw::LinkSpec& spanning, const hw::LinkSpec& inter,
                         std::int64_t pod_members, double oversubscription) {
  const hw::LinkSpec l = congested_link(spanning, inter, pod_members, oversubscription);
  return spanning.bandwidth.bytes_per_s / l.bandwidth.bytes_per_s;
}

core::Duration all_to_all_uplink_time(core::Bytes bytes, std::int64_t n, std::int64_t pod_members,
                                      const hw::LinkSpec& inter, double oversubscription) {
  check(inter, pod_members, oversubscription);
  if (n < 1) throw std::invalid_argument("all-to-all needs at least 1 rank");
  if (bytes.value < 0) throw std::invalid_argument("all-to-all size must not be negative");
  if (pod_members == 0 || n == 1 || bytes.value == 0) return core::Duration{};
  const std::int64_t m = std::clamp<std::int64_t>(pod_members, 1, n);
  const double out_of_pod = static_cast<double>(n - m) / static_cast<double>(n) *
                            static_cast<double>(bytes.value);
  return core::duration_from_seconds(out_of_pod * oversubscription / inter.bandwidth.bytes_per_s) +
         inter.latency * (n - 1);
}

core::Duration all_to_all_across_pods(core::Bytes bytes, std::int64_t n,
                                      std::int64_t ranks_per_node, std::int64_t pod_members,
                                      const hw::LinkSpec& intra, const hw::LinkSpec& inter,
                                      double oversubscription) {
  return std::max(all_to_all_across_nodes(bytes, n, ranks_per_node, intra, inter),
                  all_to_all_uplink_time(bytes, n, pod_members, inter, oversubscription));
}

}  // namespace trainsim::cost
