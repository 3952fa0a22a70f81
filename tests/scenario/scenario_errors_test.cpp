// Bad scenarios: every one is a ConfigError that names the file, line and column, the key
// path and what was expected. Each case writes its own file, so line/column are exact.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "expect_error.hpp"

using namespace trainsim;
using trainsim::test::expect_error;
using trainsim::test::load_error;
using trainsim::test::TempDir;

namespace {

// A valid scenario (lines 1-5) that cases extend with lines 6 onwards.
const std::string kBase =
    "model: gpt2\n"
    "device: a100-80gb\n"
    "training:\n"
    "  micro_batch: 2\n"
    "  seq_len: 1024\n";

// kBase with line 4 replaced by `  micro_batch: <value>` (the value starts at column 16).
std::string with_micro_batch(const std::string& value) {
  return "model: gpt2\n"
         "device: a100-80gb\n"
         "training:\n"
         "  micro_batch: " + value + "\n"
         "  seq_len: 1024\n";
}

// A device block at lines 2-4 whose line 4 is `  <line4>`.
std::string with_device_line(const std::string& line4) {
  return "model: gpt2\n"
         "device:\n"
         "  preset: a100-80gb\n"
         "  " + line4 + "\n"
         "training: {micro_batch: 2, seq_len: 1024}\n";
}

}  // namespace

TEST_CASE("the valid base scenario used by the error cases loads") {
  TempDir dir;
  CHECK_NOTHROW(test::load_text(dir, kBase));
}

// --- YAML itself ---------------------------------------------------------------------------

TEST_CASE("an unclosed flow mapping is malformed YAML located in the file") {
  expect_error("model: gpt2\nparallel: {data: 2\ndevice: a100-80gb\n",
               {3, 7, "", "malformed YAML"});
}

TEST_CASE("a dedented key inside a mapping is malformed YAML") {
  expect_error("model: gpt2\ntraining:\n    micro_batch: 2\n  seq_len: 1024\n",
               {4, 3, "", "malformed YAML"});
}

TEST_CASE("a top-level list is rejected: a scenario is a mapping") {
  expect_error("- model: gpt2\n- device: a100-80gb\n", {1, 1, "", "expected a mapping"});
}

TEST_CASE("a top-level scalar is rejected: a scenario is a mapping") {
  expect_error("just some words\n", {1, 1, "", "expected a mapping"});
}

TEST_CASE("a missing scenario file names the file") {
  const std::string path = "/nonexistent-trainsim-dir/none.yaml";
  try {
    scenario::load_scenario(path);
    FAIL("no error for a missing file");
  } catch (const core::ConfigError& e) {
    CHECK(e.where().file == path);
    CHECK(e.where().line == 0);
    CHECK_THAT(e.detail(), Catch::Contains("does not exist"));
    CHECK_THAT(std::string(e.what()), Catch::StartsWith(path + ": "));
  }
}

// --- unknown keys ----------------------------------------------------------------------------

TEST_CASE("an unknown top-level key is located at the key and lists the known ones") {
  expect_error(kBase + "optimiser: adam\n", {6, 1, "optimiser", "unknown key 'optimiser'"});
  expect_error(kBase + "optimiser: adam\n", {6, 1, "optimiser", "training"});
}

TEST_CASE("an unknown key inside training is located at the key") {
  expect_error(kBase + "  precison: fp16\n",
               {6, 3, "training.precison",
                "unknown key 'precison' \u2014 did you mean 'precision'?; expected one of:"});
  expect_error(kBase + "  precison: fp16\n", {6, 3, "training.precison", "precision"});
}

TEST_CASE("an unknown key inside parallel is located at the key") {
  expect_error(kBase + "parallel:\n  pipelines: 2\n",
               {7, 3, "parallel.pipelines", "unknown key 'pipelines'"});
}

TEST_CASE("an unknown key inside device is located at the key") {
  expect_error(with_device_line("memroy: 40GiB"), {4, 3, "device.memroy", "unknown key 'memroy'"});
}

TEST_CASE("an unknown key inside cluster is located at the key") {
  expect_error(kBase + "cluster:\n  node: 2\n", {7, 3, "cluster.node", "unknown key 'node'"});
}

TEST_CASE("an unknown key inside a link is located at the key") {
  expect_error(kBase + "cluster:\n  inter_node: {preset: ib-ndr, bandwith: 50GB/s}\n",
               {7, 32, "cluster.inter_node.bandwith", "unknown key 'bandwith'"});
}

// --- missing required keys -------------------------------------------------------------------

TEST_CASE("a missing model is reported at the top-level mapping") {
  expect_error("device: a100-80gb\ntraining:\n  micro_batch: 2\n  seq_len: 1024\n",
               {1, 1, "model", "missing required key 'model'"});
}

TEST_CASE("a missing device is reported at the top-level mapping") {
  expect_error("model: gpt2\ntraining:\n  micro_batch: 2\n  seq_len: 1024\n",
               {1, 1, "device", "missing required key 'device'"});
}

TEST_CASE("a missing training section is reported at the top-level mapping") {
  expect_error("model: gpt2\ndevice: a100-80gb\n", {1, 1, "training", "missing required key 'training'"});
}

TEST_CASE("a missing micro_batch is reported at the training mapping") {
  expect_error("model: gpt2\ndevice: a100-80gb\ntraining:\n  seq_len: 1024\n",
               {4, 3, "training.micro_batch", "missing required key 'micro_batch'"});
}

TEST_CASE("a missing seq_len for a sequence model names the model") {
  expect_error("model: gpt2\ndevice: a100-80gb\ntraining:\n  micro_batch: 2\n",
               {4, 3, "training.seq_len", "missing required key 'seq_len'"});
  expect_error("model: gpt2\ndevice: a100-80gb\ntraining:\n  micro_batch: 2\n",
               {4, 3, "training.seq_len", "'gpt2' is a sequence model"});
}

TEST_CASE("a custom device without peak_flops is reported at the device mapping") {
  expect_error("model: gpt2\ndevice:\n  memory: 24GiB\n  memory_bandwidth: 1TB/s\n"
               "training: {micro_batch: 2, seq_len: 1024}\n",
               {3, 3, "device.peak_flops", "missing required key 'peak_flops'"});
}

// --- wrong types and out-of-range integers --------------------------------------------------

TEST_CASE("a list where an integer belongs is rejected") {
  expect_error(with_micro_batch("[1, 2]"),
               {4, 16, "training.micro_batch", "expected an integer in 1..1000000000, got a list"});
}

TEST_CASE("a word where an integer belongs is rejected") {
  expect_error(with_micro_batch("four"),
               {4, 16, "training.micro_batch", "expected an integer in 1..1000000000, got 'four'"});
}

TEST_CASE("a negative micro_batch is rejected") {
  expect_error(with_micro_batch("-2"),
               {4, 16, "training.micro_batch", "expected an integer in 1..1000000000"});
}

TEST_CASE("a zero micro_batch is rejected") {
  expect_error(with_micro_batch("0"),
               {4, 16, "training.micro_batch", "expected an integer in 1..1000000000"});
}

TEST_CASE("a fractional micro_batch is rejected") {
  expect_error(with_micro_batch("1.5"),
               {4, 16, "training.micro_batch", "expected an integer in 1..1000000000, got '1.5'"});
}

TEST_CASE("an integer beyond 64 bits is rejected") {
  expect_error(with_micro_batch("99999999999999999999"),
               {4, 16, "training.micro_batch", "fits in 64 bits"});
}

TEST_CASE("a batch whose product overflows 64 bits is a located error") {
  // Each count in range, but 1e9 x 1e9 x 2^20 does not fit in a signed 64-bit count.
  expect_error(with_micro_batch("1000000000") + "  gradient_accumulation: 1000000000\n" +
                   "parallel: {data: 1048576}\n",
               {4, 16, "training.micro_batch", "64 bits"});
}

TEST_CASE("a global batch too large to play is refused at the global batch") {
  // 9e18 micro-batches of accumulation: the op count overflows 64 bits and is over any limit.
  expect_error(kBase + "  global_batch: 9000000000000000000\n",
               {6, 17, "training.global_batch", "raise it with limits: {max_ops: N}"});
}

TEST_CASE("a step sure to exceed limits.max_ops is refused at its accumulation") {
  // 600 micro-batches x 4 stages x forward and backward = 4,800 ops at least.
  expect_error(kBase + "  gradient_accumulation: 600\nparallel: {pipeline: 4}\nlimits: {max_ops: 4000}\n",
               {6, 26, "training.gradient_accumulation", "at least 4800 ops"});
}

TEST_CASE("a layout beyond 64 bits of devices is refused at its first degree out of range") {
  expect_error(kBase + "parallel: {data: 4294967296, tensor: 4294967296}\n",
               {6, 18, "parallel.data", "expected an integer in 1..1048576"});
}

TEST_CASE("a mapping where the device belongs must be a preset or a device mapping") {
  expect_error("model: gpt2\ndevice: [a100-80gb]\ntraining: {micro_batch: 2, seq_len: 1024}\n",
               {2, 9, "device", "expected a mapping"});
}

TEST_CASE("a non-boolean sequence_parallel is rejected") {
  expect_error(kBase + "parallel:\n  sequence_parallel: maybe\n",
               {7, 22, "parallel.sequence_parallel", "expected true or false"});
}

TEST_CASE("split_points must be a list") {
  expect_error(kBase + "parallel:\n  split_points: 3\n",
               {7, 17, "parallel.split_points", "expected a list of layer indices"});
}

TEST_CASE("an efficiency above 1 is rejected") {
  expect_error(with_device_line("matmul_efficiency: 1.5"),
               {4, 22, "device.matmul_efficiency", "expected a fraction in (0, 1]"});
}

// --- quantities and units --------------------------------------------------------------------

TEST_CASE("a memory size without a unit is rejected") {
  expect_error(with_device_line("memory: 80"), {4, 11, "device.memory", "missing unit"});
}

TEST_CASE("a memory size with a misspelt unit is rejected") {
  expect_error(with_device_line("memory: 80GiBs"),
               {4, 11, "device.memory", "unknown size unit 'GiBs'"});
}

TEST_CASE("a size unit where a bandwidth belongs is rejected") {
  expect_error(with_device_line("memory_bandwidth: 900GB"),
               {4, 21, "device.memory_bandwidth", "unknown bandwidth unit 'GB'"});
}

TEST_CASE("a kernel launch time without a unit is rejected") {
  expect_error(with_device_line("kernel_launch: 5"), {4, 18, "device.kernel_launch", "missing unit"});
}

TEST_CASE("a size beyond 64 bits is rejected") {
  expect_error(with_device_line("memory: 1e30GB"), {4, 11, "device.memory", "exceeds 8 EiB"});
}

TEST_CASE("a link latency without a unit is rejected") {
  expect_error(kBase + "cluster:\n  inter_node:\n    latency: 5\n",
               {8, 14, "cluster.inter_node.latency", "missing unit"});
}

// --- names and choices -----------------------------------------------------------------------

TEST_CASE("an unknown device preset lists the known ones") {
  expect_error("model: gpt2\ndevice: a100-81gb\ntraining: {micro_batch: 2, seq_len: 1024}\n",
               {2, 9, "device", "unknown device preset 'a100-81gb'; expected one of: "});
  expect_error("model: gpt2\ndevice: a100-81gb\ntraining: {micro_batch: 2, seq_len: 1024}\n",
               {2, 9, "device", "a100-80gb"});
}

TEST_CASE("an unknown device preset inside a device mapping is located at the name") {
  expect_error("model: gpt2\ndevice:\n  preset: h100\ntraining: {micro_batch: 2, seq_len: 1024}\n",
               {3, 11, "device.preset", "unknown device preset 'h100'"});
}

TEST_CASE("an unknown model preset lists the known ones") {
  expect_error("model: gpt5\ndevice: a100-80gb\ntraining: {micro_batch: 2, seq_len: 1024}\n",
               {1, 8, "model", "unknown model preset 'gpt5'; known presets: "});
}

TEST_CASE("an unknown link preset lists the known ones") {
  expect_error(kBase + "cluster:\n  intra_node: nvlink9\n",
               {7, 15, "cluster.intra_node", "unknown link preset 'nvlink9'"});
}

TEST_CASE("an unknown precision lists the choices") {
  expect_error(kBase + "  precision: fp4\n",
               {6, 14, "training.precision",
                "expected one of fp32 | fp16 | bf16 | fp16-true | bf16-true | amp-fp16 | amp-bf16 | fp8, got 'fp4'"});
}

TEST_CASE("fp8 on a device without FP8 tensor cores is refused at the precision") {
  expect_error(kBase + "  precision: fp8\n",
               {6, 14, "training.precision", "fp8 needs FP8 tensor cores, and device 'a100-80gb' has none"});
}

TEST_CASE("an unknown optimizer lists the choices") {
  expect_error(kBase + "  optimizer: lamb\n",
               {6, 14, "training.optimizer", "expected one of sgd | momentum | adam | adamw"});
}

TEST_CASE("an unknown recompute mode lists the choices") {
  expect_error(kBase + "  recompute: some\n",
               {6, 14, "training.recompute", "expected one of none | selective | full | selective-op"});
}

TEST_CASE("an unknown attention kind lists the choices") {
  expect_error(kBase + "  attention: sparse\n",
               {6, 14, "training.attention", "expected one of standard | flash"});
}

TEST_CASE("an unknown schedule lists the choices") {
  expect_error(kBase + "parallel:\n  schedule: zb\n",
               {7, 13, "parallel.schedule", "expected one of gpipe | 1f1b | interleaved"});
}

TEST_CASE("ZeRO stage 4 does not exist") {
  expect_error(kBase + "parallel:\n  zero: 4\n",
               {7, 9, "parallel.zero", "expected an integer in 0..3, got 4"});
}

// --- models ---------------------------------------------------------------------------------

TEST_CASE("a device file that is a directory is named at the file key") {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "dev");
  const auto f = load_error(
      dir, "model: gpt2\ndevice: {file: dev}\ntraining: {micro_batch: 1, seq_len: 128}\n");
  REQUIRE(f.error);
  CHECK(f.error->where().file == f.path);
  CHECK(f.error->where().line == 2);
  CHECK(f.error->where().column == 16);
  CHECK(f.error->key_path() == "device.file");
  CHECK_THAT(f.error->detail(), Catch::Contains("is a directory"));
}

TEST_CASE("a model file that does not exist is reported at the file key") {
  expect_error("model: {file: nowhere.yaml}\ndevice: a100-80gb\ntraining: {micro_batch: 2}\n",
               {1, 15, "model.file", "does not exist"});
  expect_error("model: {file: nowhere.yaml}\ndevice: a100-80gb\ntraining: {micro_batch: 2}\n",
               {1, 15, "model.file", "nowhere.yaml"});
}

TEST_CASE("a model file whose inputs form a cycle is reported in the model file") {
  TempDir dir;
  const std::string model = dir.write(
      "cyc.yaml",
      "name: cyc\n"
      "sequence_model: false\n"
      "layers:\n"
      "  - {name: fc0, kind: linear, in: 8, out: 8}\n"
      "  - {name: fc1, kind: linear, in: 8, out: 8, inputs: [fc2]}\n"
      "  - {name: fc2, kind: linear, in: 8, out: 8, inputs: [fc1]}\n"
      "  - {name: loss, kind: loss, vocab: 8, head: none}\n");
  const auto f = load_error(dir, "model: {file: cyc.yaml}\ndevice: a100-80gb\ntraining: {micro_batch: 2}\n");
  REQUIRE(f.error.has_value());
  const auto& e = *f.error;
  INFO(e.what());
  CHECK(e.where().file == model);
  CHECK(e.where().line == 6);
  CHECK(e.where().column == 54);
  CHECK(e.key_path() == "layers[2].inputs");
  CHECK_THAT(e.detail(), Catch::Contains("must not form a cycle"));
  CHECK_THAT(e.detail(), Catch::Contains("fc2 -> fc1 -> fc2"));
}

namespace {
// An inline layer graph (lines 1-6) whose second layer is `line6`, followed by device and
// training.
std::string inline_model(const std::string& line6) {
  return "model:\n"
         "  name: m\n"
         "  sequence_model: false\n"
         "  layers:\n"
         "    - {name: fc0, kind: linear, in: 8, out: 8}\n"
         "    " + line6 + "\n"
         "    - {name: loss, kind: loss, vocab: 8, head: none}\n"
         "device: a100-80gb\n"
         "training: {micro_batch: 2}\n";
}
}  // namespace

TEST_CASE("an inline model loads when its layers are well formed") {
  TempDir dir;
  const auto s = test::load_text(dir, inline_model("- {name: fc1, kind: linear, in: 8, out: 8}"));
  CHECK(s.model.name == "m");
  CHECK(s.model.parameters() == 2 * (8 * 8 + 8));
}

TEST_CASE("duplicate layer names are located at the second name") {
  expect_error(inline_model("- {name: fc0, kind: linear, in: 8, out: 8}"),
               {6, 14, "model.layers[1].name", "duplicate name 'fc0'"});
}

TEST_CASE("an input naming no layer is located at the name") {
  expect_error(inline_model("- {name: fc1, kind: linear, in: 8, out: 8, inputs: [fc9]}"),
               {6, 57, "model.layers[1].inputs[0]", "unknown input 'fc9'"});
}

// --- cross-key rules ------------------------------------------------------------------------

TEST_CASE("global_batch must be divisible by data x micro_batch") {
  expect_error(kBase + "  global_batch: 6\nparallel: {data: 2}\n",
               {6, 17, "training.global_batch", "is not divisible by data x micro_batch = 4"});
}

TEST_CASE("global_batch must agree with gradient_accumulation") {
  expect_error(kBase + "  gradient_accumulation: 2\n  global_batch: 8\n",
               {7, 17, "training.global_batch",
                "must equal micro_batch x gradient_accumulation x data = 4"});
}

TEST_CASE("virtual_stages above 1 needs the interleaved schedule") {
  expect_error(kBase + "parallel:\n  schedule: 1f1b\n  virtual_stages: 2\n",
               {8, 19, "parallel.virtual_stages", "needs schedule: interleaved"});
  expect_error(kBase + "parallel:\n  virtual_stages: 2\n",
               {7, 19, "parallel.virtual_stages", "needs schedule: interleaved"});
}

TEST_CASE("reserved bytes at or above the memory are located at reserved") {
  expect_error(with_device_line("reserved: 80GiB"),
               {4, 13, "device.reserved", "must be smaller than the memory"});
}

TEST_CASE("memory lowered below the preset's reserved bytes is located at memory") {
  // a100-80gb reserves 768 MiB for the runtime (docs/devices.md).
  expect_error(with_device_line("memory: 512MiB"), {4, 11, "device.memory", "must be smaller than the memory"});
}

// --- --set overrides --------------------------------------------------------------------------

TEST_CASE("a --set without = is a usage error located in the argument") {
  expect_error(kBase, {1, 1, "", "expected key.path=value", "--set training.micro_batch"},
               {"training.micro_batch"});
}

TEST_CASE("a --set with an empty key in its path is rejected") {
  expect_error(kBase, {1, 1, "training..micro_batch", "empty key", "--set training..micro_batch=4"},
               {"training..micro_batch=4"});
}

TEST_CASE("a --set with nothing after = is rejected at the value") {
  expect_error(kBase, {1, 22, "training.micro_batch", "missing value", "--set training.micro_batch="},
               {"training.micro_batch="});
}

TEST_CASE("a --set with a malformed value is rejected") {
  expect_error(kBase, {1, 22, "training.micro_batch", "malformed value", "--set training.micro_batch=[1"},
               {"training.micro_batch=[1"});
}

TEST_CASE("a --set with a bad value is located at the value in the argument") {
  expect_error(kBase,
               {1, 22, "training.micro_batch", "expected an integer in 1..1000000000, got 'abc'",
                "--set training.micro_batch=abc"},
               {"training.micro_batch=abc"});
}

TEST_CASE("a --set with an unknown key is located at the key in the argument") {
  expect_error(kBase, {1, 1, "training.micro_bach", "unknown key 'micro_bach'", "--set training.micro_bach=4"},
               {"training.micro_bach=4"});
}

TEST_CASE("a --set with a missing unit is located at the value") {
  expect_error(kBase, {1, 15, "device.memory", "missing unit", "--set device.memory=80"},
               {"device.memory=80"});
}

TEST_CASE("a --set on a preset model with a bad value is located in the argument") {
  expect_error(kBase, {1, 14, "model.layers", "expected a positive integer", "--set model.layers=abc"},
               {"model.layers=abc"});
}

TEST_CASE("a --set of a key a non-transformer preset does not take is located in the argument") {
  expect_error("model: mlp\ndevice: a100-80gb\ntraining: {micro_batch: 2}\n",
               {1, 1, "model.layers", "unknown key 'layers'", "--set model.layers=3"},
               {"model.layers=3"});
}

TEST_CASE("a --set through a list is rejected") {
  expect_error(kBase + "parallel:\n  split_points: [6]\n",
               {1, 1, "parallel.split_points.x", "is a list", "--set parallel.split_points.x=1"},
               {"parallel.split_points.x=1"});
}

TEST_CASE("a --set on a preset with an unknown name still locates the name in the file") {
  expect_error("model: gpt5\ndevice: a100-81gb\ntraining: {micro_batch: 2, seq_len: 1024}\n",
               {2, 9, "device.preset", "unknown device preset 'a100-81gb'"}, {"device.memory=40GiB"});
  expect_error("model: gpt5\ndevice: a100-80gb\ntraining: {micro_batch: 2, seq_len: 1024}\n",
               {1, 8, "model.preset", "unknown model preset 'gpt5'"}, {"model.layers=36"});
}

TEST_CASE("a --set of a missing required section is still reported at the file") {
  expect_error("model: gpt2\ndevice: a100-80gb\n", {1, 1, "training", "missing required key 'training'"},
               {"parallel.data=2"});
}

TEST_CASE("a valid --set does not hide an error in the file") {
  expect_error(kBase + "  optimizer: lamb\n", {6, 14, "training.optimizer", "expected one of"},
               {"training.micro_batch=4"});
}

// --- offload ------------------------------------------------------------------------------

TEST_CASE("parameter offload without ZeRO-3 is located at the parameters value") {
  expect_error(kBase + "  offload: {optimizer: cpu, parameters: cpu}\n",
               {6, 41, "training.offload.parameters", "parameter offload needs parallel.zero: 3"});
}

TEST_CASE("parameter offload without optimizer offload is located at the parameters value") {
  expect_error(kBase + "  offload: {parameters: cpu}\nparallel: {zero: 3}\n",
               {6, 25, "training.offload.parameters", "needs optimizer offload too"});
}

TEST_CASE("an unknown offload target lists none and cpu") {
  expect_error(kBase + "  offload: {optimizer: gpu}\n",
               {6, 24, "training.offload.optimizer", "expected one of none | cpu, got 'gpu'"});
}

TEST_CASE("an unknown key inside training.offload is located at the key") {
  expect_error(kBase + "  offload: {optimiser: cpu}\n",
               {6, 13, "training.offload.optimiser", "unknown key 'optimiser'"});
}

TEST_CASE("training.offload must be a mapping") {
  expect_error(kBase + "  offload: cpu\n", {6, 12, "training.offload", "expected a mapping"});
}

TEST_CASE("cluster.host_memory needs a unit and a positive size") {
  expect_error(kBase + "cluster:\n  host_memory: 2048\n", {7, 16, "cluster.host_memory", "missing unit"});
  expect_error(kBase + "cluster:\n  host_memory: 0GiB\n",
               {7, 16, "cluster.host_memory", "between 1 MiB and 1 PiB"});
}

TEST_CASE("cluster.host_memory_bandwidth is a bandwidth, cluster.pcie a link") {
  expect_error(kBase + "cluster:\n  host_memory_bandwidth: 100GB\n",
               {7, 26, "cluster.host_memory_bandwidth", "bandwidth"});
  expect_error(kBase + "cluster:\n  pcie: pcie9\n", {7, 9, "cluster.pcie", "unknown link preset 'pcie9'"});
  expect_error(kBase + "cluster:\n  pcie: {bandwidth: 25GB/s, latency: 10}\n",
               {7, 38, "cluster.pcie.latency", "missing unit"});
}

TEST_CASE("cluster.oversubscription is a ratio of at least 1 between pods, cluster.pod_nodes a count") {
  expect_error(kBase + "cluster:\n  oversubscription: 0.5\n",
               {7, 21, "cluster.oversubscription", "ratio from 1 to 1024"});
  expect_error(kBase + "cluster:\n  oversubscription: 7:1\n",
               {7, 21, "cluster.oversubscription", "got '7:1'"});
  expect_error(kBase + "cluster:\n  oversubscription: 7\n",
               {7, 21, "cluster.oversubscription", "set cluster.pod_nodes"});
  expect_error(kBase + "cluster:\n  pod_nodes: 0\n", {7, 14, "cluster.pod_nodes", "an integer in 1.."});
}

TEST_CASE("an offload value given with --set is located in the argument") {
  expect_error(kBase, {1, 29, "training.offload.parameters", "parameter offload needs parallel.zero: 3",
                       "--set training.offload.parameters=cpu"},
               {"training.offload.optimizer=cpu", "training.offload.parameters=cpu"});
}

TEST_CASE("a model whose layers each fit but whose parameters add up beyond 64 bits is a located error") {
  // A fuzzer finding: hidden 1,638,416,384 with Llama 3 8B's 32 layers — every layer's count
  // fits in 64 bits, their sum does not.
  expect_error("model: {preset: llama3-8b, hidden: 1638416384, heads: 128, ffn: 53248}\ndevice: a100-80gb\n"
               "training: {micro_batch: 1, seq_len: 128}\n",
               {1, 8, "model", "parameters add up to more than 64-bit counts"});
}

TEST_CASE("a layer whose own parameters add up beyond 64 bits is a located error") {
  // A fuzzer finding: GPT-3 2.7B's shape with hidden 1,638,416,384 — the attention layer's QKV
  // and projection weights each fit in 64 bits, their sum does not (it wrapped before the sum
  // was checked).
  expect_error("model: {preset: gpt3-2.7b, hidden: 1638416384, heads: 128, ffn: 53248}\ndevice: a100-80gb\n"
               "training: {micro_batch: 1, seq_len: 128}\n",
               {1, 8, "model", "the model's sizes overflow 64-bit counts"});
}

TEST_CASE("microbatch_group_size is Megatron-Core's interleaved group, within its bounds") {
  // Lines 6-10: 8 micro-batches (global 16 / micro 2) over pipeline P, 2 chunks per stage.
  const auto interleaved = [](int pipeline, const std::string& group, const std::string& more = "") {
    return kBase + "  global_batch: 16\nparallel:\n  pipeline: " + std::to_string(pipeline) +
           "\n  schedule: interleaved\n  virtual_stages: 2\n  microbatch_group_size: " + group +
           "\n" + more;
  };
  TempDir dir;
  CHECK_NOTHROW(test::load_text(dir, interleaved(2, "3")));  // groups 3, 3, 2
  CHECK_NOTHROW(test::load_text(dir, interleaved(3, "5")));  // groups 5, 3
  CHECK_NOTHROW(test::load_text(dir, interleaved(2, "0")));  // 0: the default, pipeline
  expect_error(interleaved(2, "1"), {11, 26, "parallel.microbatch_group_size",
                                     "must lie between pipeline (2) and the micro-batches per step (8)"});
  expect_error(interleaved(2, "9"), {11, 26, "parallel.microbatch_group_size", "must lie between"});
  expect_error(interleaved(3, "6"), {11, 26, "parallel.microbatch_group_size",
                                     "leave a last group of 2, fewer than pipeline (3)"});
  expect_error(interleaved(2, "4", "  p2p: sync\n"),
               {12, 8, "parallel.p2p", "microbatch_group_size is Megatron-Core's"});
  expect_error(kBase + "parallel:\n  pipeline: 2\n  microbatch_group_size: 2\n",
               {8, 26, "parallel.microbatch_group_size", "needs schedule: interleaved"});
  // Without the key the interleaved schedule keeps its groups of pipeline micro-batches.
  expect_error(kBase + "  global_batch: 16\nparallel:\n  pipeline: 3\n  schedule: interleaved\n",
               {6, 17, "training.gradient_accumulation", "to be a multiple of pipeline (3)"});
}

TEST_CASE("the pytorch pipeline engine runs PyTorch's rounds and refuses Megatron's knobs") {
  // Lines 6-10: global G / micro 2 micro-batches over pipeline P (GPT-2's 12 blocks in 2P chunks).
  const auto engine = [](int pipeline, int global, const std::string& more = "") {
    return kBase + "  global_batch: " + std::to_string(global) + "\nparallel:\n  pipeline: " +
           std::to_string(pipeline) + "\n  schedule: interleaved\n  pipeline_engine: pytorch\n" + more;
  };
  TempDir dir;
  CHECK_NOTHROW(test::load_text(dir, engine(3, 4)));   // 2 micro-batches: one round of 2
  CHECK_NOTHROW(test::load_text(dir, engine(3, 16)));  // 8: two rounds of 4
  expect_error(engine(3, 14), {6, 17, "training.gradient_accumulation",
                               "runs a schedule's 7 micro-batches in 2 rounds"});
  expect_error(engine(2, 16, "  microbatch_group_size: 4\n"),
               {11, 26, "parallel.microbatch_group_size", "the pytorch pipeline engine runs"});
  expect_error(engine(2, 16, "  p2p: sync\n"),
               {11, 8, "parallel.p2p", "the pytorch pipeline engine exchanges its own way"});
  // Schedules per step: a divisor of the micro-batches (8 here), rounds counted per schedule.
  CHECK_NOTHROW(test::load_text(dir, engine(3, 16, "  microbatches_per_schedule: 4\n")));
  expect_error(engine(3, 16, "  microbatches_per_schedule: 3\n"),
               {11, 30, "parallel.microbatches_per_schedule", "not a whole number of schedules of 3"});
  expect_error(kBase + "  global_batch: 16\nparallel:\n  pipeline: 2\n  microbatches_per_schedule: 4\n",
               {9, 30, "parallel.microbatches_per_schedule", "needs pipeline_engine: pytorch"});
}

TEST_CASE("Megatron-Core's uneven pipeline split is checked as Megatron-Core checks it, located") {
  // GPT-2's 12 blocks; lines 6-7: the parallel mapping.
  const std::string head = kBase + "parallel:\n  pipeline: 4\n";
  TempDir dir;
  CHECK_NOTHROW(test::load_text(dir, head + "  first_stage_blocks: 2\n  last_stage_blocks: 4\n"));
  expect_error(head + "  first_stage_blocks: 4\n",
               {8, 23, "parallel.first_stage_blocks", "the other 3 stages must share the remaining 8"});
  expect_error(head + "  loss_in_split: true\n",
               {8, 18, "parallel.loss_in_split", "(13) must divide over pipeline 4"});
  expect_error(head + "  last_stage_blocks: 3\n  embedding_in_split: true\n",
               {8, 22, "parallel.last_stage_blocks", "does not count the embedding"});
  expect_error(head + "  first_stage_blocks: 4\n  split_points: [5, 10, 15]\n",
               {8, 23, "parallel.first_stage_blocks", "the other 3 stages"});
  expect_error(head + "  first_stage_blocks: 3\n  last_stage_blocks: 3\n  split_points: [5, 10, 15]\n",
               {10, 17, "parallel.split_points", "give either split_points or Megatron-Core's uneven split"});
  expect_error(kBase + "parallel:\n  first_stage_blocks: 3\n",
               {7, 23, "parallel.first_stage_blocks", "it needs pipeline >= 2"});
}
