#include "sim/hw/caching_allocator.hpp"

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

std::int32_t CachingAllocator::new_block(const Block& b) {
  if (!spare_.empty()) {
    const std::int32_t i = spare_.back();
    spare_.pop_back();
    blocks_[i] = b;
    return i;
  }
  blocks_.push_back(b);
  return static_cast<std::int32_t>(blocks_.size() - 1);
}

void CachingAllocator::cache(std::int32_t b) {
  const Block& k = blocks_[b];
  (k.small ? small_free_ : large_free_).insert(FreeKey{k.size, k.addr, b});
}

void CachingAllocator::uncache(std::int32_t b) {
  const Block& k = blocks_[b];
  (k.small ? small_free_ : large_free_).erase(FreeKey{k.size, k.addr, b});
}

std::int32_t CachingAllocator::best_fit(std::int64_t size, bool small) const {
  const auto& pool = small ? small_free_ : large_free_;
  const auto it = pool.lower_bound(FreeKey{size, -1, -1});
  return it == pool.end() ? -1 : it->block;
}

// Hands out block b (free, uncached) for a request of `size`, splitting off the rest when the
// pool's rule allows it.
void CachingAllocator::take(std::int32_t b, std::int64_t size) {
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
  }
  Block& head = blocks_[b];
  head.allocated = true;
  allocated_ += head.size;
  if (allocated_ > peak_allocated_) peak_allocated_ = allocated_;
}

void CachingAllocator::release_free_segments() {
  for (auto* pool : {&small_free_, &large_free_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      const Block& k = blocks_[it->block];
      if (k.prev >= 0 || k.next >= 0) {
        ++it;
        continue;
      }
      reserved_ -= k.size;
      --segments_;
      spare_.push_back(it->block);
      it = pool->erase(it);
    }
  }
}

CachingAllocator::Result CachingAllocator::allocate(std::uint64_t key, std::int64_t bytes, bool book_anyway) {
  TRAINSIM_CHECK(bytes > 0, "allocator asked for a non-positive size");
  TRAINSIM_CHECK(!live_.count(key), "allocator asked twice for one live tensor");
  Result r;
  const std::int64_t size = block_size(bytes);
  const bool small = size <= kSmallSize;
  std::int32_t b = best_fit(size, small);
  if (b < 0) {
    r.new_segment = segment_size(bytes);
    if (reserved_ + r.new_segment > capacity_) release_free_segments();
    if (reserved_ + r.new_segment > capacity_) {
      r.fits = false;
      if (!book_anyway) return r;
    }
    Block seg;
    seg.addr = next_addr_;
    seg.size = r.new_segment;
    seg.small = small;
    next_addr_ += r.new_segment;
    reserved_ += r.new_segment;
    ++segments_;
    if (reserved_ > peak_reserved_) peak_reserved_ = reserved_;
    b = new_block(seg);
  } else {
    uncache(b);
  }
  take(b, size);
  r.block = blocks_[b].size;
  live_.emplace(key, b);
  return r;
}

std::int64_t CachingAllocator::release(std::uint64_t key) {
  const auto it = live_.find(key);
  if (it == live_.end()) return -1;
  std::int32_t b = it->second;
  live_.erase(it);
  const std::int64_t freed = blocks_[b].size;
  allocated_ -= freed;
  blocks_[b].allocated = false;
  // Merge with free neighbours of the segment.
  const std::int32_t prev = blocks_[b].prev;
  if (prev >= 0 && !blocks_[prev].allocated) {
    uncache(prev);
    Block& p = blocks_[prev];
    p.size += blocks_[b].size;
    p.next = blocks_[b].next;
    if (p.next >= 0) blocks_[p.next].prev = prev;
    spare_.push_back(b);
    b = prev;
  }
  const std::int32_t next = blocks_[b].next;
  if (next >= 0 && !blocks_[next].allocated) {
    uncache(next);
    Block& k = blocks_[b];
    k.size += blocks_[next].size;
    k.next = blocks_[next].next;
    if (k.next >= 0) blocks_[k.next].prev = b;
    spare_.push_back(next);
  }
  cache(b);
  return freed;
}

}  // namespace trainsim::hw
