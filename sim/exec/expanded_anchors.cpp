// Steady-state anchors for plans whose units stay expanded (ZeRO-3, FSDP/HSDP, expert
// parallelism): with no macro op to anchor at, the steady-state skip anchors at the end of the
// compute op that closes each unit of the first program — a forward unit's last layer, a
// backward unit's first — keyed by its chunk and direction, so a key's ends come one unit of
// its kind apart, as a macro template's do (steady_state.cpp).
#include "sim/exec/player_internal.hpp"

namespace trainsim::exec {

std::vector<std::int32_t> expanded_anchor_keys(const parallel::Program& P, std::size_t& keys) {
  std::int32_t chunks = 0;
  for (const parallel::Op& op : P.ops) chunks = std::max(chunks, op.chunk + 1);
  auto is_layer_op = [](const parallel::Op& op) {
    return (op.kind == parallel::OpKind::forward || op.kind == parallel::OpKind::backward) &&
           op.macro < 0 && op.layer >= 0 && op.microbatch >= 0;
  };
  // Per chunk, the layer that closes its forward units (the last) and its backward ones (the
  // first).
  std::vector<std::int32_t> closes(2 * static_cast<std::size_t>(chunks), -1);
  for (const parallel::Op& op : P.ops) {
    if (!is_layer_op(op)) continue;
    const bool fwd = op.kind == parallel::OpKind::forward;
    std::int32_t& c = closes[2 * static_cast<std::size_t>(op.chunk) + (fwd ? 0 : 1)];
    c = c < 0 ? op.layer : fwd ? std::max(c, op.layer) : std::min(c, op.layer);
  }
  std::vector<std::int32_t> key(P.ops.size(), -1);
  for (std::size_t i = 0; i < P.ops.size(); ++i) {
    const parallel::Op& op = P.ops[i];
    if (!is_layer_op(op)) continue;
    const std::int32_t k = 2 * op.chunk + (op.kind == parallel::OpKind::forward ? 0 : 1);
    if (op.layer == closes[static_cast<std::size_t>(k)]) key[i] = k;
  }
  keys = closes.size();
  return key;
}

}  // namespace trainsim::exec
