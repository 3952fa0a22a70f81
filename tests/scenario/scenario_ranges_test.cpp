// Ranges of counts and device figures (docs/robustness.md): each is refused where it is read,
// with its key and the accepted range, so nothing wraps when lowering narrows it; and the
// messages that used to mislead (a misspelt required key, a --set that made a section).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "expect_error.hpp"

using namespace trainsim;
using trainsim::test::expect_error;
using trainsim::test::load_error;
using trainsim::test::TempDir;

namespace {

// Lines 1-4; cases add line 5 onwards.
const std::string kBase =
    "model: gpt2\n"
    "device: a100-80gb\n"
    "training: {micro_batch: 1, seq_len: 128}\n"
    "name: t\n";

std::string with_device(const std::string& fields) {
  return "model: gpt2\ndevice: {" + fields + "}\ntraining: {micro_batch: 1, seq_len: 128}\n";
}

}  // namespace

// --- counts ------------------------------------------------------------------------------

TEST_CASE("each parallel degree past 2^31 or 2^32 is refused by its range where it is read") {
  for (const char* key : {"data", "tensor", "pipeline"}) {
    for (const char* value : {"2147483648", "4294967297", "-1", "0"}) {
      const std::string line = std::string("parallel: {") + key + ": " + value + "}\n";
      INFO(line);
      expect_error(
          kBase + line,
          {5, static_cast<int>(std::string("parallel: {").size() + std::string(key).size() + 3),
           std::string("parallel.") + key, "expected an integer in 1..1048576"});
    }
  }
}

TEST_CASE("the largest degree in range is accepted by the reader") {
  // 2^20 data-parallel ranks: in range; the layout's own checks then apply (none fail here).
  TempDir dir;
  const auto s = test::load_text(dir, kBase + "parallel: {data: 1048576}\n");
  CHECK(s.parallel.data == 1048576);
  CHECK(s.cluster.nodes == 131072);
}

TEST_CASE("data x tensor x pipeline above 2^24 devices is refused at the parallel section") {
  expect_error(kBase + "parallel: {data: 1048576, tensor: 1048576}\n",
               {5, 11, "parallel", "above the 16777216"});
}

TEST_CASE("a ZeRO stage past 2^32 is a range error, not stage 1") {
  expect_error(kBase + "parallel: {data: 2, zero: 4294967297}\n",
               {5, 27, "parallel.zero", "expected an integer in 0..3"});
}

TEST_CASE("virtual stages, cluster sizes, batch counts and the op limit have ranges") {
  expect_error(kBase + "parallel: {pipeline: 2, schedule: interleaved, virtual_stages: 2048}\n",
               {5, 64, "parallel.virtual_stages", "1..1024"});
  expect_error(kBase + "cluster: {gpus_per_node: 4294967297, nodes: 1}\n",
               {5, 26, "cluster.gpus_per_node", "1..16777216"});
  expect_error(kBase + "cluster: {gpus_per_node: 1, nodes: 16777217}\n",
               {5, 36, "cluster.nodes", "1..16777216"});
  expect_error(
      "model: gpt2\ndevice: a100-80gb\ntraining: {micro_batch: 1000000001, seq_len: 128}\n",
      {3, 25, "training.micro_batch", "1..1000000000"});
  expect_error("model: gpt2\ndevice: a100-80gb\ntraining: {micro_batch: 1, seq_len: 2147483648}\n",
               {3, 37, "training.seq_len", "1..1073741824"});
  expect_error(
      "model: gpt2\ndevice: a100-80gb\n"
      "training: {micro_batch: 1, seq_len: 128, gradient_accumulation: 2147483649}\n",
      {3, 65, "training.gradient_accumulation", "1..1000000000"});
  expect_error(kBase + "limits: {max_ops: 100000000000}\n",
               {5, 19, "limits.max_ops", "1..1000000000"});
}

TEST_CASE("a float where a count belongs names the range") {
  expect_error(kBase + "parallel: {data: 2.5}\n",
               {5, 18, "parallel.data", "1..1048576, got '2.5'"});
}

// --- device and link figures ---------------------------------------------------------------

TEST_CASE("a FLOP rate too small for a finite duration is refused at the figure") {
  expect_error(
      with_device("preset: a100-80gb, peak_flops: 1e-300TFLOPS"),
      {2, 41, "device.peak_flops", "between 1 GFLOP/s and 1e21 FLOP/s, got '1e-300TFLOPS'"});
  expect_error(with_device("memory: 80GiB, peak_flops: 1e30TFLOPS, memory_bandwidth: 2TB/s"),
               {2, 37, "device.peak_flops", "1e21 FLOP/s"});
  expect_error(with_device("preset: a100-80gb, peak_fp32_flops: 1MFLOPS"),
               {2, 46, "device.peak_fp32_flops", "1 GFLOP/s"});
}

TEST_CASE("memory bandwidth, memory and efficiencies outside their ranges are refused") {
  expect_error(with_device("preset: a100-80gb, memory_bandwidth: 1e-300GB/s"),
               {2, 47, "device.memory_bandwidth", "between 1 GB/s and 1 PB/s"});
  expect_error(with_device("memory: 1KB, peak_flops: 100TFLOPS, memory_bandwidth: 1TB/s"),
               {2, 18, "device.memory", "between 1 MiB and 1 PiB"});
  expect_error(with_device("preset: a100-80gb, matmul_efficiency: 1e-300"),
               {2, 48, "device.matmul_efficiency", "between 0.001 and 1"});
  expect_error(with_device("preset: a100-80gb, kernel_launch: 5s"),
               {2, 44, "device.kernel_launch", "between 0 and 1 s"});
}

TEST_CASE("link and host figures outside their ranges are refused at the figure") {
  expect_error(kBase + "cluster: {inter_node: {preset: ib-hdr, latency: 1000000s}}\n",
               {5, 49, "cluster.inter_node.latency", "between 0 and 1 s"});
  expect_error(kBase + "cluster: {pcie: {preset: pcie4, bandwidth: 1B/s}}\n",
               {5, 44, "cluster.pcie.bandwidth", "between 1 MB/s and 1 PB/s"});
  expect_error(kBase + "cluster: {host_memory: 0GiB}\n",
               {5, 24, "cluster.host_memory", "between 1 MiB and 1 PiB"});
}

TEST_CASE("a device file's absurd figure is located in the device file") {
  TempDir dir;
  const std::string device =
      dir.write("dev.yaml", "preset: a100-80gb\nmemory_bandwidth: 0.000001GB/s\n");
  const auto f = load_error(
      dir, "model: gpt2\ndevice: {file: dev.yaml}\ntraining: {micro_batch: 1, seq_len: 128}\n");
  REQUIRE(f.error.has_value());
  CHECK(f.error->where().file == device);
  CHECK(f.error->where().line == 2);
  CHECK(f.error->key_path() == "device.memory_bandwidth");
}

// --- messages ------------------------------------------------------------------------------

TEST_CASE("a misspelt required key is reported as unknown, with the key it probably means") {
  expect_error("model: gpt2\ndevice: a100-80gb\ntraining: {micro_bach: 1, seq_len: 128}\n",
               {3, 12, "training.micro_bach",
                "unknown key 'micro_bach' \u2014 did you mean 'micro_batch'?"});
  expect_error("modle: gpt2\ndevice: a100-80gb\ntraining: {micro_batch: 1, seq_len: 128}\n",
               {1, 1, "modle", "did you mean 'model'?"});
  expect_error("model: gpt2\ndevice: a100-80gb\ntrainig: {micro_batch: 1, seq_len: 128}\n",
               {3, 1, "trainig", "did you mean 'training'?"});
  expect_error(with_device("memory: 80GiB, peak_flop: 300TFLOPS, memory_bandwidth: 2TB/s"),
               {2, 25, "device.peak_flop", "did you mean 'peak_flops'?"});
}

TEST_CASE("an unknown optional key names its nearest spelling, and none when nothing is near") {
  expect_error(kBase + "parallel: {tesnor: 2}\n",
               {5, 12, "parallel.tesnor", "did you mean 'tensor'?"});
  TempDir dir;
  const auto f = load_error(dir, kBase + "parallel: {colour: 2}\n");
  REQUIRE(f.error.has_value());
  CHECK_THAT(f.error->detail(), !Catch::Contains("did you mean"));
  CHECK_THAT(f.error->detail(), Catch::Contains("expected one of: "));
}

TEST_CASE("a missing required key with no near miss is still reported as missing") {
  expect_error("model: gpt2\ndevice: a100-80gb\ntraining: {seq_len: 128, optimizer: adam}\n",
               {3, 11, "training.micro_batch", "missing required key 'micro_batch'"});
}

TEST_CASE("an error in a section made by --set alone is located at the --set argument") {
  expect_error(kBase, {1, 1, "cluster", "nodes x gpus_per_node = 3", "--set cluster.nodes=3"},
               {"cluster.nodes=3"});
}

TEST_CASE("a negative size says so without a doubled article") {
  expect_error(with_device("preset: a100-80gb, memory: -1GB"),
               {2, 37, "device.memory", "negative size '-1GB'"});
  TempDir dir;
  const auto f = load_error(dir, with_device("preset: a100-80gb, memory: -1GB"));
  REQUIRE(f.error.has_value());
  CHECK_THAT(f.error->detail(), !Catch::Contains("a non-negative a"));
}

TEST_CASE("YAML nested past the parser's limit says so, at the bracket that passed it") {
  const std::string deep = "name: " + std::string(100'000, '[') + "\n";
  expect_error(deep, {1, 7 + 498, "", "nesting too deep"});
  expect_error("name: " + std::string(1'000'000, '{') + "\n", {1, 7 + 498, "", "500 levels"});
}

TEST_CASE("a --set value nested past the limit is located in the argument") {
  expect_error(kBase,
               {1, 6 + 498, "name", "nesting too deep", "--set name=" + std::string(600, '[')},
               {"name=" + std::string(600, '[')});
}
