#pragma once
// The one reader of users' files: scenarios, sweep specs and their bases, model YAML, Hugging
// Face config.json, device files, measurement CSVs, ratchet files, sweep shards. Whatever is
// wrong with the file itself (missing, a directory, a FIFO, unreadable, binary) is a located
// ConfigError at the place that named the path, never a stream exception or a blocked read.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/core/error.hpp"

namespace trainsim::core {

// The largest input file read whole (64 MiB): scenarios and configs are kilobytes, and a
// measurement CSV of a million rows fits. Larger files are refused before they are read.
inline constexpr std::int64_t kMaxTextFileBytes = std::int64_t{64} << 20;

struct TextFileOptions {
  std::int64_t max_bytes = kMaxTextFileBytes;  // < 0: no limit (sweep shards we wrote)
  bool check_text = true;                      // refuse NUL bytes and bytes that are not UTF-8
};

// The whole content of the regular file at `path`. `named_at` is where the path was written (a
// key's value in a file; {path, 0, 0} for a command-line argument) and `key_path` its key; every
// error is located there and names the path: "does not exist", "is a directory", "is not a
// regular file", "cannot read: <reason>", "is larger than 64 MiB", "is not UTF-8 text (byte N
// ...)". A FIFO or device is refused without reading from it, so nothing blocks.
std::string read_text_file(const std::string& path, const SourceLocation& named_at,
                           const std::string& key_path, const TextFileOptions& options = {});

// The 0-based offset of the first byte of `text` that is a NUL or starts no valid UTF-8
// sequence (overlong forms, surrogates and code points past U+10FFFF are invalid); npos if none.
std::size_t first_non_text_byte(std::string_view text);

}  // namespace trainsim::core
