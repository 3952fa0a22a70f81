#include "sim/parallel/layer_gemms.hpp"

#include <algorithm>

namespace trainsim::parallel {
namespace {

using models::LinearRole;
using models::LinearWeight;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

const LinearWeight& weight(const models::Layer& l, LinearRole r) {
  return l.linears[static_cast<std::size_t>(r)];
}

// One GEMM of the weights `roles` fused along their outputs (those with the same input,
// count and tokens as the first present one; any other is a GEMM of its own).
// Experts (count > 1) on `expert` ranks: each rank runs count / expert of them, each on the
// tokens x samples / count rows every one of the `expert` ranks routes to it, as one grouped
// GEMM (batch = its experts).
void linear_gemms(const models::Layer& l, std::initializer_list<LinearRole> roles,
                  std::int64_t t, std::int64_t samples, std::int64_t expert,
                  std::vector<cost::GemmShape>& out) {
  const LinearWeight* first = nullptr;
  std::int64_t n = 0;
  auto flush = [&] {
    if (first == nullptr) return;
    const std::int64_t count = std::max<std::int64_t>(1, first->count);
    const std::int64_t ranks = std::clamp<std::int64_t>(expert, 1, count);
    const std::int64_t m = ceil_div(first->tokens * samples * ranks, count);
    const bool split = first->split && t > 1;
    const std::int64_t k = split && first->row_parallel ? ceil_div(first->in, t) : first->in;
    const std::int64_t cols = split && !first->row_parallel ? ceil_div(n, t) : n;
    out.push_back({m, cols, k, count / ranks});
  };
  for (LinearRole r : roles) {
    const LinearWeight& w = weight(l, r);
    if (w.count <= 0 || w.in <= 0 || w.out <= 0 || w.tokens <= 0) continue;
    if (first != nullptr && w.in == first->in && w.count == first->count &&
        w.tokens == first->tokens && w.row_parallel == first->row_parallel &&
        w.split == first->split) {
      n += w.out;
      continue;
    }
    flush();
    first = &w;
    n = w.out;
  }
  flush();
}

}  // namespace

void layer_gemms(const models::Layer& l, std::int64_t tensor, std::int64_t samples,
                 bool backward, std::vector<cost::GemmShape>& out, std::int64_t expert,
                 bool flash) {
  std::vector<cost::GemmShape> fwd;
  const std::int64_t t = std::max<std::int64_t>(1, tensor);
  linear_gemms(l, {LinearRole::q, LinearRole::k, LinearRole::v}, t, samples, expert, fwd);
  const LinearWeight& q = weight(l, LinearRole::q);
  if (!flash && l.kind == models::LayerKind::attention && l.heads > 0 && q.out > 0 &&
      q.tokens > 0 && l.attention_core_flops > 0) {
    const std::int64_t s = q.tokens, d = ceil_div(q.out, l.heads);
    const std::int64_t batch = samples * ceil_div(l.heads, t);
    fwd.push_back({s, s, d, batch});  // Q K^T
    fwd.push_back({s, d, s, batch});  // attention x V
  }
  linear_gemms(l, {LinearRole::o}, t, samples, expert, fwd);
  linear_gemms(l, {LinearRole::gate, LinearRole::up}, t, samples, expert, fwd);
  linear_gemms(l, {LinearRole::down}, t, samples, expert, fwd);
  linear_gemms(l, {LinearRole::other}, t, samples, expert, fwd);
  if (!backward) {
    out.insert(out.end(), fwd.begin(), fwd.end());
    return;
  }
  for (const cost::GemmShape& g : fwd) {
    out.push_back({g.m, g.k, g.n, g.batch});  // input gradient: dC B^T
    out.push_back({g.k, g.n, g.m, g.batch});  // weight (second operand) gradient: A^T dC
  }
}

}  // namespace trainsim::parallel
