#include "sim/parallel/eager_modules.hpp"

#include "sim/scenario/precision.hpp"

namespace trainsim::parallel {

namespace {
using models::LinearRole;
const models::LinearWeight& linear(const models::Layer& l, LinearRole r) {
  return l.linears[static_cast<std::size_t>(r)];
}
// A Q/K/V attention's query and key projections' outputs per sample (s x hq, s x hk); false for
// other attentions (MLA).
bool qk_outputs(const models::Layer& l, core::Bytes& shq, core::Bytes& shk) {
  const auto& q = linear(l, LinearRole::q);
  const auto& k = linear(l, LinearRole::k);
  if (q.count != 1 || k.count != 1) return false;
  shq = core::Bytes{q.tokens} * q.out;
  shk = core::Bytes{k.tokens} * k.out;
  return true;
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
      core::Bytes shq, shk;
      if (!qk_outputs(l, shq, shk)) break;
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

EagerExtra eager_io(const models::Layer& l, int activation_bytes, int norm_bytes, bool compiled) {
  EagerExtra x;
  const std::int64_t e = activation_bytes, n = norm_bytes;
  switch (l.kind) {
    case models::LayerKind::rmsnorm: {
      if (compiled) break;
      // Per element: x.float() (n + 4; none when already fp32), pow (8), mean (4), the product
      // with rsqrt (8), type_as (4 + n; none in fp32), the weight's product (2n); the layer's
      // io counts 2n.
      const std::int64_t casts = n < 4 ? 2 * (n + 4) : 0;
      x.replicated = core::Bytes{l.output.value / norm_bytes} * (casts + 20);
      break;
    }
    case models::LayerKind::attention: {
      core::Bytes shq, shk;
      if (!qk_outputs(l, shq, shk)) break;
      // K and V expanded to every query head (read hk, write hq wide, each).
      if (shk < shq) x.split = (shq + shk) * (2 * e);
      if (compiled) break;
      // RoPE in fp32 on Q and K (float: e + 4, the complex product: 8, type_as: 4 + e per
      // element) and the attention output's transpose-contiguous copy (2e).
      x.split += (shq + shk) * (16 + 2 * e) + shq * (2 * e);
      break;
    }
    case models::LayerKind::mlp: {
      const auto& up = linear(l, LinearRole::up);
      if (compiled || l.experts > 1 || linear(l, LinearRole::gate).count == 0) break;
      // act(gate) and its product with up as two kernels (2e + 3e per element) where the
      // layer's io counts one (3e).
      x.split = core::Bytes{up.tokens} * up.out * (2 * e);
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
    const models::Layer& l = m.graph[m.order[i]];
    // eager-norm-in-dtype: RMSNorm without x.float() keeps its input as the formula says and
    // its chain runs in the norm's dtype n: x * x (2n per element), mean (n), the product with
    // rsqrt (2n); the weight's product is the layer's io.
    if (!s.training.norm_upcast && l.kind == models::LayerKind::rmsnorm) {
      if (!s.training.compile) {
        const core::Bytes chain = core::Bytes{l.output.value / norm_bytes} * (5 * norm_bytes);
        shards[i].io += sp ? chain / t : chain;
      }
      continue;
    }
    const EagerExtra x = eager_extra(l, e, norm_bytes, s.training.compile);
    shards[i].saved += x.split / t + (sp ? x.replicated / t : x.replicated);
    const EagerExtra io = eager_io(l, e, norm_bytes, s.training.compile);
    shards[i].io += io.split / t + (sp ? io.replicated / t : io.replicated);
  }
}

}  // namespace trainsim::parallel
