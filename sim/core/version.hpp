#pragma once
// trainsim's version: printed by `trainsim --version` and part of a sweep shard's fingerprint
// (shards written by different versions do not merge).
namespace trainsim::core {
inline constexpr const char* kVersion = "0.1.0";
}  // namespace trainsim::core
