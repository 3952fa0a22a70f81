#pragma once
// Output files whose failures are never silent: opening, every write, flush and the close are
// checked, and a failure (a missing folder, a directory, a full disk, an I/O error) throws a
// ConfigError naming the file, where its path came from and the system's reason, e.g.
// "/dev/full: --output: cannot write this file: No space left on device". main maps it to
// exit code 2.
#include <ios>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace trainsim::core {

class OutputFile {
 public:
  // Opens `path` for writing: truncated, or appended to when `mode` has std::ios::app.
  // `option` names where the path came from in messages ("--output", "--csv"; may be empty).
  OutputFile(std::string path, std::string option, std::ios::openmode mode = std::ios::trunc);
  // Closes without checking: an error is already on its way, or close() was called.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return out_; }
  const std::string& path() const { return path_; }
  // Writes what is buffered to the file; throws if any write so far failed.
  void flush();
  // flush(), then closes the file (where some file systems first report a failure); throws.
  void close();

 private:
  // Buffers writes to a file descriptor and keeps the first failure's errno (an ofstream
  // forgets it: its badbit says that a write failed, not why).
  class Buf : public std::streambuf {
   public:
    int fd = -1;
    int error = 0;  // errno of the first failed write, 0 if none
    std::vector<char> storage;
    Buf();
    bool drain();  // writes the buffer out; false on failure

   protected:
    int_type overflow(int_type c) override;
    int sync() override;
  };
  [[noreturn]] void fail(int err) const;
  std::string path_, option_;
  Buf buf_;
  std::ostream out_;
};

// Flushes standard output (the C++ stream and C stdio) and throws a ConfigError when writing
// it failed ("standard output: cannot write: No space left on device").
void check_stdout();

}  // namespace trainsim::core
