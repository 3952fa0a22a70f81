#pragma once
// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, default
// settings), so the memory a training step needs includes what the allocator keeps beyond the
// tensors themselves:
//   - sizes are rounded up to 512 bytes;
//   - requests of at most 1 MiB come from a small pool of 2 MiB segments, larger ones from a
//     large pool: requests under 10 MiB get a 20 MiB segment, others their size rounded up to
//     2 MiB;
//   - a request takes the smallest cached free block of its pool that holds it (ties: lowest
//     address) and splits off the rest when the rest is at least 512 bytes (small pool) or more
//     than 1 MiB (large pool) — otherwise the whole block is handed out;
//   - a freed block merges with free neighbours of its segment and stays cached;
//   - when a new segment does not fit, every fully free segment is given back (what
//     torch.cuda.empty_cache() would do) and the request retried; if it still does not fit the
//     request is out of memory.
// "Allocated" is the bytes of blocks handed out (PyTorch's memory_allocated), "reserved" the
// bytes of segments (memory_reserved); both with their peaks. The CUDA context and library
// workspaces are outside the allocator: the caller takes them off the device's capacity.
// Tensors are named by a 64-bit key chosen by the caller.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"

namespace trainsim::hw {

class CachingAllocator {
 public:
  static constexpr std::int64_t kMinBlock = 512;
  static constexpr std::int64_t kSmallSize = 1 << 20;         // small pool: requests <= 1 MiB
  static constexpr std::int64_t kSmallSegment = 2 << 20;      // a small pool segment
  static constexpr std::int64_t kLargeSegment = 20 << 20;     // for large requests under 10 MiB
  static constexpr std::int64_t kMinLargeAlloc = 10 << 20;
  static constexpr std::int64_t kRoundLarge = 2 << 20;

  // A request's size as a block (512-byte multiple).
  static std::int64_t block_size(std::int64_t bytes);
  // The segment a request of `bytes` asks the device for when no cached block holds it.
  static std::int64_t segment_size(std::int64_t bytes);

  // `capacity`: bytes the allocator may reserve (device memory less context and workspaces).
  explicit CachingAllocator(core::Bytes capacity) : capacity_(capacity.value) {}

  struct Result {
    bool fits = true;               // false: out of memory even after freeing the cache
    std::int64_t block = 0;         // bytes handed out
    std::int64_t new_segment = 0;   // bytes of the segment reserved for it (0: a cached block)
  };
  // Allocates `bytes` for tensor `key` (not live). When it does not fit and `book_anyway`, the
  // segment is reserved beyond capacity so the caller can play on and measure the demand.
  Result allocate(std::uint64_t key, std::int64_t bytes, bool book_anyway);
  // Frees tensor `key`; returns the bytes of its block, or -1 when no such tensor is live.
  std::int64_t release(std::uint64_t key);
  bool live(std::uint64_t key) const { return live_.find(key) != nullptr; }
  std::size_t live_count() const { return live_.size(); }

  std::int64_t allocated() const { return allocated_; }
  std::int64_t reserved() const { return reserved_; }
  std::int64_t peak_allocated() const { return peak_allocated_; }
  std::int64_t peak_reserved() const { return peak_reserved_; }
  std::int64_t capacity() const { return capacity_; }
  // Whether the state is the one the allocator would have reached with capacity c instead. The
  // capacity changes the state only through the free segments given back before a new segment
  // that does not fit: a request that finds fully free segments cached gives them back under
  // one capacity and not under another when its demand (the reserved bytes with the new segment)
  // lies between them. A request finding none books its segment either way when booking anyway,
  // so then which requests failed may differ while the state does not: with no failure here
  // and the peak reserved within c, none failed with c either.
  bool holds_for(std::int64_t c) const { return c == capacity_ || (fit_free_max_ <= c && c < fail_free_min_); }
  // Another capacity for a state reached with this one (the caller checks holds_for).
  void set_capacity(core::Bytes capacity) { capacity_ = capacity.value; }
  std::int64_t segments() const { return segments_; }
  // Peaks from now on (torch.cuda.reset_peak_memory_stats): what is held now.
  void reset_peaks() {
    peak_allocated_ = allocated_;
    peak_reserved_ = reserved_;
  }
  // Peaks at least these (a state carried over from earlier in a run that went higher since).
  void raise_peaks(std::int64_t allocated, std::int64_t reserved) {
    peak_allocated_ = std::max(peak_allocated_, allocated);
    peak_reserved_ = std::max(peak_reserved_, reserved);
  }

  // Periodic states (fast play skips repeated pipeline units). A key's low 32 bits are a
  // shiftable index (a micro-batch + 1; 0: not shiftable). Two states are equivalent under a
  // shift d when they have the same blocks at the same addresses, each allocated block's key
  // differing by d in its index: the allocator then does the same with requests shifted by d.
  // fingerprint(c): a hash of the state with indices taken relative to c, kept incrementally
  // (equivalent states relative to c and c + d have equal fingerprints; equal fingerprints are
  // checked with canonical()). shift(d) relabels every live shiftable key by d.
  // Fingerprints cost a few multiplications per block changed between two asks: off until
  // turned on.
  void keep_fingerprint();
  std::uint64_t fingerprint(std::int64_t c);  // not const: takes in the blocks changed since the last call
  struct CanonicalBlock {
    std::int64_t addr, size;
    std::uint64_t key;  // relative to c; ~0 for a free block
    bool operator==(const CanonicalBlock&) const = default;
  };
  std::vector<CanonicalBlock> canonical(std::int64_t c) const;
  void shift(std::int64_t d);
  // How many indices the live shiftable keys span (largest - smallest + 1; 0 when none): the
  // micro-batches a pipeline stage holds.
  std::int64_t index_span() const;
  // The fingerprint's bookkeeping (the two sums, each block's part, the blocks changed since the
  // last ask, tables of powers). Detached, the allocator is cheap to copy (a paused replay kept
  // for a later play, sim/exec/allocator_memo.hpp) and fingerprints nothing; attached back it
  // goes on as before. A copy made while detached starts a fingerprint of its own with
  // keep_fingerprint().
  struct Fingerprint {
    struct Print {            // a block's part of the fingerprint
      std::uint64_t h = 0;    // its contribution, as in the sums
      bool counted = false;   // h is in a sum
      bool shifting = false;  // ... in h_shift (else h_fixed)
    };
    std::vector<Print> prints;  // by block index
    std::vector<std::int32_t> dirty;
    std::uint64_t h_fixed = 0, h_shift = 0;
    bool on = false;
    std::vector<std::uint64_t> powers, inverse_powers;
  };
  // Bytes the state takes (its tables' capacities), for callers that keep copies.
  std::size_t footprint() const;
  Fingerprint detach_fingerprint() { return std::exchange(fp_, Fingerprint{}); }
  void attach_fingerprint(Fingerprint&& f) { fp_ = std::move(f); }
  std::int64_t next_address() const { return next_addr_; }

 private:
  struct Block {
    std::int64_t addr = 0, size = 0;
    std::uint64_t key = 0;              // the tensor, when allocated
    std::int32_t prev = -1, next = -1;  // neighbours in the segment
    std::uint32_t stamp = 0;            // when cached: its entry in the pool (see Entry)
    std::int32_t size_class = -1;       // its pool's class when last cached (while the size is that class's)
    bool allocated = false;
    bool small = false;
    bool spare = false;                 // an unused entry of blocks_
    bool cached = false;                // free and in its pool
    bool dirty = false;                 // changed since the fingerprint's last flush (a reused
                                        // entry may be listed twice: flushing it twice is harmless)
  };
  // Cached free blocks of a pool, by size: one class per size (a step sees a few distinct
  // sizes, and nearly every request takes a block of exactly its size), each a vector sorted
  // by address from the highest down, so best fit (ties: the lowest address) takes the last
  // entry, and a freed block, which usually lies below the others of its size, goes in at or
  // near the end. A size whose freed blocks land far from the end (on average more than 32
  // entries moved) turns into a min-heap on the address for good. A block leaving the pool other
  // than from the end (merged with a neighbour, given back) leaves its entry behind: an entry
  // counts only while its block is cached with the entry's stamp, and stale entries are dropped
  // when taken or when they outnumber the live ones. (One vector over all sizes moved thousands
  // of entries per request under GPipe; a min-heap for every size paid a full sift-down per take.)
  struct Entry {  // 16 bytes: a class under GPipe holds thousands
    std::int64_t addr;
    std::uint32_t stamp;
    std::int32_t block;
  };
  struct SizeClass {
    std::int64_t size = 0;
    std::int64_t live = 0;  // entries whose block is cached with their stamp
    std::vector<Entry> blocks;  // by address, highest first; or a heap
    bool heap = false;
    std::uint64_t inserts = 0, moved = 0;  // blocks cached while sorted; entries moved for them
  };
  // A pool's classes keep their index for good (created, never moved or dropped), so a cached
  // block names its class and a request finds the class of its size through a small table of
  // recent sizes; `order` lists them by size for the best-fit search past an empty class.
  struct Pool {
    std::vector<SizeClass> classes;
    std::vector<std::int32_t> order;  // class indices by size, smallest first
    static constexpr std::size_t kRecent = 64;
    std::int32_t recent[kRecent];     // by a hash of the size: a class index (check its size) or -1
    Pool() { std::fill(std::begin(recent), std::end(recent), -1); }
    static std::size_t slot(std::int64_t size) {
      return static_cast<std::size_t>((static_cast<std::uint64_t>(size) * 0x9E3779B97F4A7C15ULL) >> 58);
    }
    // The class of blocks of exactly `size`, -1 when there is none.
    std::int32_t find(std::int64_t size) {
      std::int32_t& hint = recent[slot(size)];
      if (hint >= 0 && classes[static_cast<std::size_t>(hint)].size == size) return hint;
      const std::size_t at = first_holding(size);
      if (at == order.size() || classes[static_cast<std::size_t>(order[at])].size != size) return -1;
      hint = order[at];
      return hint;
    }
    // The first position in `order` whose class holds `size`.
    std::size_t first_holding(std::int64_t size) const;
  };
  static_assert(Pool::kRecent == 64, "Pool::slot takes the top 6 bits");
  Pool& pool(bool small) { return small ? small_free_ : large_free_; }
  std::int32_t size_class(Pool& pool, std::int64_t size);  // its index, created when absent
  bool current(const Entry& e) const { return blocks_[e.block].cached && blocks_[e.block].stamp == e.stamp; }
  void drop_stale(SizeClass& c);
  std::int32_t new_block(const Block& b);
  void cache(std::int32_t b);
  void uncache(std::int32_t b);
  void leave_pool(Block& k);  // a cached block's bookkeeping as it leaves its pool
  // The smallest cached block of the pool that holds `size` (lowest address on ties), taken out
  // of the pool; -1 when none.
  std::int32_t take_best_fit(std::int64_t size, bool small);
  void release_free_segments();
  void take(std::int32_t b, std::int64_t size, std::uint64_t key);
  void spare(std::int32_t b);
  void absorb_next(std::int32_t b);  // block b takes over its next neighbour in the segment
  // The fingerprint's two sums (mod 2^64): blocks whose contribution does not shift and
  // those weighted by X^index. A change to block b only marks it (touch); the sums take each
  // marked block's new contribution in place of its old one when the fingerprint is asked for
  // (flush), so a block that changes many times between two asks (a step's temporaries) is
  // hashed once.
  void touch(std::int32_t b) {
    if (!fp_.on) return;
    Block& k = blocks_[static_cast<std::size_t>(b)];
    if (k.dirty) return;
    k.dirty = true;
    fp_.dirty.push_back(b);
  }
  void flush();
  std::uint64_t power(std::int64_t e) {  // X^e, from the tables (grown on demand)
    if (e >= 0 && static_cast<std::size_t>(e) < fp_.powers.size()) return fp_.powers[static_cast<std::size_t>(e)];
    return grow_power(e);
  }
  std::uint64_t grow_power(std::int64_t e);
  Fingerprint fp_;

  std::int64_t capacity_;
  // Over the requests for a new segment made while fully free segments were cached: the largest
  // demand within the capacity and the smallest beyond it (see holds_for).
  std::int64_t fit_free_max_ = 0, fail_free_min_ = std::numeric_limits<std::int64_t>::max();
  std::int64_t allocated_ = 0, reserved_ = 0, peak_allocated_ = 0, peak_reserved_ = 0;
  std::int64_t next_addr_ = 0, segments_ = 0;
  std::int64_t free_segments_ = 0;  // cached blocks that are whole segments (what an OOM gives back)
  std::vector<Block> blocks_;
  std::vector<std::int32_t> spare_;  // unused entries of blocks_
  Pool small_free_, large_free_;
  std::uint32_t stamps_ = 0;  // a step caches well under 2^32 blocks (checked)
  // Live tensors: key -> block. A key is a tensor (high 32 bits: kind and layer, a few hundred
  // per step) and an index (low 32 bits: the micro-batch). Each tensor has a ring of entries
  // indexed by the index modulo the ring's size (a power of two, doubled when two live indices
  // meet); the tensor finds its ring by open addressing in a small table. A step's live keys per
  // tensor are a window of micro-batches, so the rings stay small and in cache, where one table
  // over all keys missed it at every request.
  class KeyTable {
   public:
    const std::int32_t* find(std::uint64_t key) const;
    // The value slot of a new key, or nullptr when the key is present.
    std::int32_t* insert(std::uint64_t key);
    bool erase(std::uint64_t key, std::int32_t& value);  // false when absent
    void clear();
    std::size_t size() const { return size_; }
    std::size_t footprint() const {
      return tensors_.capacity() * sizeof(Tensor) + entries_.capacity() * sizeof(Entry);
    }

   private:
    static constexpr std::uint32_t kNoTensor = ~std::uint32_t{0};
    static constexpr std::int32_t kFree = -1, kTaken = -2;  // an entry's value before it is set
    struct Entry {
      std::uint32_t index = 0;
      std::int32_t value = kFree;
    };
    struct Tensor {  // a slot of the tensor table: the tensor and where its ring lies
      std::uint32_t tensor = kNoTensor;
      std::uint32_t mask = 0;  // the ring's size - 1
      std::size_t offset = 0;  // the ring's first entry in entries_
    };
    static constexpr std::size_t kNone = ~std::size_t{0};
    std::size_t find_tensor(std::uint32_t tensor) const;  // its slot, kNone when it has no ring
    std::size_t add_tensor(std::uint32_t tensor);
    void grow(Tensor& t);
    std::vector<Tensor> tensors_;  // open addressing
    std::size_t tensor_count_ = 0;
    std::vector<Entry> entries_;   // the rings one after another (a grown ring moves to the end)
    std::size_t size_ = 0;
  };
  KeyTable live_;
};

}  // namespace trainsim::hw
