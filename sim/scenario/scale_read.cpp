#include "sim/scenario/scale_read.hpp"

#include <cmath>

#include "sim/scenario/ranges.hpp"

namespace trainsim::scenario {

namespace {

// An element count written as an integer or in DeepSpeed's float notation (5e7, 1e9): a whole
// number in [min, 1e15].
std::int64_t element_count(const YamlContext& ctx, MapReader& m, const std::string& key,
                           std::int64_t min, std::int64_t fallback) {
  if (!m.has(key)) return fallback;
  const YAML::Node n = m.node(key);
  const std::string path = m.path_of(key);
  const std::string s = read_string(ctx, n, path);
  const auto v = parse_number(s, {.min = static_cast<double>(min), .max = 1e15});
  if (v && *v == std::floor(*v)) return static_cast<std::int64_t>(*v);
  ctx.fail(n, path,
           "expected a whole number of parameter elements from " + std::to_string(min) +
               " to 1e15 (e.g. 50000000 or 5e7), got '" + s + "'");
}

}  // namespace

Zero3Spec read_zero3(const YamlContext& ctx, const YAML::Node& node, const std::string& path,
                     int zero) {
  if (!node.IsMap())
    ctx.fail(node, path,
             "expected a mapping {prefetch_bucket_size, max_live_parameters, "
             "param_persistence_threshold}");
  if (zero != 3)
    ctx.fail(node, path,
             "sets how ZeRO stage 3 fetches parameters: set parallel.zero: 3 (got zero " +
                 std::to_string(zero) + "), or drop parallel.zero3");
  Zero3Spec z;
  MapReader m(ctx, node, path);
  // A bucket of 0 elements prefetches nothing in DeepSpeed; trainsim needs at least one layer
  // per gather, which any bucket of 1 element gives.
  z.prefetch_bucket_size = element_count(ctx, m, "prefetch_bucket_size", 1, z.prefetch_bucket_size);
  z.max_live_parameters = element_count(ctx, m, "max_live_parameters", 1, z.max_live_parameters);
  z.param_persistence_threshold =
      element_count(ctx, m, "param_persistence_threshold", 0, z.param_persistence_threshold);
  m.finish();
  return z;
}

cost::Jitter read_jitter(const YamlContext& ctx, const YAML::Node& node, const std::string& path) {
  if (!node.IsMap())
    ctx.fail(node, path, "expected a mapping {distribution: normal | lognormal, cv: X}");
  cost::Jitter j;
  MapReader m(ctx, node, path);
  j.distribution = m.choice("distribution", {"normal", "lognormal"}, "normal") == "lognormal"
                       ? cost::JitterDistribution::lognormal
                       : cost::JitterDistribution::normal;
  j.cv = m.number_or("cv", {.min = 0, .max = 1},
                     "expected a coefficient of variation from 0 to 1 (e.g. 0.02)", j.cv);
  m.finish();
  return j;
}

void read_pods(const YamlContext& ctx, MapReader& m, ClusterSpec& c) {
  c.pod_nodes = m.int_in_or("pod_nodes", ranges::kClusterCount, 0);
  if (!m.has("oversubscription")) return;
  const YAML::Node n = m.node("oversubscription");
  const std::string path = m.path_of("oversubscription");
  std::string s = read_string(ctx, n, path);
  // Papers write the ratio as uplink:downlink, 1:7 (Llama 3, section 3.3.1).
  const std::string text = s;
  if (s.starts_with("1:")) s = s.substr(2);
  const auto ratio = parse_number(s, {.min = 1, .max = 1024});
  if (!ratio)
    ctx.fail(n, path,
             "expected a pod's downlink to uplink bandwidth ratio from 1 to 1024 (e.g. 7, or "
             "1:7), got '" + text + "'");
  c.oversubscription = *ratio;
  if (c.oversubscription > 1 && c.pod_nodes == 0)
    ctx.fail(n, path,
             "an oversubscription above 1 applies between pods: set cluster.pod_nodes (the "
             "nodes under one full-bisection pod)");
}

}  // namespace trainsim::scenario
