#include "sim/scenario/optimizer_states.hpp"

#include <algorithm>

#include "models/param_tensors.hpp"

namespace trainsim::scenario {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::int64_t elements(const models::ParamTensor& t) {
  return t.lead * t.rows * (t.cols > 0 ? t.cols : 1);
}

// Bytes of one copy of the tensor's states, the master copy left out.
std::int64_t one_copy(Precision p, Optimizer o, const models::ParamTensor& t, std::int64_t block) {
  const std::int64_t n = elements(t);
  if (eight_bit(o)) {
    if (n < kMin8bitSize) return 8 * n;
    return 2 * n + 2 * 4 * ceil_div(n, block);
  }
  if (four_bit(o)) {
    // torchao's _new_buffer quantizes a tensor of n >= 4096 elements that its block divides:
    // per state n / 2 bytes of packed codes and n / block fp32 scales; any other tensor gets
    // zeros_like(p), two buffers in the parameter's dtype (torch.optim's own bytes).
    if (n < kMin8bitSize || n % block != 0)
      return n * (state_bytes_per_param(p, Optimizer::adamw).optimizer_states -
                  state_bytes_per_param(p, Optimizer::adamw).master);
    return 2 * (ceil_div(n, 2) + 4 * (n / block));
  }
  const StateBytes sb = state_bytes_per_param(p, o);
  if (o == Optimizer::adafactor) {
    // The gradient's dtype: 16-bit where the gradients are (true 16-bit training), else fp32.
    const std::int64_t e = master_weights(p) ? 4 : state_bytes_per_param(p, o).gradients;
    return e * (t.cols > 0 ? t.lead * (t.rows + t.cols) : n);
  }
  return n * (sb.optimizer_states - sb.master);
}

}  // namespace

core::Bytes tensor_optimizer_bytes(Precision p, Optimizer o, const models::ParamTensor& t,
                                   std::int64_t block) {
  const std::int64_t master = state_bytes_per_param(p, o).master;
  return core::Bytes{(one_copy(p, o, t, block) + master * elements(t)) * t.count};
}

core::Bytes tensor_paged_bytes(Optimizer o, const models::ParamTensor& t) {
  const std::int64_t n = elements(t);
  if (!paged(o) || n < kPagedMinElements) return {};
  // The two state buffers: uint8 (8-bit; n >= 100,000 is past min_8bit_size) or fp32.
  return core::Bytes{(eight_bit(o) ? 2 : 8) * n * t.count};
}

LayerOptimizer layer_optimizer(Precision p, Optimizer o, std::int64_t block,
                               const models::Layer& l, const std::optional<LoraSpec>& lora,
                               std::int64_t tensor, std::int64_t trainable) {
  LayerOptimizer out;
  if (trainable == 0) return out;
  if (lora) {
    for (std::size_t k = 0; k < models::kLinearRoles; ++k) {
      const models::LinearWeight& w = l.linears[k];
      if (w.count == 0 || !lora->targets_role(static_cast<models::LinearRole>(k))) continue;
      const auto [in, od] = models::stored_dims(w, tensor);
      const models::ParamTensor a{lora->rank, in, 1, w.count}, b{od, lora->rank, 1, w.count};
      out.states += tensor_optimizer_bytes(p, o, a, block) + tensor_optimizer_bytes(p, o, b, block);
      out.paged += tensor_paged_bytes(o, a) + tensor_paged_bytes(o, b);
      out.largest_tensor = std::max({out.largest_tensor, lora->rank * in, lora->rank * od});
    }
    return out;
  }
  core::Bytes whole{}, whole_paged{};
  for (const models::ParamTensor& t : models::param_tensors(l)) {
    whole += tensor_optimizer_bytes(p, o, t, block);
    whole_paged += tensor_paged_bytes(o, t);
    out.largest_tensor = std::max(out.largest_tensor, t.elements() / t.count);
  }
  if (trainable >= l.params) {
    out.states = whole;
    out.paged = whole_paged;
  } else {  // a tensor-parallel shard: its share of the layer's bytes
    const long double share = static_cast<long double>(trainable) / static_cast<long double>(l.params);
    const auto part = [&](core::Bytes b) {
      return core::Bytes{static_cast<std::int64_t>(static_cast<long double>(b.value) * share)};
    };
    out.states = part(whole);
    out.paged = part(whole_paged);
    out.largest_tensor = ceil_div(out.largest_tensor, tensor);
  }
  return out;
}

}  // namespace trainsim::scenario
