#include "sim/parallel/eager_modules.hpp"

#include "sim/scenario/precision.hpp"

namespace trainsim::parallel {

namespace {
using models::LinearRole;
const models::LinearWeight& linear(const models::Layer& l, LinearRole r) {
  return l.linears[static_cast<std::size_t>(r)];
}
}  // namespace

EagerExtra eager_extra(const models::Layer& l, int activation_bytes, int norm_bytes, bool compiled) {
  EagerExtra x;
  const std::int64_t e = activation_bytes;
  switch (l.kind) {
    case models::LayerKind::rmsnorm:
      // output = norm_bytes x s x h: the upcast holds s x h fp32 elements.
      if (!compiled) x.replicated = core::Bytes{l.output.value / norm_bytes} * 4;
      break;
    case models::LayerKind::attention: {
      const auto& q = linear(l, LinearRole::q);
      const auto& k = linear(l, LinearRole::k);
      if (q.count != 1 || k.count != 1) break;  // not a Q/K/V attention (MLA)
      const core::Bytes shq = core::Bytes{q.tokens} * q.out, shk = core::Bytes{k.tokens} * k.out;
      x.split = (shq - shk) * (2 * e);
      if (!compiled) x.split += shq * e;
      break;
    }
    case models::LayerKind::mlp: {
      const auto& up = linear(l, LinearRole::up);
      if (compiled || l.experts > 1 || linear(l, LinearRole::gate).count == 0) break;
      x.split = core::Bytes{up.tokens} * up.out * e;
      break;
    }
    default:
      break;
  }
  return x;
}

void apply_modules(const scenario::Scenario& s, std::int64_t t, bool sp, std::vector<LayerShard>& shards) {
  if (!s.training.eager_modules) return;
  const auto& m = s.model;
  const int e = models::dtype_bytes(scenario::activation_dtype(s.training.precision));
  const int norm_bytes = scenario::autocast(s.training.precision) ? 4 : e;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const EagerExtra x = eager_extra(m.graph[m.order[i]], e, norm_bytes, s.training.compile);
    shards[i].saved += x.split / t + (sp ? x.replicated / t : x.replicated);
  }
}

}  // namespace trainsim::parallel
