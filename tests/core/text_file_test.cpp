// core::read_text_file: the one reader of users' files. Whatever is wrong with the file is a
// ConfigError at the place that named it, naming the path; nothing blocks or throws otherwise.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/text_file.hpp"

using namespace trainsim;
namespace fs = std::filesystem;

namespace {

// A fresh folder per test case, removed afterwards.
struct Scratch {
  fs::path dir;
  Scratch() {
    static int n = 0;
    dir = fs::temp_directory_path() /
          ("trainsim_text_file_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string write(const std::string& name, const std::string& bytes) const {
    const fs::path p = dir / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
};

const core::SourceLocation kKey{"scenario.yaml", 3, 9};

// The error reading `path` as if named at scenario.yaml:3:9 under model.file.
core::ConfigError error_named_by_key(const std::string& path, core::TextFileOptions o = {}) {
  try {
    core::read_text_file(path, kKey, "model.file", o);
  } catch (const core::ConfigError& e) {
    CHECK(e.where().file == "scenario.yaml");
    CHECK(e.where().line == 3);
    CHECK(e.where().column == 9);
    CHECK(e.key_path() == "model.file");
    CHECK_THAT(e.detail(), Catch::StartsWith("'" + path + "' "));
    return e;
  }
  FAIL("no error reading " << path);
  throw;
}

// The error reading `path` named on the command line.
core::ConfigError error_named_by_argument(const std::string& path) {
  try {
    core::read_text_file(path, {path, 0, 0}, "");
  } catch (const core::ConfigError& e) {
    CHECK(e.where().file == path);
    return e;
  }
  FAIL("no error reading " << path);
  throw;
}

}  // namespace

TEST_CASE("a readable text file comes back byte for byte") {
  Scratch s;
  const std::string text = "name: caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\r\n\ttabs: ok\n";
  CHECK(core::read_text_file(s.write("a.yaml", text), kKey, "k") == text);
  CHECK(core::read_text_file(s.write("empty.yaml", ""), kKey, "k").empty());
  const std::string bom = "\xEF\xBB\xBFname: x\n";
  CHECK(core::read_text_file(s.write("bom.yaml", bom), kKey, "k") == bom);
}

TEST_CASE("a missing file does not exist, at the key that named it") {
  Scratch s;
  const auto e = error_named_by_key((s.dir / "none.yaml").string());
  CHECK_THAT(e.detail(), Catch::EndsWith("does not exist"));
  const auto f = error_named_by_argument((s.dir / "none.yaml").string());
  CHECK(f.where().line == 0);
  CHECK(f.detail() == "does not exist");
  // A file used as a folder on the path.
  const std::string file = s.write("f.yaml", "x: 1\n");
  CHECK_THAT(error_named_by_key(file + "/inner.yaml").detail(), Catch::Contains("does not exist"));
}

TEST_CASE("a directory is refused as a directory") {
  Scratch s;
  CHECK_THAT(error_named_by_key(s.dir.string()).detail(), Catch::Contains("is a directory"));
  CHECK_THAT(error_named_by_key("..").detail(), Catch::Contains("'..' is a directory"));
  const auto e = error_named_by_argument(s.dir.string());
  CHECK_THAT(e.what(), Catch::Equals(s.dir.string() + ": is a directory, not a file"));
}

TEST_CASE("a FIFO is refused without waiting for a writer") {
  Scratch s;
  const std::string fifo = (s.dir / "pipe").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(error_named_by_key(fifo).detail(), Catch::Contains("is not a regular file"));
}

TEST_CASE("a character device is not a regular file") {
  CHECK_THAT(error_named_by_key("/dev/null").detail(), Catch::Contains("is not a regular file"));
}

TEST_CASE("a file past the size limit is refused before it is read") {
  Scratch s;
  const std::string path = s.write("big.csv", std::string(3 << 20, 'x'));
  const auto e = error_named_by_key(path, {.max_bytes = 2 << 20});
  CHECK_THAT(e.detail(), Catch::Contains("is larger than 2 MiB"));
  CHECK(core::read_text_file(path, kKey, "k", {.max_bytes = -1}).size() == (3u << 20));
  CHECK(core::kMaxTextFileBytes == 64 << 20);
}

TEST_CASE("a NUL byte is not text, located by byte, line and column") {
  Scratch s;
  const std::string path = s.write("nul.yaml", std::string("a: 1\nbc\0d\n", 10));
  const auto e = error_named_by_key(path);
  CHECK_THAT(e.detail(), Catch::Contains("is not text: byte 8 is a NUL (line 2, column 3)"));
  // From the command line the byte itself is the location.
  const auto f = error_named_by_argument(path);
  CHECK(f.where().line == 2);
  CHECK(f.where().column == 3);
  CHECK(f.detail() == "is not text: byte 8 is a NUL");
  // Unless the caller reads bytes it wrote itself.
  CHECK(core::read_text_file(path, kKey, "k", {.check_text = false}).size() == 10);
}

TEST_CASE("bytes that are not UTF-8 are refused at the first bad one") {
  Scratch s;
  const std::string path = s.write("latin1.yaml", "name: caf\xE9\n");
  CHECK_THAT(error_named_by_key(path).detail(),
             Catch::Contains("is not UTF-8 text: byte 10 is 0xE9 (line 1, column 10)"));
}

TEST_CASE("first_non_text_byte follows RFC 3629") {
  using core::first_non_text_byte;
  const auto npos = std::string_view::npos;
  CHECK(first_non_text_byte("") == npos);
  CHECK(first_non_text_byte("plain ascii\n") == npos);
  CHECK(first_non_text_byte("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF") == npos);
  CHECK(first_non_text_byte("ab\x80") == 2);            // a lone continuation byte
  CHECK(first_non_text_byte("a\xC0\xAF") == 1);         // overlong '/'
  CHECK(first_non_text_byte("a\xE0\x80\xAF") == 1);     // overlong, three bytes
  CHECK(first_non_text_byte("\xED\xA0\x80") == 0);      // a UTF-16 surrogate
  CHECK(first_non_text_byte("\xF4\x90\x80\x80") == 0);  // past U+10FFFF
  CHECK(first_non_text_byte("\xF5\x80\x80\x80") == 0);  // no such lead byte
  CHECK(first_non_text_byte("ok\xE2\x82") == 2);        // cut at the end
  CHECK(first_non_text_byte("\xE2\x82x") == 0);         // cut by ASCII
  CHECK(first_non_text_byte(std::string_view("a\0b", 3)) == 1);
}
