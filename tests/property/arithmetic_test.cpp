// Arithmetic safety: sizes far beyond any real job either simulate with sane figures or stop
// with a clear ConfigError/OverflowError (exit 2 from the CLI) -- never a wrapped number; empty
// layers never divide by zero; quantities round as units.hpp documents.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "models/model_yaml.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"

using namespace trainsim;
namespace fs = std::filesystem;

namespace {

// Writes `text` to a file of its own and loads it as a scenario.
scenario::Scenario load_text(const std::string& text, const std::string& tag) {
  const fs::path dir =
      fs::temp_directory_path() / ("trainsim-arith-" + std::to_string(::getpid()) + "-" + tag);
  fs::create_directories(dir);
  const fs::path file = dir / "scenario.yaml";
  std::ofstream(file) << text;
  struct Cleanup {
    fs::path d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};
  return scenario::load_scenario(file.string());
}

// Every figure a report prints is non-negative and finite when the step simulated.
void check_sane(const parallel::Plan& plan, const exec::Timeline& tl) {
  CHECK(tl.step_time.ns > 0);
  CHECK(std::isfinite(plan.model_flops));
  CHECK(plan.model_flops > 0);
  CHECK(plan.tokens >= 0);
  for (const auto& P : plan.programs) {
    CHECK(P.parameters >= 0);
    for (auto b : P.model_states.bytes) CHECK(b.value >= 0);
  }
  for (const auto& d : tl.devices) {
    CHECK(d.peak.value > 0);
    for (auto b : d.at_peak.bytes) CHECK(b.value >= 0);
  }
}

// Either a sane simulated step or a clear error for user input; nothing else.
void simulates_or_clear_error(const std::string& text, const std::string& tag) {
  try {
    const auto s = load_text(text, tag);
    const auto plan = parallel::lower(s);
    const auto tl = exec::play(plan);
    check_sane(plan, tl);
  } catch (const core::ConfigError& e) {
    CHECK(std::string(e.what()).size() > 10);
  } catch (const core::OverflowError& e) {
    CHECK(std::string(e.what()).find("overflow") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("a 10-trillion-parameter model on 100000 GPUs with a 1M-token sequence simulates or is a clear error", "[arithmetic]") {
  // 12 h^2 L = 12 x 65536^2 x 200 = 1.03e13 parameters; 8 x 100 x 125 = 100000 GPUs.
  const std::string text =
      "model: {preset: gpt3, layers: 200, hidden: 65536, heads: 512, vocab: 51200, "
      "max_positions: 1048576, name: gpt-10t}\n"
      "device: h100-80gb\n"
      "training: {micro_batch: 1, gradient_accumulation: 100, seq_len: 1048576, "
      "precision: bf16, optimizer: adam, attention: flash}\n"
      "parallel: {data: 125, tensor: 8, pipeline: 100, zero: 1}\n"
      "cluster: {nodes: 12500, gpus_per_node: 8}\n";
  simulates_or_clear_error(text, "10t");
  // Without FlashAttention the s x s scores alone are 512 x 2^40 x 2 bytes per layer.
  std::string standard = text;
  standard.replace(standard.find(", attention: flash"), 18, "");
  simulates_or_clear_error(standard, "10t-standard");
}

TEST_CASE("sizes past 64 bits stop with an OverflowError or a ConfigError", "[arithmetic]") {
  // 4e9 tokens: the attention scores alone are 16 x (4e9)^2 bytes, far past 2^63.
  const std::string text =
      "model: {preset: gpt2, max_positions: 4000000000}\n"
      "device: h100-80gb\n"
      "training: {micro_batch: 1000000, seq_len: 4000000000}\n";
  bool clear_error = false;
  try {
    const auto s = load_text(text, "huge");
    (void)exec::play(parallel::lower(s));
  } catch (const core::ConfigError&) {
    clear_error = true;
  } catch (const core::OverflowError&) {
    clear_error = true;
  }
  CHECK(clear_error);
}

TEST_CASE("layers with zero parameters bytes and FLOPs simulate without dividing by zero", "[arithmetic]") {
  const std::string model =
      "model:\n"
      "  name: zeros\n"
      "  sequence_model: false\n"
      "  layers:\n"
      "    - {name: a, kind: generic, params: 0}\n"
      "    - {name: b, kind: generic, params: 0, saved: 0, output: 0, flops: 0, io_bytes: 0}\n"
      "    - {name: blocks, repeat: 4, layers: [{name: z, kind: generic, params: 0, "
      "params_split: 0, saved_split: 0, backward_factor: 0}]}\n"
      "    - {name: c, kind: generic, params: 0}\n"
      "device: a100-80gb\n";
  for (const char* layout :
       {"parallel: {data: 1}\n", "parallel: {data: 4, zero: 3}\n", "parallel: {data: 2, zero: 2}\n",
        "parallel: {tensor: 2, sequence_parallel: true}\n",
        "parallel: {pipeline: 2, schedule: gpipe}\n",
        "parallel: {pipeline: 2, schedule: interleaved, virtual_stages: 2}\n"}) {
    INFO(layout);
    const auto s = load_text(model + "training: {micro_batch: 2, gradient_accumulation: 4}\n" +
                                 layout,
                             "zeros");
    exec::Timeline tl;
    REQUIRE_NOTHROW(tl = exec::play(parallel::lower(s)));
    CHECK(tl.step_time.ns > 0);  // kernel launches still take time
    for (const auto& d : tl.devices) CHECK(d.peak == s.device.reserved);
  }
}

TEST_CASE("durations round up to whole nanoseconds and real work never takes zero time", "[arithmetic][units]") {
  using core::Duration;
  CHECK(core::duration_from_seconds(0) == Duration{0});
  CHECK(core::duration_from_seconds(1e-15) == Duration{1});
  CHECK(core::duration_from_seconds(1.2e-9) == Duration{2});
  CHECK(core::duration_from_seconds(800e-9) == Duration{800});  // not 801 from 800.0000000000001
  CHECK(core::duration_from_seconds(2.5) == Duration{2'500'000'000});
  CHECK(core::Bytes{1} / core::Bandwidth{1e30} == Duration{1});
  CHECK(core::Bytes{0} / core::Bandwidth{1e9} == Duration{0});
  CHECK(core::flops_time(0, core::FlopRate{1e12}) == Duration{0});
  CHECK(core::flops_time(1, core::FlopRate{1e12}) == Duration{1});
  CHECK(core::parse_duration("1.5ns") == Duration{2});
  CHECK(core::parse_duration("800ns") == Duration{800});
  CHECK_THROWS_AS(core::duration_from_seconds(1e12), core::OverflowError);
  CHECK_THROWS_AS(core::duration_from_seconds(-1), std::invalid_argument);
  CHECK_THROWS_AS(core::duration_from_seconds(std::nan("")), std::invalid_argument);
}

TEST_CASE("sizes and rates parse exactly or are rejected, never infinite or negative", "[arithmetic][units]") {
  CHECK(core::parse_bytes("1.5KiB").value == 1536);
  CHECK(core::parse_bytes("1.5TiB").value == 1'649'267'441'664);
  CHECK(core::parse_bytes("40GB").value == 40'000'000'000);
  CHECK(core::parse_bandwidth("200Gb/s").bytes_per_s == 25e9);
  CHECK(core::parse_bytes("9EB").value == 9'000'000'000'000'000'000);
  CHECK_THROWS_AS(core::parse_bytes("10EB"), std::invalid_argument);  // past 2^63
  CHECK_THROWS_AS(core::parse_bytes("-1GB"), std::invalid_argument);
  // A finite number times a prefix can overflow a double: a rate must stay finite.
  CHECK_THROWS_AS(core::parse_bandwidth("1e300PB/s"), std::invalid_argument);
  CHECK_THROWS_AS(core::parse_flop_rate("1e300PFLOPS"), std::invalid_argument);
  CHECK_THROWS_AS(core::parse_bandwidth("0GB/s"), std::invalid_argument);
  CHECK_THROWS_AS(core::checked_mul(std::int64_t{1} << 40, std::int64_t{1} << 40), core::OverflowError);
  CHECK_THROWS_AS(core::Bytes{INT64_MAX} + core::Bytes{1}, core::OverflowError);
}
