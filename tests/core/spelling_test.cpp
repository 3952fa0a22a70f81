#include <catch2/catch.hpp>

#include "sim/core/spelling.hpp"

using trainsim::core::closest_spelling;
using trainsim::core::edit_distance;
using trainsim::core::near_miss;

TEST_CASE("edit distance counts inserts, deletes, substitutions and swapped neighbours",
          "[spelling]") {
  CHECK(edit_distance("micro_bach", "micro_batch") == 1);
  CHECK(edit_distance("modle", "model") == 1);  // one swap, not two substitutions
  CHECK(edit_distance("tesnor", "tensor") == 1);
  CHECK(edit_distance("", "data") == 4);
  CHECK(edit_distance("same", "same") == 0);
}

TEST_CASE("a near miss is at most two edits and under half the word", "[spelling]") {
  CHECK(near_miss("micro_bach", "micro_batch"));
  CHECK(near_miss("peak_flop", "peak_flops"));
  CHECK_FALSE(near_miss("data", "tensor"));
  CHECK_FALSE(near_miss("zer", "dp"));       // short words need closer spellings
  CHECK_FALSE(near_miss("model", "model"));  // the word itself is no slip
}

TEST_CASE("the closest spelling is the nearest candidate, or none", "[spelling]") {
  const std::vector<std::string> keys{"data", "tensor", "pipeline", "virtual_stages"};
  CHECK(closest_spelling("tensr", keys) == "tensor");
  CHECK(closest_spelling("pipline", keys) == "pipeline");
  CHECK(closest_spelling("bucket", keys).empty());
  CHECK(closest_spelling("data", keys).empty());
}
