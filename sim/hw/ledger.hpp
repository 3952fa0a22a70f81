#pragma once
// The memory ledger of one virtual device: every allocation and free by category, the running
// total, the peak and what was in use at the peak. It never goes negative; when an allocation
// does not fit it says so (the caller records an OOM point) and, in "unbounded" mode, still books
// it so the step can play on and measure its full demand.
#include <array>
#include <cstddef>
#include <string_view>

#include "sim/core/units.hpp"

namespace trainsim::hw {

// allocator_cache: what the caching allocator holds beyond the tensors' bytes (rounding, cached
// free blocks, fragmentation); only the allocator model (exec::play) books it.
enum class MemCategory { weights, gradients, optimizer_states, activations, buffers, reserved, allocator_cache };
inline constexpr std::size_t kMemCategories = 7;
std::string_view to_string(MemCategory c);

// Bytes per category; the sum is the total in use.
struct MemBreakdown {
  std::array<core::Bytes, kMemCategories> bytes{};
  core::Bytes& operator[](MemCategory c) { return bytes[static_cast<std::size_t>(c)]; }
  core::Bytes operator[](MemCategory c) const { return bytes[static_cast<std::size_t>(c)]; }
  core::Bytes total() const;
};

class MemoryLedger {
 public:
  explicit MemoryLedger(core::Bytes capacity) : capacity_(capacity) {}

  // Books `bytes` in `cat`. Returns false — and books nothing unless `book_anyway` — when the
  // total would exceed capacity.
  bool allocate(MemCategory cat, core::Bytes bytes, bool book_anyway = false);
  // Releases bytes previously booked in `cat`; freeing more than is held is an internal error.
  void release(MemCategory cat, core::Bytes bytes);
  // A run of allocations and releases replayed at once (fast play), checked against capacity
  // by the caller, in two parts. raise_peak: the largest state the run passes through (a peak
  // candidate, the earliest if several tie); only a caller whose run may pass the peak needs to
  // make it. apply_run: what the run leaves changed, the state `to` less the state `from` per
  // category. Inline and unchecked per category: the caller's profile was built from booked
  // effects.
  void raise_peak(const MemBreakdown& highest) {
    std::int64_t high = 0;
    for (const auto& b : highest.bytes) high += b.value;
    if (high > peak_.value) {
      peak_ = core::Bytes{high};
      at_peak_ = highest;
    }
  }
  void apply_run(const MemBreakdown& from, const MemBreakdown& to) {
    std::int64_t sum = 0;
    for (std::size_t c = 0; c < kMemCategories; ++c) {
      const std::int64_t d = to.bytes[c].value - from.bytes[c].value;
      current_.bytes[c].value += d;
      sum += d;
    }
    in_use_.value += sum;
  }

  core::Bytes capacity() const { return capacity_; }
  core::Bytes in_use() const { return in_use_; }
  core::Bytes free_bytes() const { return capacity_ - in_use_; }
  const MemBreakdown& current() const { return current_; }
  core::Bytes peak() const { return peak_; }
  const MemBreakdown& at_peak() const { return at_peak_; }

 private:
  core::Bytes capacity_;
  core::Bytes in_use_{};
  core::Bytes peak_{};
  MemBreakdown current_{};
  MemBreakdown at_peak_{};
};

}  // namespace trainsim::hw
