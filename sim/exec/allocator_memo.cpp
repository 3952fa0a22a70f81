#include "sim/exec/allocator_memo.hpp"

#include <algorithm>

namespace trainsim::exec {

namespace {
// Logs kept per family (the last points' of a device: a sweep's neighbours share).
constexpr std::size_t kPerFamily = 16;  // (two devices' plays share a family)

// How many records two logs share: prefix hashes agree up to it and differ after (each hashes
// the one before it).
std::size_t shared_records(const AllocatorMemo::Prefix& a, const AllocatorMemo::Prefix& b) {
  std::size_t lo = 0, hi = std::min(a.size(), b.size()) - 1;  // prefix[0] agrees
  while (lo < hi) {
    const std::size_t mid = (lo + hi + 1) / 2;
    if (a[mid] == b[mid]) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
}  // namespace

bool AllocatorMemo::sharing() const { return stats_.lookups <= kWindow || since_close_ < kWindow; }

bool AllocatorMemo::worth_looking() {
  std::lock_guard<std::mutex> lock(mu_);
  return sharing() || ++passed_ % 16 == 0;
}

AllocatorMemo::Match AllocatorMemo::find(std::uint64_t family, std::int64_t context, const Prefix& prefix,
                                         std::int64_t capacity, std::size_t close_from) {
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.lookups;
  stats_.records += prefix.size() - 1;
  Match m;
  Uses& uses = uses_[family ^ (static_cast<std::uint64_t>(context) * 0x9E3779B97F4A7C15ULL)];
  ++since_close_;  // (reset below when a close log is found)
  ++uses.plays;
  // A family's first play pauses copies while the memo shares (in a grid of distinct layouts
  // they would only cost).
  m.promising = uses.hits > 0 || (uses.plays == 1 && sharing());
  auto it = families_.find(family);
  if (it == families_.end()) return m;
  for (Log& log : it->second) {
    const std::size_t shared = shared_records(*log.prefix, prefix);
    if (log.context == context) m.shared = std::max(m.shared, shared);
    for (const auto& r : log.replays)
      if (r->record <= shared && r->serves(capacity) && (!m.replay || r->record > m.replay->record)) {
        m.replay = r;
        log.used = ++clock_;
      }
  }
  if (close_from == 0) close_from = prefix.size() / 2;  // half of the log's records, rounded up
  if (m.shared > 0 && m.shared >= close_from) since_close_ = 0;
  if (m.replay) {
    ++uses.hits;
    ++stats_.hits;
    stats_.records_resumed += m.replay->record;
  }
  return m;
}

void AllocatorMemo::add(std::uint64_t family, std::int64_t context, std::shared_ptr<const Prefix> prefix,
                        std::vector<std::shared_ptr<const AllocatorReplay>> replays) {
  std::size_t bytes = sizeof(Log) + prefix->capacity() * sizeof(std::uint64_t);
  for (const auto& r : replays)
    bytes += sizeof(AllocatorReplay) + r->model.allocator().footprint() + r->failed.capacity() * sizeof(AllocatorReplay::Failure) +
             r->rises.capacity() * sizeof(AllocatorReplay::Rise);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.paused += replays.size();
  std::vector<Log>& logs = families_[family];
  if (logs.size() >= kPerFamily) {
    auto oldest = std::min_element(logs.begin(), logs.end(), [](const Log& a, const Log& b) { return a.used < b.used; });
    bytes_ -= oldest->bytes;
    logs.erase(oldest);
  }
  logs.push_back({context, std::move(prefix), std::move(replays), ++clock_, bytes});
  bytes_ += bytes;
  if (bytes_ > max_bytes_) evict();
}

void AllocatorMemo::evict() {
  std::vector<std::uint64_t> stamps;
  for (const auto& [f, v] : families_)
    for (const Log& l : v) stamps.push_back(l.used);
  std::sort(stamps.begin(), stamps.end());
  // Logs are of similar sizes: drop the oldest quarter of them (at least one).
  const std::uint64_t cut = stamps[std::max<std::size_t>(1, stamps.size() / 4) - 1];
  for (auto f = families_.begin(); f != families_.end();) {
    auto& v = f->second;
    for (const Log& l : v)
      if (l.used <= cut) bytes_ -= l.bytes;
    std::erase_if(v, [&](const Log& l) { return l.used <= cut; });
    f = v.empty() ? families_.erase(f) : std::next(f);
  }
}

AllocatorMemo::Stats AllocatorMemo::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.bytes = bytes_;
  return s;
}

}  // namespace trainsim::exec
