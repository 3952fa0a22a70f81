// Layout keys: cluster.placement, parallel.stage_devices, parallel.allreduce and the NVSwitch
// link presets; what good input turns into and where bad input is located.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "expect_error.hpp"

using namespace trainsim;
using namespace trainsim::scenario;
using trainsim::test::load_error;
using trainsim::test::load_text;
using trainsim::test::TempDir;

namespace {

// A valid scenario (lines 1-6) that cases extend with lines 7 onwards.
const std::string kBase =
    "model: gpt2\n"
    "device: a100-80gb\n"
    "training:\n"
    "  micro_batch: 2\n"
    "  seq_len: 1024\n"
    "parallel: {data: 2, tensor: 2, pipeline: 2}\n";

void expect_error(const std::string& text, int line, int column, const std::string& key_path,
                  const std::string& says, const std::vector<std::string>& sets = {}) {
  test::expect_error(text, {line, column, key_path, says}, sets);
}

}  // namespace

TEST_CASE("placement defaults to tensor then pipeline then data") {
  TempDir dir;
  const Scenario s = load_text(dir, kBase);
  CHECK(s.cluster.placement[0] == ParallelDim::tensor);
  CHECK(s.cluster.placement[1] == ParallelDim::pipeline);
  CHECK(s.cluster.placement[2] == ParallelDim::data);
}

TEST_CASE("placement takes any permutation in the file or from --set") {
  TempDir dir;
  const Scenario s = load_text(dir, kBase + "cluster:\n  placement: [data, tensor, pipeline]\n");
  CHECK(s.cluster.placement[0] == ParallelDim::data);
  CHECK(s.cluster.placement[1] == ParallelDim::tensor);
  CHECK(s.cluster.placement[2] == ParallelDim::pipeline);
  CHECK(s.cluster.gpus_per_node == 8);  // sizes still default
  const Scenario t = load_text(dir, kBase, {"cluster.placement=[pipeline, data, tensor]"});
  CHECK(t.cluster.placement[0] == ParallelDim::pipeline);
  CHECK(t.cluster.placement[2] == ParallelDim::tensor);
}

TEST_CASE("an unknown placement name is located at the name") {
  expect_error(kBase + "cluster:\n  placement: [tensor, pipe, data]\n", 8, 23, "cluster.placement[1]",
               "unknown parallel dimension 'pipe'");
}

TEST_CASE("a placement naming a dimension twice is located at the second") {
  expect_error(kBase + "cluster:\n  placement: [tensor, data, tensor]\n", 8, 29, "cluster.placement[2]",
               "'tensor' appears twice");
}

TEST_CASE("a placement missing a dimension is located at the list") {
  expect_error(kBase + "cluster:\n  placement: [tensor, data]\n", 8, 14, "cluster.placement",
               "missing 'pipeline'");
}

TEST_CASE("a placement that is not a list is rejected") {
  expect_error(kBase + "cluster:\n  placement: tensor\n", 8, 14, "cluster.placement",
               "expected a list ordering tensor");
}

// kBase's first five lines, then a block parallel section of pipeline 2 from line 6.
const std::string kHead = kBase.substr(0, kBase.find("parallel:")) + "parallel:\n  pipeline: 2\n";

TEST_CASE("stage_devices gives stages their own device in every device form") {
  TempDir dir;
  const Scenario s = load_text(dir, kBase.substr(0, kBase.find("parallel:")) +
                                        "parallel:\n"
                                        "  pipeline: 4\n"
                                        "  stage_devices:\n"
                                        "    - {stages: [0, 1], device: h100-80gb}\n"
                                        "    - {stages: [3], device: {preset: a100-40gb, reserved: 3GiB}}\n");
  REQUIRE(s.parallel.stage_devices.size() == 2);
  CHECK(s.parallel.stage_devices[0].stages == std::vector<std::int64_t>{0, 1});
  CHECK(s.stage_device(0).name == "h100-80gb");
  CHECK(s.stage_device(1).name == "h100-80gb");
  CHECK(s.stage_device(2).name == "a100-80gb");  // the scenario's device
  CHECK(s.stage_device(3).name == "a100-40gb");
  CHECK(s.stage_device(3).reserved == core::Bytes{3 * core::kGiB});
  CHECK(s.stage_device(3).memory == hw::find_device("a100-40gb")->memory);
  // Without the key every stage runs on the scenario's device.
  const Scenario t = load_text(dir, kHead);
  CHECK(t.parallel.stage_devices.empty());
  CHECK(t.stage_device(1).name == "a100-80gb");
}

TEST_CASE("a stage_devices stage beyond the pipeline is located at the index") {
  expect_error(kHead + "  stage_devices:\n    - {stages: [1, 2], device: h100-80gb}\n", 9, 20,
               "parallel.stage_devices[0].stages[1]", "stage 2 does not exist: pipeline is 2");
}

TEST_CASE("a stage given two devices is located at its second mention") {
  expect_error(kHead + "  stage_devices:\n    - {stages: [0], device: h100-80gb}\n"
                       "    - {stages: [1, 0], device: h100-80gb}\n",
               10, 20, "parallel.stage_devices[1].stages[1]", "stage 0 already has a device");
}

TEST_CASE("a bad stage_devices device is located inside the entry") {
  expect_error(kHead + "  stage_devices:\n    - {stages: [0], device: h100}\n", 9, 29,
               "parallel.stage_devices[0].device", "unknown device preset 'h100'");
  expect_error(kHead + "  stage_devices:\n    - {stages: [0], device: {preset: h100-80gb, memroy: 1GiB}}\n",
               9, 49, "parallel.stage_devices[0].device.memroy", "unknown key 'memroy'");
}

TEST_CASE("a stage_devices entry needs stages and a device") {
  expect_error(kHead + "  stage_devices:\n    - {device: h100-80gb}\n", 9, 7,
               "parallel.stage_devices[0].stages", "missing required key 'stages'");
  expect_error(kHead + "  stage_devices:\n    - {stages: [0]}\n", 9, 7,
               "parallel.stage_devices[0].device", "missing required key 'device'");
  expect_error(kHead + "  stage_devices:\n    - {stages: [], device: h100-80gb}\n", 9, 16,
               "parallel.stage_devices[0].stages", "non-empty list");
  expect_error(kHead + "  stage_devices:\n    - {stages: [0], device: h100-80gb, stage: 1}\n", 9, 40,
               "parallel.stage_devices[0].stage", "unknown key 'stage'");
  expect_error(kHead + "  stage_devices: h100-80gb\n", 8, 18, "parallel.stage_devices", "expected a list");
}

TEST_CASE("allreduce chooses auto (NCCL's choice), ring or tree") {
  TempDir dir;
  CHECK_FALSE(load_text(dir, kHead).parallel.allreduce.has_value());
  CHECK_FALSE(load_text(dir, kHead + "  allreduce: auto\n").parallel.allreduce.has_value());
  CHECK(load_text(dir, kHead + "  allreduce: tree\n").parallel.allreduce == cost::CollectiveAlgo::tree);
  CHECK(load_text(dir, kHead, {"parallel.allreduce=ring"}).parallel.allreduce == cost::CollectiveAlgo::ring);
  expect_error(kHead + "  allreduce: butterfly\n", 8, 14, "parallel.allreduce", "tree");
}

TEST_CASE("bucket_buffers chooses transient, in_place or persistent") {
  TempDir dir;
  CHECK(load_text(dir, kHead).parallel.bucket_buffers == scenario::BucketBuffers::transient);
  CHECK(load_text(dir, kHead + "  bucket_buffers: in_place\n").parallel.bucket_buffers ==
        scenario::BucketBuffers::in_place);
  CHECK(load_text(dir, kHead, {"parallel.bucket_buffers=in_place"}).parallel.bucket_buffers ==
        scenario::BucketBuffers::in_place);
  CHECK(load_text(dir, kHead + "  bucket_buffers: persistent\n").parallel.bucket_buffers ==
        scenario::BucketBuffers::persistent);
  expect_error(kHead + "  bucket_buffers: view\n", 8, 19, "parallel.bucket_buffers", "persistent");
}

TEST_CASE("NVSwitch link presets carry their NVLink generation's per-GPU figures") {
  TempDir dir;
  const Scenario s = load_text(dir, kHead + "cluster: {intra_node: nvswitch-h100, inter_node: ib-ndr}\n");
  CHECK(s.cluster.intra_node.name == "nvswitch-h100");
  CHECK(s.cluster.intra_node.bandwidth == hw::find_link("nvlink4")->bandwidth);
  CHECK(s.cluster.intra_node.latency == hw::find_link("nvlink4")->latency);
  const auto a = hw::find_link("NVSwitch-A100");
  REQUIRE(a.has_value());
  CHECK(a->bandwidth == hw::find_link("nvlink3")->bandwidth);
  CHECK(a->latency == hw::find_link("nvlink3")->latency);
  CHECK_FALSE(a->source.empty());
}
