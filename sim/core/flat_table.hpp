#pragma once
// A map for hot loops that look up a few dozen keys and start over often: open addressing with
// linear probing over a power-of-two table whose slots stay allocated across clear() calls (a
// new epoch marks every slot empty). std::unordered_map allocated a node per key, and the
// simulator's per-play maps were a fifth of a sweep point's heap allocations.
#include <cstdint>
#include <utility>
#include <vector>

namespace trainsim::core {

// Folds v into the hash h (a multiply, xor-shift and multiply: every input bit reaches every
// output bit), for the FlatTable keys' hash functions and the player's replay hashes.
inline std::uint64_t hash_mix(std::uint64_t h, std::uint64_t v) {
  std::uint64_t x = (h ^ v) * 0x9E3779B97F4A7C15ULL;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ULL;
  return x ^ (x >> 32);
}

template <typename Key, typename Value, typename Hash>
class FlatTable {
 public:
  // Forgets every entry, keeping the slots.
  void clear() {
    if (slots_.empty()) slots_.resize(kFirstSlots);
    if (++epoch_ == 0) {  // wrapped: mark every slot empty for good
      for (Slot& x : slots_) x.epoch = 0;
      epoch_ = 1;
    }
    size_ = 0;
  }
  // The value kept under `key`, and whether it was just added (value-initialised: the caller
  // sets it). The pointer is valid until the next find_or_add or clear.
  std::pair<Value*, bool> find_or_add(const Key& key) {
    if (slots_.empty()) clear();
    if (2 * (size_ + 1) > slots_.size()) grow();
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = Hash{}(key) & mask;; i = (i + 1) & mask) {
      Slot& x = slots_[i];
      if (x.epoch != epoch_) {
        x = Slot{key, Value{}, epoch_};
        ++size_;
        return {&x.value, true};
      }
      if (x.key == key) return {&x.value, false};
    }
  }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kFirstSlots = 64;
  struct Slot {
    Key key{};
    Value value{};
    std::uint32_t epoch = 0;  // the slot holds an entry while this is the table's epoch
  };
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const Slot& x : old) {
      if (x.epoch != epoch_) continue;
      std::size_t i = Hash{}(x.key) & mask;
      while (slots_[i].epoch == epoch_) i = (i + 1) & mask;
      slots_[i] = x;
    }
  }
  std::vector<Slot> slots_;
  std::uint32_t epoch_ = 0;
  std::size_t size_ = 0;
};

}  // namespace trainsim::core
