// The layouts `trainsim plan` searches: one function per dimension, then the exclusions that
// apply to a combination (compose), then the product walked in order.
#include "sim/sweep/plan_candidates.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>
#include <string>

#include "sim/core/error.hpp"

namespace trainsim::sweep {

namespace {

// Why enumeration found no layout: each way the search was cut, once, in the order met.
struct Refusals {
  std::vector<std::string> reasons;
  void add(const std::string& why) {
    if (std::find(reasons.begin(), reasons.end(), why) == reasons.end()) reasons.push_back(why);
  }
  std::string join(std::int64_t gpus, const scenario::Scenario& s0) const {
    std::string out = "no layout of " + std::to_string(gpus) + " GPUs for model '" + s0.model.name +
                      "' (global batch " + std::to_string(s0.training.global_batch) + "): ";
    constexpr std::size_t kShown = 8;
    for (std::size_t i = 0; i < reasons.size() && i < kShown; ++i)
      out += (i ? "; " : "") + reasons[i];
    if (reasons.size() > kShown)
      out += "; and " + std::to_string(reasons.size() - kShown) + " more";
    return out + " (0 layouts considered; try another --gpus, or change the global batch)";
  }
};


// Calls f with every combination of one value per axis, the first axis slowest.
template <class F>
void for_each_combination(const std::vector<std::vector<std::int64_t>>& axes, F&& f) {
  for (const auto& axis : axes)
    if (axis.empty()) return;
  std::vector<std::size_t> at(axes.size(), 0);
  std::vector<std::int64_t> v(axes.size());
  for (;;) {
    for (std::size_t k = 0; k < axes.size(); ++k) v[k] = axes[k][at[k]];
    f(v);
    std::size_t k = axes.size();
    while (k > 0 && ++at[k - 1] == axes[k - 1].size()) at[--k] = 0;
    if (k == 0) return;
  }
}

std::vector<std::int64_t> powers_of_two(std::int64_t hi) {
  std::vector<std::int64_t> out;
  for (std::int64_t v = 1; v <= hi; v *= 2) out.push_back(v);
  return out;
}

// What the search reads of the model.
struct ModelShape {
  std::set<std::int64_t> heads, kv;
  std::int64_t experts = 0;  // gcd of the MoE layers' experts: the expert degrees that divide all
  std::int64_t layers = 0, blocks = 0;
  bool attention = false;
};

ModelShape model_shape(const scenario::Scenario& s0) {
  ModelShape m;
  for (auto v : s0.model.order) {
    const models::Layer& l = s0.model.graph[v];
    if (l.experts > 1) m.experts = std::gcd(m.experts, l.experts);
    if (l.heads > 0) m.heads.insert(l.heads);
    if (l.kv_heads > 0) m.kv.insert(l.kv_heads);
    m.attention |= l.kind == models::LayerKind::attention;
  }
  m.layers = static_cast<std::int64_t>(s0.model.order.size());
  m.blocks = s0.model.num_blocks;
  return m;
}

// How a layout shards its model states: ZeRO's ladder, FSDP over every data rank, or HSDP
// within each node.
enum class Sharding : std::int64_t { zero, fsdp, hsdp };

// The dimensions, each a list of values (whether a value divides the rest is compose's matter,
// so the refusals come in the order the walk meets them).
// Tensor: powers of two within a node.
std::vector<std::int64_t> tensor_degrees(std::int64_t gpn) { return powers_of_two(gpn); }
// Pipeline: 1 up to the GPUs and the layers.
std::vector<std::int64_t> pipeline_degrees(const ModelShape& m, std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t p = 1; p <= n && p <= m.layers; ++p) out.push_back(p);
  return out;
}
// Context for long sequences (docs/scenarios.md, "Context parallelism"): 2, 4 and 8 where they
// divide seq_len / 2, with flash attention and attention layers.
std::vector<std::int64_t> context_degrees(const scenario::Scenario& s0, const ModelShape& m) {
  std::vector<std::int64_t> out{1};
  if (m.attention && s0.training.flash_attention && s0.training.seq_len >= 32768)
    for (std::int64_t c = 2; c <= 8; c *= 2)
      if (s0.training.seq_len % (2 * c) == 0) out.push_back(c);
  return out;
}
// Micro-batch: powers of two up to --max-micro-batch.
std::vector<std::int64_t> micro_batches(const PlanOptions& o) { return powers_of_two(o.max_micro_batch); }
// Virtual stages: 1 (1F1B), or 2 and 4 (interleaved).
std::vector<std::int64_t> virtual_stage_counts() { return {1, 2, 4}; }
std::vector<std::int64_t> shardings() {
  return {std::int64_t(Sharding::zero), std::int64_t(Sharding::fsdp), std::int64_t(Sharding::hsdp)};
}

std::string str(std::int64_t v) { return std::to_string(v); }

bool tensor_fits(const ModelShape& m, std::int64_t t) {
  bool ok = true;
  for (auto h : m.heads) ok = ok && h % t == 0;
  for (auto h : m.kv) ok = ok && (h % t == 0 || t % h == 0);
  return ok;
}

// The layout of one combination (tensor, pipeline, context, micro-batch, virtual stages,
// sharding), or none when it does not divide or compose; why, in `refused`, where another --gpus
// or global batch would help.
std::optional<Layout> compose(const ModelShape& m, std::int64_t n, std::int64_t gpn, std::int64_t g,
                              const std::vector<std::int64_t>& x, Refusals& refused) {
  const std::int64_t t = x[0], p = x[1], c = x[2], mb = x[3], v = x[4];
  const auto sharding = static_cast<Sharding>(x[5]);
  if (n % t) return refused.add("tensor " + str(t) + " does not divide " + str(n) + " GPUs"), std::nullopt;
  if (!tensor_fits(m, t)) return refused.add("tensor " + str(t) + " does not divide the attention heads"), std::nullopt;
  if (p > n / t || (n / t) % p) return std::nullopt;
  if (m.blocks > 0 && m.blocks % p)
    return refused.add("pipeline " + str(p) + " does not divide the model's " + str(m.blocks) + " blocks"),
           std::nullopt;
  if ((n / (t * p)) % c) return std::nullopt;
  const std::int64_t d = n / (t * p * c);
  if (g % d)
    return refused.add("data " + str(d) + " (tensor " + str(t) + ", pipeline " + str(p) +
                       (c > 1 ? ", context " + str(c) : std::string()) + ") does not divide the global batch " +
                       str(g)),
           std::nullopt;
  if ((g / d) % mb) return std::nullopt;
  const std::int64_t ga = g / (d * mb);
  if (v > 1 && (p == 1 || (m.blocks > 0 && m.blocks % (p * v)) || p * v > m.layers || ga % p)) return std::nullopt;
  Layout l{d, t, p, v, mb, ga, v > 1, 0, scenario::Recompute::none};
  l.context = c;
  // MoE models: the largest expert degree dividing every layer's experts and the ranks an
  // expert group may take, data x context (fewest expert parameters per device).
  l.expert = m.experts > 1 ? std::gcd(d * c, m.experts) : 1;
  if (sharding != Sharding::zero) {
    // FSDP over every data rank and, across nodes, HSDP within each node, for every model,
    // with any pipeline and context degree; an MoE model's expert group inside the shard
    // group x context.
    if (sharding == Sharding::fsdp ? d == 1 : !(d > gpn && gpn > 1 && d % gpn == 0)) return std::nullopt;
    l.fsdp_shard = sharding == Sharding::fsdp ? d : gpn;
    if (m.experts > 1) l.expert = std::gcd(l.fsdp_shard * c, m.experts);
  }
  return l;
}

}  // namespace

std::vector<Layout> candidate_layouts(const scenario::Scenario& s0, std::int64_t n, std::int64_t gpn,
                                      const PlanOptions& o, NodeShapeSource source) {
  const ModelShape m = model_shape(s0);
  const std::vector<std::vector<std::int64_t>> axes = {tensor_degrees(gpn),   pipeline_degrees(m, n),
                                                       context_degrees(s0, m), micro_batches(o),
                                                       virtual_stage_counts(), shardings()};
  std::vector<Layout> out;
  Refusals refused;
  for_each_combination(axes, [&](const std::vector<std::int64_t>& x) {
    if (auto l = compose(m, n, gpn, s0.training.global_batch, x, refused)) out.push_back(*l);
  });
  if (out.empty()) {
    if (gpn < n)
      refused.add("tensor stays within a node of " + str(gpn) + " GPUs (" +
                  (source == NodeShapeSource::scenario ? "cluster.gpus_per_node" : "--gpus-per-node") + ")");
    throw core::ConfigError({"--gpus " + str(n), 0, 0}, "", refused.join(n, s0));
  }
  return out;
}

}  // namespace trainsim::sweep
