#include "sim/core/text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace trainsim::core {

namespace {

// Closes the descriptor on every path out, exceptions included.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Length of the UTF-8 sequence starting at s[i], or 0 when it is not valid (RFC 3629 table).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  if (c < 0x80) return c == 0 ? 0 : 1;
  // Lead byte -> sequence length and the allowed range of the second byte: no overlong forms
  // (C0, C1, E0 80-9F, F0 80-8F), no surrogates (ED A0-BF), nothing past U+10FFFF (F4 90-BF).
  struct Lead {
    unsigned char first, last, n, lo, hi;
  };
  static constexpr Lead kLeads[] = {{0xC2, 0xDF, 2, 0x80, 0xBF}, {0xE0, 0xE0, 3, 0xA0, 0xBF},
                                    {0xE1, 0xEC, 3, 0x80, 0xBF}, {0xED, 0xED, 3, 0x80, 0x9F},
                                    {0xEE, 0xEF, 3, 0x80, 0xBF}, {0xF0, 0xF0, 4, 0x90, 0xBF},
                                    {0xF1, 0xF3, 4, 0x80, 0xBF}, {0xF4, 0xF4, 4, 0x80, 0x8F}};
  const Lead* lead = nullptr;
  for (const Lead& l : kLeads)
    if (c >= l.first && c <= l.last) lead = &l;
  if (!lead) return 0;
  const std::size_t n = lead->n;
  const unsigned char lo = lead->lo, hi = lead->hi;
  if (i + n > s.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  return n;
}

}  // namespace

std::size_t first_non_text_byte(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    // ASCII runs are almost all of every file: test them a byte at a time without the table.
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c != 0 && c < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_length(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string read_text_file(const std::string& path, const SourceLocation& named_at,
                           const std::string& key_path, const TextFileOptions& options) {
  // From the command line the path is the message's file already; from a key, quote it.
  const bool self = named_at.line == 0 && named_at.file == path;
  const std::string subject = self ? std::string() : "'" + path + "' ";
  const auto fail = [&](const std::string& what) -> void {
    throw ConfigError(named_at, key_path, subject + what);
  };
  const auto reason = [](int err) { return std::string(std::strerror(err)); };

  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; fstat then refuses it.
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) {
    const int err = errno;
    if (err == ENOENT) fail(path.empty() ? "an empty path names no file" : "does not exist");
    if (err == ENOTDIR) fail("does not exist (a folder on its path is a file)");
    fail("cannot read: " + reason(err));
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) fail("cannot read: " + reason(errno));
  if (S_ISDIR(st.st_mode)) fail("is a directory, not a file");
  if (!S_ISREG(st.st_mode)) fail("is not a regular file (a FIFO, socket or device)");
  if (options.max_bytes >= 0 && st.st_size > options.max_bytes)
    fail("is larger than " + std::to_string(options.max_bytes >> 20) + " MiB (" +
         std::to_string(st.st_size) + " bytes)");

  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t got = ::read(f.fd, buf, sizeof buf);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      fail("cannot read: " + reason(errno));
    }
    text.append(buf, static_cast<std::size_t>(got));
    // A file that grows while it is read (a log being written) stops at the limit too.
    if (options.max_bytes >= 0 && static_cast<std::int64_t>(text.size()) > options.max_bytes)
      fail("is larger than " + std::to_string(options.max_bytes >> 20) + " MiB");
  }

  if (options.check_text) {
    const std::size_t bad = first_non_text_byte(text);
    if (bad != std::string_view::npos) {
      int line = 1;
      std::size_t line_start = 0;
      for (std::size_t i = 0; i < bad; ++i)
        if (text[i] == '\n') ++line, line_start = i + 1;
      const int column = static_cast<int>(bad - line_start) + 1;
      const unsigned char b = static_cast<unsigned char>(text[bad]);
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", b);
      const std::string what =
          b == 0 ? "is not text: byte " + std::to_string(bad + 1) + " is a NUL"
                 : "is not UTF-8 text: byte " + std::to_string(bad + 1) + " is " + hex;
      // Named on the command line: locate the byte itself; named by a key: say where it is.
      if (self) throw ConfigError({path, line, column}, key_path, what);
      fail(what + " (line " + std::to_string(line) + ", column " + std::to_string(column) + ")");
    }
  }
  return text;
}

}  // namespace trainsim::core
