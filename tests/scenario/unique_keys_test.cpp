// Duplicate keys: yaml-cpp keeps the first of two equal keys and drops the second silently, so
// every loader checks the parsed tree once (models::check_unique_keys) and names both places.
#include <catch2/catch.hpp>

#include <string>

#include <yaml-cpp/yaml.h>

#include "models/unique_keys.hpp"
#include "scenario_files.hpp"
#include "sim/core/error.hpp"

using namespace trainsim;
using trainsim::test::load_error;
using trainsim::test::TempDir;

namespace {

// The error check_unique_keys throws for `text`, or nullopt.
std::optional<core::ConfigError> duplicate_in(const std::string& text) {
  try {
    models::check_unique_keys(YAML::Load(text), "f.yaml");
  } catch (const core::ConfigError& e) {
    return e;
  }
  return std::nullopt;
}

void expect_duplicate(const std::string& text, int line, int column, const std::string& path,
                      const std::string& message) {
  INFO("yaml:\n" << text);
  const auto e = duplicate_in(text);
  REQUIRE(e);
  CHECK(e->where().file == "f.yaml");
  CHECK(e->where().line == line);
  CHECK(e->where().column == column);
  CHECK(e->key_path() == path);
  CHECK(e->detail() == message);
}

}  // namespace

TEST_CASE("a key written twice at the top is named at its second place") {
  expect_duplicate("model: gpt2\ndevice: a100-80gb\nmodel: llama2-7b\n", 3, 1, "",
                   "duplicate key 'model' (first at line 1, column 1)");
  const auto e = duplicate_in("model: a\nmodel: b\n");
  REQUIRE(e);
  CHECK(std::string(e->what()) == "f.yaml:2:1: duplicate key 'model' (first at line 1, column 1)");
}

TEST_CASE("a duplicate in a flow mapping names the mapping's key path") {
  expect_duplicate("training: {micro_batch: 1, seq_len: 8, micro_batch: 2}\n", 1, 40, "training",
                   "duplicate key 'micro_batch' (first at line 1, column 12)");
}

TEST_CASE("duplicates are found at any depth, through lists") {
  expect_duplicate("a:\n  b:\n    c: 1\n    c: 2\n", 4, 5, "a.b",
                   "duplicate key 'c' (first at line 3, column 5)");
  expect_duplicate("model:\n  layers:\n    - {name: x}\n    - {name: y, kind: k, name: z}\n", 4, 26,
                   "model.layers[1]", "duplicate key 'name' (first at line 4, column 8)");
  expect_duplicate("- [1, {a: 1, a: 2}]\n", 1, 14, "[0][1]",
                   "duplicate key 'a' (first at line 1, column 8)");
}

TEST_CASE("the first repeat in the file is reported, in small and large mappings") {
  // Two repeated keys: the one whose second place comes first.
  expect_duplicate("b: 1\na: 1\na: 2\nb: 2\n", 3, 1, "",
                   "duplicate key 'a' (first at line 2, column 1)");
  // More than 16 keys take the sorted path; same answer.
  std::string big;
  for (int i = 0; i < 40; ++i) big += "k" + std::to_string(i) + ": 1\n";
  expect_duplicate(big + "k7: 2\nk3: 2\nk3: 3\n", 41, 1, "",
                   "duplicate key 'k7' (first at line 8, column 1)");
  CHECK_FALSE(duplicate_in(big));
}

TEST_CASE("distinct keys, equal values, aliases and scalars are not duplicates") {
  CHECK_FALSE(duplicate_in("a: 1\nb: 1\nc: {a: 1, b: 1}\nd: [{a: 1}, {a: 1}]\n"));
  CHECK_FALSE(duplicate_in("x: &m {k: 1}\ny: *m\nz: *m\n"));
  CHECK_FALSE(duplicate_in("just a scalar"));
  CHECK_FALSE(duplicate_in(""));
  // Keys compare by text: 1 and '1' are the same key to a reader that asks for "1".
  CHECK(duplicate_in("1: a\n'1': b\n"));
}

TEST_CASE("aliases of aliases are walked once, not once per use") {
  // 10 levels of 10 uses: expanding would visit 10^10 mappings.
  std::string text = "l0: &l0 {a: 1, b: 2}\n";
  for (int i = 1; i <= 10; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1);
    text += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", " : "") + prev;
    text += "]\n";
  }
  CHECK_FALSE(duplicate_in(text));
}

TEST_CASE("a scenario with a key twice is refused, not read with the first") {
  TempDir dir;
  const auto f = load_error(dir,
                            "model: gpt2\ndevice: a100-80gb\ntraining: {micro_batch: 1, seq_len: "
                            "128, micro_batch: 2}\n");
  REQUIRE(f.error);
  CHECK(f.error->where().file == f.path);
  CHECK(f.error->where().line == 3);
  CHECK(f.error->where().column == 42);
  CHECK(f.error->key_path() == "training");
  CHECK_THAT(f.error->detail(),
             Catch::Equals("duplicate key 'micro_batch' (first at line 3, column 12)"));
}

TEST_CASE("a device file with a key twice is refused in the device file") {
  TempDir dir;
  const std::string dev = dir.write("dev.yaml", "preset: a100-80gb\nmemory: 40GB\nmemory: 80GB\n");
  const auto f = load_error(
      dir, "model: gpt2\ndevice: {file: dev.yaml}\ntraining: {micro_batch: 1, seq_len: 128}\n");
  REQUIRE(f.error);
  CHECK(f.error->where().file == dev);
  CHECK(f.error->where().line == 3);
  CHECK_THAT(f.error->detail(), Catch::Contains("duplicate key 'memory' (first at line 2"));
}

TEST_CASE("a model file with a key twice is refused in the model file") {
  TempDir dir;
  const std::string m =
      dir.write("m.yaml",
                "name: tiny\nlayers:\n  - {name: a, kind: linear, in: 8, out: 8}\n"
                "name: other\n");
  const auto f =
      load_error(dir, "model: {file: m.yaml}\ndevice: a100-80gb\ntraining: {micro_batch: 1}\n");
  REQUIRE(f.error);
  CHECK(f.error->where().file == m);
  CHECK(f.error->where().line == 4);
  CHECK_THAT(f.error->detail(), Catch::Equals("duplicate key 'name' (first at line 1, column 1)"));
}
