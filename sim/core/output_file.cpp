#include "sim/core/output_file.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "sim/core/error.hpp"

namespace trainsim::core {

namespace {
constexpr std::size_t kBufferBytes = 1 << 16;
// The system's reason for a failure, when there is one.
std::string reason(int err) {
  return err != 0 ? std::string(": ") + std::strerror(err) : std::string();
}
}  // namespace

OutputFile::Buf::Buf() : storage(kBufferBytes) {
  setp(storage.data(), storage.data() + storage.size());
}

bool OutputFile::Buf::drain() {
  const char* p = pbase();
  std::size_t left = static_cast<std::size_t>(pptr() - pbase());
  while (left > 0 && error == 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  setp(pbase(), epptr());  // what could not be written is dropped: the file has failed anyway
  return error == 0;
}

OutputFile::Buf::int_type OutputFile::Buf::overflow(int_type c) {
  if (!drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

int OutputFile::Buf::sync() {
  return drain() ? 0 : -1;
}

OutputFile::OutputFile(std::string path, std::string option, std::ios::openmode mode)
    : path_(std::move(path)), option_(std::move(option)), out_(&buf_) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | ((mode & std::ios::app) ? O_APPEND : O_TRUNC);
  do buf_.fd = ::open(path_.c_str(), flags, 0666);
  while (buf_.fd < 0 && errno == EINTR);
  if (buf_.fd < 0) fail(errno);
}

OutputFile::~OutputFile() {
  if (buf_.fd >= 0) ::close(buf_.fd);
}

void OutputFile::flush() {
  out_.flush();
  if (buf_.error != 0 || !out_) fail(buf_.error);
}

void OutputFile::close() {
  flush();
  const int fd = buf_.fd;
  buf_.fd = -1;
  if (::close(fd) != 0 && errno != EINTR) fail(errno);
}

void OutputFile::fail(int err) const {
  throw ConfigError({path_, 0, 0}, option_, "cannot write this file" + reason(err));
}

void check_stdout() {
  errno = 0;
  std::cout.flush();
  // cout writes through C stdio (synced), whose buffer meets the file only here.
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (failed) {
    const int err = errno;
    std::clearerr(stdout);
    throw ConfigError({"standard output", 0, 0}, "", "cannot write" + reason(err));
  }
}

}  // namespace trainsim::core
