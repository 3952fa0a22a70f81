#include "sim/exec/allocator_model.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace trainsim::exec {

core::Bytes AllocatorModel::capacity(const parallel::Program& P) {
  return core::Bytes{std::max<std::int64_t>(0, (P.device.memory - P.persistent[hw::MemCategory::reserved]).value)};
}

AllocatorModel::AllocatorModel(const parallel::Program& P)
    : alloc_(capacity(P)),
      context_(P.persistent[hw::MemCategory::reserved]),
      layer_base_(P.first_layer) {
  now_[hw::MemCategory::reserved] = context_;
  now_total_ = context_;
}

std::vector<parallel::MemEffect> AllocatorModel::state_buffers(const parallel::Program& P) {
  // What the load allocates and keeps (the model's packed weights) is booked by the load.
  hw::MemBreakdown kept{};
  for (const auto& l : P.load)
    kept[l.effect.category] += l.alloc ? l.effect.bytes : core::Bytes{-l.effect.bytes.value};
  for (const auto& e : P.lazy_states) kept[e.category] += e.bytes;
  std::vector<parallel::MemEffect> out;
  for (std::size_t c = 0; c < hw::kMemCategories; ++c) {
    const auto cat = static_cast<hw::MemCategory>(c);
    const core::Bytes bytes = P.persistent[cat] - kept[cat];
    if (cat == hw::MemCategory::reserved || bytes.value <= 0) continue;
    out.push_back({cat, bytes, parallel::TensorKind::none, static_cast<std::int32_t>(c), false});
  }
  return out;
}

// torch.optim's step() is the optimizer pass's step op, the one OpKind::optimizer op about no
// micro-batch (pass_optimizer.cpp, step_op). The other optimizer-phase work typed
// OpKind::optimizer, Megatron-LM local DDP's gradient flatten and copy-back
// (parallel.grad_reduce: after_backward, pass_data.cpp), belongs to the last micro-batch and
// comes before it.
std::int32_t AllocatorModel::lazy_states_op(const parallel::Program& P) {
  if (P.lazy_states.empty()) return -1;
  for (std::size_t i = 0; i < P.ops.size(); ++i)
    if (P.ops[i].kind == parallel::OpKind::optimizer && P.ops[i].microbatch < 0)
      return static_cast<std::int32_t>(i);
  return -1;
}

std::uint64_t AllocatorModel::key(const parallel::MemEffect& e, std::int32_t microbatch) const {
  const std::int32_t index = e.per_microbatch ? microbatch : -1;
  // 24 bits: a layer's (possibly negative: a receive buffer) offset in the low 23, all set for
  // an effect about no layer.
  const std::int32_t offset = relative_layer(e, layer_base_);
  const std::uint32_t layer = offset == kNoLayer ? 0xFFFFFFu : static_cast<std::uint32_t>(offset) & 0x7FFFFFu;
  return (static_cast<std::uint64_t>(e.tensor) << 56) | (static_cast<std::uint64_t>(layer) << 32) |
         static_cast<std::uint32_t>(index + 1);
}

hw::CachingAllocator::Result AllocatorModel::allocate(const parallel::MemEffect& e, std::int32_t microbatch) {
  const auto r = alloc_.allocate(key(e, microbatch), e.bytes.value, /*book_anyway=*/true);
  now_[e.category] += e.bytes;
  now_total_ += e.bytes;
  return r;
}

bool AllocatorModel::release(const parallel::MemEffect& e, std::int32_t microbatch) {
  if (alloc_.release(key(e, microbatch)) < 0) return false;
  now_[e.category] -= e.bytes;
  now_total_ -= e.bytes;
  return true;
}

void AllocatorModel::play_load(const parallel::Program& P) {
  for (const auto& l : P.load) {
    if (l.alloc) allocate(l.effect, -1);
    else TRAINSIM_CHECK(release(l.effect, -1), "the model's load frees a tensor it does not hold");
  }
  end_load();
}

hw::MemBreakdown AllocatorModel::state() const {
  hw::MemBreakdown s = now_;
  s[hw::MemCategory::allocator_cache] = core::Bytes{alloc_.reserved()} - (now_.total() - context_);
  return s;
}

}  // namespace trainsim::exec
