// Steady-state anchors for plans whose units stay expanded (ZeRO-3, FSDP, expert parallelism,
// context parallelism): with no macro op to anchor at, the steady-state skip anchors at the end
// of each forward and backward compute op of the first program, keyed by its chunk, layer and
// direction — one anchor per such op and micro-batch, so a key's ends come one unit of its kind
// apart, as a macro template's do (steady_state.cpp).
#include "sim/exec/player_internal.hpp"

namespace trainsim::exec {

std::vector<std::int32_t> expanded_anchor_keys(const parallel::Program& P, std::size_t& keys) {
  std::int32_t layers = 0, chunks = 0;
  for (const parallel::Op& op : P.ops) {
    layers = std::max(layers, op.layer + 1);
    chunks = std::max(chunks, op.chunk + 1);
  }
  std::vector<std::int32_t> key(P.ops.size(), -1);
  for (std::size_t i = 0; i < P.ops.size(); ++i) {
    const parallel::Op& op = P.ops[i];
    const bool fwd = op.kind == parallel::OpKind::forward;
    if ((!fwd && op.kind != parallel::OpKind::backward) || op.macro >= 0 || op.layer < 0 ||
        op.microbatch < 0)
      continue;
    key[i] = (op.chunk * layers + op.layer) * 2 + (fwd ? 0 : 1);
  }
  keys = static_cast<std::size_t>(layers) * static_cast<std::size_t>(chunks) * 2;
  return key;
}

}  // namespace trainsim::exec
