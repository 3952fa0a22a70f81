#include <catch2/catch.hpp>

#include <filesystem>

#include "sim/validation/compare.hpp"
#include "tests/validation/table_files.hpp"

using namespace trainsim;
namespace fs = std::filesystem;

namespace {

// A table named after the test.
std::string csv(const std::string& name, const std::string& text) {
  return test::write_table("table-test-" + name + ".csv", text);
}

using test::error_of;

const std::string kHeader = "kind,flops,us\n";

}  // namespace

TEST_CASE("a table knows the line and column of every cell", "[validation][csv]") {
  const auto path = csv("where", "a, b,\"c, d\"\n\n1,  22,\"x\"\n");
  const auto t = validation::read_csv(path);
  REQUIRE(t.rows.size() == 1);
  CHECK(t.header == std::vector<std::string>{"a", "b", "c, d"});
  CHECK(t.lines[0] == 3);  // the blank line 2 is skipped, not counted away
  CHECK(t.columns[0] == std::vector<int>{1, 5, 8});
  CHECK(t.rows[0][2] == "x");
}

TEST_CASE("impossible measured times are located at their cell", "[validation][csv]") {
  for (const std::string bad : {"-3", "0", "inf", "nan", "-inf", "3ms", "", "1e999", "0x10"}) {
    INFO("cell '" << bad << "'");
    const auto path = csv("time", kHeader + "matmul,1e9,20\nmatmul,2e9," + bad + "\n");
    const auto t = validation::read_csv(path);
    CHECK(t.positive_time(0, 2, "in us") == 20);
    const std::string msg = error_of([&] { t.positive_time(1, 2, "in us"); });
    CHECK(msg.rfind(path + ":3:12: column 'us': expected a positive finite time in us, got ", 0) ==
          0);
  }
}

TEST_CASE("whole numbers are whole, positive and exact", "[validation][csv]") {
  const auto path = csv("int", "n\n8\n8.0\n+4\n1e3\n8.5\n0\n-2\n9223372036854775808\nfour\n");
  const auto t = validation::read_csv(path);
  CHECK(t.positive_integer(0, 0) == 8);
  CHECK(t.positive_integer(1, 0) == 8);
  CHECK(t.positive_integer(2, 0) == 4);
  CHECK(t.positive_integer(3, 0) == 1000);
  for (std::size_t row = 4; row < t.rows.size(); ++row) {
    INFO("cell '" << t.rows[row][0] << "'");
    const std::string msg = error_of([&] { t.positive_integer(row, 0); });
    CHECK(msg.find(":" + std::to_string(row + 2) +
                   ":1: column 'n': expected a positive whole number") != std::string::npos);
  }
}

TEST_CASE("malformed tables are refused where they go wrong", "[validation][csv]") {
  CHECK(error_of([] {
          validation::read_csv(csv("empty", ""));
        }).find(":1:1: expected a header row") != std::string::npos);
  CHECK(error_of([] {
          validation::read_csv(csv("header", "a,b\n"));
        }).find(":1:1: expected at least one data row") != std::string::npos);
  CHECK(error_of([] {
          validation::read_csv(csv("ragged", "a,b\n1,2\n1,2,3\n"));
        }).find(":3:5: expected 2 cells as in the header, got 3") != std::string::npos);
  CHECK(error_of([] {
          validation::read_csv(csv("short", "a,b\n1\n"));
        }).find(":2:1: expected 2 cells as in the header, got 1") != std::string::npos);
  CHECK(error_of([] {
          validation::read_csv(csv("quote", "a,b\n1,\"2\n"));
        }).find(":2:3: this quoted cell is not closed") != std::string::npos);
}

TEST_CASE("compare checks every cell before it loads the base scenario", "[validation][compare]") {
  const std::string header =
      "# layers,hidden size,attention heads,sequence length,micro batch,global batch,"
      "tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)\n";
  const auto path = csv("compare", header + "2,64,2,128,1,8,1,8,1,100\n2,64,2,128,1,8,1,8,1,-70\n");
  // The base does not exist: the bad cell must be reported first.
  const std::string msg =
      error_of([&] { validation::compare(validation::read_csv(path), {}, "no/such/base.yaml"); });
  CHECK(
      msg ==
      path +
          ":3:22: column 'iteration time (ms)': expected a positive finite time in ms, got '-70'");

  const auto missing = csv("missing", "# layers\n2\n");
  CHECK(
      error_of([&] { validation::compare(validation::read_csv(missing), {}, "no/such/base.yaml"); })
          .find(missing + ":1:1: the table has no column 'hidden size'; name the column that holds "
                          "hidden with --map hidden=COLUMN") == 0);
}

TEST_CASE("the default base scenario is found from the executable, not the working folder",
          "[validation][compare]") {
  const std::string found = validation::find_shipped_file(
      validation::kDefaultBase, validation::shipped_roots(), "pass --base SCENARIO");
  CHECK(fs::is_regular_file(found));
  CHECK(fs::path(found).is_absolute());
  const std::string msg = error_of([] {
    validation::find_shipped_file(validation::kDefaultBase, {"/no/such/folder"},
                                  "pass --base SCENARIO");
  });
  CHECK(msg ==
        std::string(validation::kDefaultBase) +
            ": not found beside trainsim (looked under: /no/such/folder); pass --base SCENARIO");
}
