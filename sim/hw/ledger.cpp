#include "sim/hw/ledger.hpp"

#include <string>

#include "sim/core/error.hpp"

namespace trainsim::hw {

std::string_view to_string(MemCategory c) {
  switch (c) {
    case MemCategory::weights: return "weights";
    case MemCategory::gradients: return "gradients";
    case MemCategory::optimizer_states: return "optimizer_states";
    case MemCategory::activations: return "activations";
    case MemCategory::buffers: return "buffers";
    case MemCategory::reserved: return "reserved";
    case MemCategory::allocator_cache: return "allocator_cache";
  }
  return "?";
}

core::Bytes MemBreakdown::total() const {
  core::Bytes t{};
  for (auto b : bytes) t += b;
  return t;
}

bool MemoryLedger::allocate(MemCategory cat, core::Bytes bytes, bool book_anyway) {
  TRAINSIM_CHECK(bytes.value >= 0, "negative allocation");
  const core::Bytes after = in_use_ + bytes;
  const bool fits = after <= capacity_;
  if (!fits && !book_anyway) return false;
  in_use_ = after;
  current_[cat] += bytes;
  if (in_use_ > peak_) {
    peak_ = in_use_;
    at_peak_ = current_;
  }
  return fits;
}

void MemoryLedger::release(MemCategory cat, core::Bytes bytes) {
  TRAINSIM_CHECK(bytes.value >= 0, "negative release");
  TRAINSIM_CHECK(current_[cat] >= bytes,
                 std::string("memory ledger would go negative in ") + std::string(to_string(cat)));
  current_[cat] -= bytes;
  in_use_ -= bytes;
}

}  // namespace trainsim::hw
