#include <catch2/catch.hpp>

#include "sim/core/units.hpp"

using namespace trainsim::core;

TEST_CASE("sizes parse with decimal and binary prefixes", "[units]") {
  CHECK(parse_bytes("80GiB").value == 80LL * 1024 * 1024 * 1024);
  CHECK(parse_bytes("40GB").value == 40'000'000'000LL);
  CHECK(parse_bytes("512 MiB").value == 512LL * 1024 * 1024);
  CHECK(parse_bytes("1.5KiB").value == 1536);
  CHECK(parse_bytes("4096B").value == 4096);
}

TEST_CASE("a bare number or an unknown unit is rejected with what was expected", "[units]") {
  CHECK_THROWS_WITH(parse_bytes("80"), Catch::Contains("missing unit"));
  CHECK_THROWS_WITH(parse_bytes("80GiBs"), Catch::Contains("expected a size"));
  CHECK_THROWS_WITH(parse_bytes("-1GB"), Catch::Contains("negative size '-1GB'"));
  CHECK_THROWS_WITH(parse_bytes("GB"), Catch::Contains("expected a size"));
  CHECK_THROWS_WITH(parse_bandwidth("900GB"), Catch::Contains("bandwidth"));
  CHECK_THROWS_WITH(parse_flop_rate("312T"), Catch::Contains("FLOP"));
  CHECK_THROWS_WITH(parse_duration("5"), Catch::Contains("missing unit"));
  CHECK_THROWS(parse_bytes("nan GB"));
  CHECK_THROWS(parse_bytes("1e30GB"));
}

TEST_CASE("bandwidth understands bytes and bits", "[units]") {
  CHECK(parse_bandwidth("900GB/s").bytes_per_s == Approx(900e9));
  CHECK(parse_bandwidth("200Gb/s").bytes_per_s == Approx(25e9));
  CHECK(parse_bandwidth("25GiB/s").bytes_per_s == Approx(25.0 * 1073741824));
  CHECK(parse_flop_rate("312TFLOPS").per_s == Approx(312e12));
  CHECK(parse_flop_rate("989.4TFLOP/s").per_s == Approx(989.4e12));
  CHECK(parse_duration("5us").ns == 5000);
  CHECK(parse_duration("1.5ms").ns == 1'500'000);
  CHECK(parse_duration("800ns").ns == 800);
}

TEST_CASE("power reads watts, kilowatts and the bare number of watts its keys first took", "[units]") {
  CHECK(parse_power("500W").watts == 500);
  CHECK(parse_power("0.5kW").watts == 500);
  CHECK(parse_power("700").watts == 700);
  CHECK(parse_power(" 350 W ").watts == 350);
  CHECK(parse_power("1.2MW").watts == Approx(1.2e6));
  CHECK_THROWS_WITH(parse_power("1kWh"), Catch::Contains("unknown power unit 'kWh'"));
  CHECK_THROWS_WITH(parse_power("1KiW"), Catch::Contains("unknown power unit"));
  CHECK_THROWS_WITH(parse_power("full"), Catch::Contains("expected a power"));
  CHECK_THROWS_WITH(parse_power("-5W"), Catch::Contains("negative power"));
  CHECK_THROWS(parse_power("nan"));
  CHECK_THROWS_WITH(parse_power("1e308MW"), Catch::Contains("finite"));
}

TEST_CASE("transfer time rounds up and never turns real work into zero time", "[units]") {
  CHECK((Bytes{1000} / Bandwidth{1e9}).ns == 1000);
  CHECK((Bytes{1} / Bandwidth{1e12}).ns == 1);
  CHECK((Bytes{0} / Bandwidth{1e12}).ns == 0);
  CHECK((Bytes{1001} / Bandwidth{1e12}).ns == 2);  // 1.001 ns -> 2 ns (ceil)
}

TEST_CASE("byte arithmetic that would overflow is an error, not a wrapped number", "[units]") {
  const Bytes huge{INT64_MAX / 2 + 1};
  CHECK_THROWS_AS(huge + huge, OverflowError);
  CHECK_THROWS_AS(huge * 3, OverflowError);
  CHECK((Bytes{6} * 7).value == 42);
  CHECK(ceil_div(Bytes{10}, 4).value == 3);
}

TEST_CASE("sizes are shown in GiB with GB beside", "[units]") {
  CHECK(format_bytes(Bytes{16LL * kGiB}) == "16.00 GiB (17.18 GB)");
  CHECK(format_duration(Duration{1'500'000}) == "1.50 ms");
}
