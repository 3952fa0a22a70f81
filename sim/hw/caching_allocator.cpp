#include "sim/hw/caching_allocator.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace trainsim::hw {

std::int64_t CachingAllocator::block_size(std::int64_t bytes) {
  if (bytes < kMinBlock) return kMinBlock;
  return (bytes + kMinBlock - 1) / kMinBlock * kMinBlock;
}

std::int64_t CachingAllocator::segment_size(std::int64_t bytes) {
  const std::int64_t b = block_size(bytes);
  if (b <= kSmallSize) return kSmallSegment;
  if (b < kMinLargeAlloc) return kLargeSegment;
  return (b + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

namespace {
// Fingerprint arithmetic is modulo 2^64 (wrapping unsigned products and sums): the base is
// odd, so it has an inverse and X^-c undoes X^c.
constexpr std::uint64_t kBase = 0x1F3D5B79A3C1E5ULL;  // odd
constexpr std::uint64_t kBaseInverse = [] {
  std::uint64_t x = kBase;  // Newton's iteration doubles the correct low bits: 3 -> 6 -> ... -> 96
  for (int i = 0; i < 5; ++i) x *= 2 - kBase * x;
  return x;
}();
static_assert(kBase * kBaseInverse == 1);
constexpr std::uint64_t kLow = 0xFFFFFFFFULL;
// A key with its shiftable index (low 32 bits, when not 0) moved by d, modulo 2^32.
std::uint64_t shifted(std::uint64_t key, std::int64_t d) {
  if ((key & kLow) == 0) return key;
  return (key & ~kLow) | (((key & kLow) + static_cast<std::uint64_t>(d)) & kLow);
}
// A tensor's home slot in a table of mask + 1 slots (Fibonacci hashing).
std::size_t tensor_home(std::uint32_t tensor, std::size_t mask) {
  return static_cast<std::size_t>((tensor * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
}
}  // namespace

std::size_t CachingAllocator::KeyTable::find_tensor(std::uint32_t tensor) const {
  if (tensors_.empty()) return kNone;
  const std::size_t mask = tensors_.size() - 1;
  for (std::size_t i = tensor_home(tensor, mask);; i = (i + 1) & mask) {
    if (tensors_[i].tensor == tensor) return i;
    if (tensors_[i].tensor == kNoTensor) return kNone;
  }
}

std::size_t CachingAllocator::KeyTable::add_tensor(std::uint32_t tensor) {
  TRAINSIM_CHECK(tensor != kNoTensor, "allocator key out of range");
  auto place = [this](const Tensor& t) {
    const std::size_t mask = tensors_.size() - 1;
    std::size_t i = tensor_home(t.tensor, mask);
    while (tensors_[i].tensor != kNoTensor) i = (i + 1) & mask;
    tensors_[i] = t;
    return i;
  };
  if (2 * (tensor_count_ + 1) > tensors_.size()) {  // grow the table, re-placing every tensor
    std::vector<Tensor> old = std::move(tensors_);
    tensors_.assign(old.empty() ? 64 : 2 * old.size(), Tensor{});
    for (const Tensor& t : old)
      if (t.tensor != kNoTensor) place(t);
  }
  ++tensor_count_;
  constexpr std::size_t kFirstRing = 8;
  const Tensor t{tensor, kFirstRing - 1, entries_.size()};
  entries_.resize(entries_.size() + kFirstRing);
  return place(t);
}

void CachingAllocator::KeyTable::grow(Tensor& t) {
  const std::size_t from = t.offset, old_size = std::size_t{t.mask} + 1, end = entries_.size();
  for (std::size_t n = 2 * old_size;; n *= 2) {
    TRAINSIM_CHECK(n <= (std::size_t{1} << 26), "allocator keys of one tensor too far apart");
    entries_.resize(end);
    entries_.resize(end + n);
    bool placed = true;
    for (std::size_t i = from; i < from + old_size && placed; ++i) {
      const Entry e = entries_[i];
      if (e.value == kFree) continue;
      Entry& slot = entries_[end + (e.index & (n - 1))];
      if (slot.value != kFree) placed = false;
      else slot = e;
    }
    if (placed) {
      for (std::size_t i = from; i < from + old_size; ++i) entries_[i].value = kFree;  // left unused
      t.offset = end;
      t.mask = static_cast<std::uint32_t>(n - 1);
      return;
    }
  }
}

const std::int32_t* CachingAllocator::KeyTable::find(std::uint64_t key) const {
  const std::size_t i = find_tensor(static_cast<std::uint32_t>(key >> 32));
  if (i == kNone) return nullptr;
  const auto index = static_cast<std::uint32_t>(key);
  const Entry& e = entries_[tensors_[i].offset + (index & tensors_[i].mask)];
  return e.value != kFree && e.index == index ? &e.value : nullptr;
}

std::int32_t* CachingAllocator::KeyTable::insert(std::uint64_t key) {
  const auto tensor = static_cast<std::uint32_t>(key >> 32);
  std::size_t i = find_tensor(tensor);
  if (i == kNone) i = add_tensor(tensor);
  Tensor& t = tensors_[i];  // grow() moves entries, never tensors
  const auto index = static_cast<std::uint32_t>(key);
  for (;;) {
    Entry& e = entries_[t.offset + (index & t.mask)];
    if (e.value == kFree) {
      e.index = index;
      e.value = kTaken;
      ++size_;
      return &e.value;
    }
    if (e.index == index) return nullptr;
    grow(t);
  }
}

bool CachingAllocator::KeyTable::erase(std::uint64_t key, std::int32_t& value) {
  const std::size_t i = find_tensor(static_cast<std::uint32_t>(key >> 32));
  if (i == kNone) return false;
  const auto index = static_cast<std::uint32_t>(key);
  Entry& e = entries_[tensors_[i].offset + (index & tensors_[i].mask)];
  if (e.value == kFree || e.index != index) return false;
  value = e.value;
  e.value = kFree;
  --size_;
  return true;
}

void CachingAllocator::KeyTable::clear() {
  for (Entry& e : entries_) e.value = kFree;
  size_ = 0;
}

std::uint64_t CachingAllocator::grow_power(std::int64_t e) {
  auto& table = e >= 0 ? fp_.powers : fp_.inverse_powers;
  const auto n = static_cast<std::size_t>(e >= 0 ? e : -e);
  if (table.size() > n) return table[n];
  if (table.empty()) table.push_back(1);
  const std::uint64_t step = e >= 0 ? kBase : kBaseInverse;
  while (table.size() <= n) table.push_back(table.back() * step);
  return table[n];
}

void CachingAllocator::keep_fingerprint() {
  if (fp_.on) return;
  fp_ = Fingerprint{};
  fp_.on = true;
  fp_.prints.resize(blocks_.size());
  for (Block& k : blocks_) k.dirty = false;  // marks copied from a detached state mean nothing here
  for (std::size_t b = 0; b < blocks_.size(); ++b)
    if (!blocks_[b].spare) touch(static_cast<std::int32_t>(b));
}

void CachingAllocator::flush() {
  for (const std::int32_t b : fp_.dirty) {
    Fingerprint::Print& p = fp_.prints[static_cast<std::size_t>(b)];
    Block& k = blocks_[static_cast<std::size_t>(b)];
    k.dirty = false;
    if (p.counted) (p.shifting ? fp_.h_shift : fp_.h_fixed) -= p.h;
    p.counted = false;
    if (k.spare) continue;
    const std::uint64_t fixed_key = k.allocated ? (k.key & ~kLow) | 1 : 0;
    // Three independent products folded once: a fingerprint match is confirmed by canonical(),
    // so the hash only has to keep false matches rare.
    std::uint64_t h = static_cast<std::uint64_t>(k.addr) * 0x9E3779B97F4A7C15ULL ^
                      static_cast<std::uint64_t>(k.size) * 0xC2B2AE3D27D4EB4FULL ^ fixed_key * 0x94D049BB133111EBULL;
    h ^= h >> 31;
    p.shifting = k.allocated && (k.key & kLow) != 0;
    if (p.shifting) h *= power(static_cast<std::int64_t>(k.key & kLow));
    p.h = h;
    p.counted = true;
    (p.shifting ? fp_.h_shift : fp_.h_fixed) += h;
  }
  fp_.dirty.clear();
}

std::uint64_t CachingAllocator::fingerprint(std::int64_t c) {
  flush();
  return fp_.h_fixed + fp_.h_shift * power(-c);
}

std::vector<CachingAllocator::CanonicalBlock> CachingAllocator::canonical(std::int64_t c) const {
  std::vector<CanonicalBlock> out;
  for (const Block& k : blocks_) {
    if (k.spare) continue;
    std::uint64_t key = ~std::uint64_t{0};
    if (k.allocated) key = shifted(k.key, -c);
    out.push_back({k.addr, k.size, key});
  }
  std::sort(out.begin(), out.end(), [](const CanonicalBlock& a, const CanonicalBlock& b) { return a.addr < b.addr; });
  return out;
}

void CachingAllocator::shift(std::int64_t d) {
  flush();
  if (fp_.on) {
    const std::uint64_t x = power(d);
    for (Fingerprint::Print& p : fp_.prints)
      if (p.counted && p.shifting) p.h *= x;
  }
  live_.clear();
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    Block& k = blocks_[i];
    if (k.spare || !k.allocated) continue;
    k.key = shifted(k.key, d);
    *live_.insert(k.key) = static_cast<std::int32_t>(i);
  }
  fp_.h_shift *= power(d);
}

std::int64_t CachingAllocator::index_span() const {
  std::uint64_t low = ~std::uint64_t{0}, high = 0;
  for (const Block& k : blocks_) {
    if (k.spare || !k.allocated || (k.key & kLow) == 0) continue;
    low = std::min(low, k.key & kLow);
    high = std::max(high, k.key & kLow);
  }
  return high >= low ? static_cast<std::int64_t>(high - low + 1) : 0;
}

void CachingAllocator::absorb_next(std::int32_t b) {
  const std::int32_t n = blocks_[b].next;
  blocks_[b].size += blocks_[n].size;
  blocks_[b].next = blocks_[n].next;
  if (blocks_[b].next >= 0) blocks_[blocks_[b].next].prev = b;
  spare(n);
}

void CachingAllocator::spare(std::int32_t b) {
  blocks_[b].spare = true;
  spare_.push_back(b);
}

std::int32_t CachingAllocator::new_block(const Block& b) {
  if (!spare_.empty()) {
    const std::int32_t i = spare_.back();
    spare_.pop_back();
    blocks_[i] = b;
    return i;
  }
  blocks_.push_back(b);
  if (fp_.on) fp_.prints.resize(blocks_.size());
  return static_cast<std::int32_t>(blocks_.size() - 1);
}

namespace {
// Heap order for a min-heap on the address (std heaps keep the greatest on top).
struct LaterAddress {
  template <class E>
  bool operator()(const E& a, const E& b) const { return a.addr > b.addr; }
};
}  // namespace

std::size_t CachingAllocator::Pool::first_holding(std::int64_t size) const {
  return static_cast<std::size_t>(
      std::lower_bound(order.begin(), order.end(), size,
                       [&](std::int32_t c, std::int64_t s) { return classes[static_cast<std::size_t>(c)].size < s; }) -
      order.begin());
}

std::int32_t CachingAllocator::size_class(Pool& pool, std::int64_t size) {
  std::int32_t c = pool.find(size);
  if (c >= 0) return c;
  c = static_cast<std::int32_t>(pool.classes.size());
  pool.classes.emplace_back().size = size;
  pool.order.insert(pool.order.begin() + static_cast<std::ptrdiff_t>(pool.first_holding(size)), c);
  pool.recent[Pool::slot(size)] = c;
  return c;
}

void CachingAllocator::drop_stale(SizeClass& c) {
  std::erase_if(c.blocks, [&](const Entry& e) { return !current(e); });  // keeps a sorted order
  if (c.heap) std::make_heap(c.blocks.begin(), c.blocks.end(), LaterAddress{});
}

void CachingAllocator::cache(std::int32_t b) {
  Block& k = blocks_[b];
  if (k.prev < 0 && k.next < 0) ++free_segments_;
  k.cached = true;
  TRAINSIM_CHECK(stamps_ != ~std::uint32_t{0}, "allocator model: too many cached blocks for one step");
  k.stamp = ++stamps_;
  Pool& p = pool(k.small);
  // A block freed at the size it was taken with still names its class.
  if (k.size_class < 0 || p.classes[static_cast<std::size_t>(k.size_class)].size != k.size)
    k.size_class = size_class(p, k.size);
  SizeClass& c = p.classes[static_cast<std::size_t>(k.size_class)];
  ++c.live;
  auto& v = c.blocks;
  // Room for a few blocks at once: most classes hold a handful, grown one doubling at a time.
  if (v.size() == v.capacity()) v.reserve(std::max<std::size_t>(8, 2 * v.size()));
  if (c.heap) {
    v.push_back(Entry{k.addr, k.stamp, b});
    std::push_heap(v.begin(), v.end(), LaterAddress{});
    return;
  }
  // Highest address first: a freed block usually lies below the others of its size (a
  // temporary's block, a pipeline's freshly freed activations), so it goes in at or near the end.
  auto at = v.end();
  for (int step = 0; step < 8 && at != v.begin() && std::prev(at)->addr < k.addr; ++step) --at;
  if (at != v.begin() && std::prev(at)->addr < k.addr)
    at = std::upper_bound(v.begin(), at, k.addr, [](std::int64_t a, const Entry& e) { return a > e.addr; });
  c.moved += static_cast<std::uint64_t>(v.end() - at);
  v.insert(at, Entry{k.addr, k.stamp, b});
  // Blocks freed among many lower ones of their size (small tensors sharing segments across
  // micro-batches) would move most of the vector each time: such a size becomes a heap.
  if (++c.inserts >= 64 && c.moved > 32 * c.inserts) {
    c.heap = true;
    std::make_heap(v.begin(), v.end(), LaterAddress{});
  }
}

void CachingAllocator::leave_pool(Block& k) {
  if (k.prev < 0 && k.next < 0) --free_segments_;
  k.cached = false;  // its entry goes stale (taken from the top: already popped)
}

void CachingAllocator::uncache(std::int32_t b) {
  Block& k = blocks_[b];
  leave_pool(k);
  SizeClass& c = pool(k.small).classes[static_cast<std::size_t>(k.size_class)];
  --c.live;
  if (c.blocks.size() > 2 * static_cast<std::size_t>(c.live) + 64) drop_stale(c);
}

std::int32_t CachingAllocator::take_best_fit(std::int64_t size, bool small) {
  Pool& p = pool(small);
  // Most requests find a block of exactly their size; else the classes above it, smallest first.
  std::int32_t at = p.find(size);
  if (at < 0 || p.classes[static_cast<std::size_t>(at)].live == 0) {
    std::size_t i = p.first_holding(size);
    while (i < p.order.size() && p.classes[static_cast<std::size_t>(p.order[i])].live == 0) ++i;
    if (i == p.order.size()) return -1;
    at = p.order[i];
  }
  SizeClass& c = p.classes[static_cast<std::size_t>(at)];
  auto& v = c.blocks;
  std::int32_t b = -1;
  if (c.heap) {
    for (;;) {
      std::pop_heap(v.begin(), v.end(), LaterAddress{});
      const Entry e = v.back();
      v.pop_back();
      if (current(e)) {
        b = e.block;
        break;
      }
    }
  } else {
    while (!current(v.back())) v.pop_back();
    b = v.back().block;
    v.pop_back();
  }
  --c.live;
  leave_pool(blocks_[b]);
  return b;
}

// Hands out block b (free, out of the pools and the fingerprint) for a request of `size`,
// splitting off the rest when the pool's rule allows it.
void CachingAllocator::take(std::int32_t b, std::int64_t size, std::uint64_t key) {
  Block& k = blocks_[b];
  const std::int64_t rest = k.size - size;
  const bool split = k.small ? rest >= kMinBlock : rest > kSmallSize;
  if (split) {
    Block tail;
    tail.addr = k.addr + size;
    tail.size = rest;
    tail.prev = b;
    tail.next = k.next;
    tail.small = k.small;
    const std::int32_t t = new_block(tail);
    Block& head = blocks_[b];  // new_block may have moved blocks_
    if (head.next >= 0) blocks_[head.next].prev = t;
    head.next = t;
    head.size = size;
    cache(t);
    touch(t);
  }
  Block& head = blocks_[b];
  head.allocated = true;
  head.key = key;
  touch(b);
  allocated_ += head.size;
  if (allocated_ > peak_allocated_) peak_allocated_ = allocated_;
}

void CachingAllocator::release_free_segments() {
  // The count of cached whole segments is exact: the scan stops once it has given them all
  // back (an OOM replay calls this at every new segment, mostly with a few large ones cached
  // among many small blocks).
  std::int64_t left = free_segments_;
  if (left == 0) return;  // nothing to give back: no need to look
  free_segments_ = 0;
  for (Pool* p : {&small_free_, &large_free_}) {
    for (SizeClass& c : p->classes) {
      if (left == 0) return;
      bool released = false;
      for (const Entry& e : c.blocks) {
        Block& k = blocks_[e.block];
        if (!current(e) || k.prev >= 0 || k.next >= 0) continue;
        reserved_ -= k.size;
        --segments_;
        --c.live;
        k.cached = false;
        touch(e.block);
        spare(e.block);
        released = true;
        if (--left == 0) break;
      }
      // The released blocks' entries are stale now; a class that gave nothing back keeps its
      // entries as they were (stale ones are skipped where they are met, as everywhere).
      if (released) drop_stale(c);
    }
  }
  TRAINSIM_CHECK(left == 0, "the count of cached whole segments was off");
}

CachingAllocator::Result CachingAllocator::allocate(std::uint64_t key, std::int64_t bytes, bool book_anyway) {
  TRAINSIM_CHECK(bytes > 0, "allocator asked for a non-positive size");
  std::int32_t* slot = live_.insert(key);
  TRAINSIM_CHECK(slot != nullptr, "allocator asked twice for one live tensor");
  Result r;
  const std::int64_t size = block_size(bytes);
  const bool small = size <= kSmallSize;
  std::int32_t b = take_best_fit(size, small);
  if (b < 0) {
    r.new_segment = segment_size(bytes);
    const std::int64_t asked = reserved_ + r.new_segment;
    if (free_segments_ > 0) {
      if (asked > capacity_) {
        fail_free_min_ = std::min(fail_free_min_, asked);
        release_free_segments();
      } else {
        fit_free_max_ = std::max(fit_free_max_, asked);
      }
    }
    if (reserved_ + r.new_segment > capacity_) {
      r.fits = false;
      if (!book_anyway) {
        std::int32_t unused = -1;
        live_.erase(key, unused);
        return r;
      }
    }
    Block seg;
    seg.addr = next_addr_;
    seg.size = r.new_segment;
    seg.small = small;
    next_addr_ += r.new_segment;
    reserved_ += r.new_segment;
    ++segments_;
    if (reserved_ > peak_reserved_) peak_reserved_ = reserved_;
    b = new_block(seg);  // a new segment is in no pool yet
  }
  take(b, size, key);  // marks b for the fingerprint
  r.block = blocks_[b].size;
  *slot = b;
  return r;
}

std::int64_t CachingAllocator::release(std::uint64_t key) {
  std::int32_t b = -1;
  if (!live_.erase(key, b)) return -1;
  const std::int64_t freed = blocks_[b].size;
  allocated_ -= freed;
  touch(b);
  blocks_[b].allocated = false;
  // Merge with free neighbours of the segment (each leaves its pool; every block changed here is
  // marked for the fingerprint once: b now, a neighbour as it merges).
  const std::int32_t prev = blocks_[b].prev;
  if (prev >= 0 && !blocks_[prev].allocated) {
    uncache(prev);
    touch(prev);
    absorb_next(prev);
    b = prev;
  }
  const std::int32_t next = blocks_[b].next;
  if (next >= 0 && !blocks_[next].allocated) {
    uncache(next);
    touch(next);
    absorb_next(b);
  }
  cache(b);
  return freed;
}

std::size_t CachingAllocator::footprint() const {
  std::size_t n = sizeof(*this) + blocks_.capacity() * sizeof(Block) + spare_.capacity() * sizeof(std::int32_t) +
                  live_.footprint();
  for (const Pool* p : {&small_free_, &large_free_}) {
    n += p->classes.capacity() * sizeof(SizeClass) + p->order.capacity() * sizeof(std::int32_t);
    for (const SizeClass& c : p->classes) n += c.blocks.capacity() * sizeof(Entry);
  }
  n += fp_.prints.capacity() * sizeof(Fingerprint::Print) + fp_.dirty.capacity() * sizeof(std::int32_t) +
       (fp_.powers.capacity() + fp_.inverse_powers.capacity()) * sizeof(std::uint64_t);
  return n;
}

}  // namespace trainsim::hw
