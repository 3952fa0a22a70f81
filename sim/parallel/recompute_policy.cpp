#include "sim/parallel/recompute_policy.hpp"

#include <algorithm>
#include <initializer_list>

#include "models/param_tensors.hpp"
#include "sim/parallel/eager_modules.hpp"

namespace trainsim::parallel {

namespace {

using models::LayerKind;
using models::LinearRole;

const models::LinearWeight& weight(const models::Layer& l, LinearRole r) {
  return l.linears[static_cast<std::size_t>(r)];
}

bool has_linears(const models::Layer& l) {
  return std::any_of(l.linears.begin(), l.linears.end(),
                     [](const models::LinearWeight& w) { return w.count > 0; });
}

// The block's mm, counted across its layers (the policy's per-checkpoint counter).
struct MmCounter {
  std::int64_t e = 2, t = 1;
  std::int32_t count = 0;

  // One linear of the layer: an mm of tokens x in by in x out. Column-parallel weights split
  // their output over the tensor ranks, row-parallel ones their input (the output is the
  // full-width partial sum before the all-reduce).
  void linear(const models::LinearWeight& w, OpPolicyLayer& p) {
    if (w.count <= 0 || w.in <= 0 || w.out <= 0 || w.tokens <= 0) return;
    const auto [in, out] = models::stored_dims(w, t);
    // The odd-numbered mm (1st, 3rd, ...) are saved; `meta[mm_count] % 2 == 0` recomputes.
    if (++count % 2 == 1) {
      p.kept += core::Bytes{e * w.tokens * out};
      ++p.saved_mm;
      return;
    }
    p.flops += 2.0 * double(w.tokens) * double(in) * double(out);
    p.bytes += core::Bytes{e * w.tokens * (in + out)};
    ++p.gemms;
  }
  void linears(const models::Layer& l, std::initializer_list<LinearRole> roles, OpPolicyLayer& p) {
    for (LinearRole r : roles) linear(weight(l, r), p);
  }
};

// An attention layer: q, k, v, the core (SDPA), o.
void attention(const models::Layer& l, const LayerShard& sh, bool flash, MmCounter& mm,
               OpPolicyLayer& p) {
  mm.linears(l, {LinearRole::q, LinearRole::k, LinearRole::v}, p);
  if (l.attention_core_flops > 0) {
    const models::LinearWeight& q = weight(l, LinearRole::q);
    if (flash) {  // the kernel's output (e x s x hq) and its fp32 log-sum-exp (4 x heads x s)
      p.kept += core::Bytes{(mm.e * q.tokens * q.out + 4 * l.heads * q.tokens) / mm.t};
    } else {  // the decomposed core (bmm, softmax: none saved) runs again
      p.flops += sh.core_flops;
      p.bytes += sh.saved_core;
      p.gemms += 2;
    }
  }
  mm.linears(l, {LinearRole::o}, p);
}

// A dense MLP: gate and up, the activation (and the product), down.
void mlp(const models::Layer& l, MmCounter& mm, OpPolicyLayer& p) {
  mm.linears(l, {LinearRole::gate, LinearRole::up}, p);
  const models::LinearWeight& up = weight(l, LinearRole::up);
  const std::int64_t inputs = weight(l, LinearRole::gate).count > 0 ? 2 : 1;
  // The element-wise kernels between the GEMMs read their inputs and write one output, as the
  // layer's io counts them (models/kinds_transformer.cpp).
  p.bytes += core::Bytes{mm.e * (inputs + 1) * up.tokens * up.out / mm.t};
  mm.linears(l, {LinearRole::down}, p);
}

}  // namespace

std::vector<OpPolicyLayer> op_policy(const models::Model& m, const std::vector<LayerShard>& shards,
                                     std::int64_t tensor, const OpPolicyOptions& o) {
  std::vector<OpPolicyLayer> out(m.order.size());
  MmCounter mm{models::dtype_bytes(o.activation), std::max<std::int64_t>(1, tensor), 0};
  const bool flash = o.flash;
  int block = -1;
  for (std::size_t i = 0; i < m.order.size(); ++i) {
    const models::Layer& l = m.graph[m.order[i]];
    const LayerShard& sh = shards[i];
    OpPolicyLayer& p = out[i];
    if (l.block != block) mm.count = 0;  // a new checkpoint, a new counter
    block = l.block;
    if (l.block < 0 || l.kind == LayerKind::generic) {
      p.kept = sh.saved;
      continue;
    }
    const bool dense_linears = has_linears(l) && l.experts <= 1;
    if ((l.kind == LayerKind::attention || l.kind == LayerKind::mlp) && dense_linears) {
      if (l.kind == LayerKind::attention)
        attention(l, sh, flash, mm, p);
      else
        mlp(l, mm, p);
      if (o.eager) {  // eager element-wise kernels (split with the heads or the ffn)
        const EagerExtra x = eager_io(l, int(mm.e), o.norm_bytes, o.compiled);
        p.bytes += x.split / mm.t;
      }
    } else if (l.kind == LayerKind::linear) {
      mm.linears(l, {LinearRole::other}, p);
    } else {
      // Element-wise layers (norms, adds, activations, dropout) and layers whose mm trainsim
      // does not list (multi-head latent attention, routed experts): run again whole.
      p.flops = sh.flops;
      p.bytes = sh.io;
      p.gemms = sh.matmul ? 2 : 0;
    }
    p.kept = std::min(p.kept, sh.saved);
  }
  return out;
}

}  // namespace trainsim::parallel
