// Good scenarios: what each form of input turns into, defaults, --set, batch arithmetic and
// bytes of model state per parameter.
#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>
#include <sstream>
#include <string>

#include <yaml-cpp/yaml.h>

#include "models/presets.hpp"
#include "scenario_files.hpp"

using namespace trainsim;
using namespace trainsim::scenario;
using trainsim::test::load_text;
using trainsim::test::TempDir;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;

const std::string kBase =
    "model: gpt2\n"
    "device: a100-80gb\n"
    "training:\n"
    "  micro_batch: 2\n"
    "  seq_len: 1024\n";

// GPT-2 small with `n` blocks: 124,439,808 parameters at 12 blocks, each block
// 12h^2 + 13h = 7,087,872 at h = 768.
std::int64_t gpt2_params(std::int64_t n) { return 124'439'808 + (n - 12) * 7'087'872; }

}  // namespace

TEST_CASE("every file under scenarios/ loads") {
  int count = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kRoot + "/scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    // scenarios/sweeps/ holds sweep files (a base scenario plus axes); tests/sweep runs them.
    if (entry.path().parent_path().filename() == "sweeps") continue;
    INFO(entry.path().string());
    CHECK_NOTHROW(load_scenario(entry.path().string()));
    ++count;
  }
  CHECK(count >= 14);
}

TEST_CASE("the quickstart scenario reads as written") {
  const Scenario s = load_scenario(kRoot + "/scenarios/quickstart.yaml");
  CHECK(s.name == "gpt2 on one V100");
  CHECK(s.file == kRoot + "/scenarios/quickstart.yaml");
  CHECK(s.model.name == "gpt2");
  CHECK(s.model.parameters() == 124'439'808);
  CHECK(s.model.seq_len == 1024);
  CHECK(s.device.name == "v100-16gb");
  CHECK(s.training.micro_batch == 8);
  CHECK(s.training.gradient_accumulation == 1);
  CHECK(s.training.global_batch == 8);
  CHECK(s.training.seq_len == 1024);
  CHECK(s.training.precision == Precision::fp16);
  CHECK(s.training.optimizer == Optimizer::adamw);
  CHECK(s.training.recompute == Recompute::none);
  CHECK(s.parallel.devices() == 1);
}

TEST_CASE("defaults of a minimal scenario are the documented ones") {
  TempDir dir;
  const Scenario s = load_text(dir, kBase, {}, "minimal-run.yaml");
  CHECK(s.name == "minimal-run");  // the file's stem
  const TrainingSpec& t = s.training;
  CHECK(t.gradient_accumulation == 1);
  CHECK(t.global_batch == 2);
  CHECK(t.precision == Precision::bf16);
  CHECK(t.optimizer == Optimizer::adamw);
  CHECK(t.recompute == Recompute::none);
  CHECK(t.recompute_layers == -1);
  CHECK_FALSE(t.flash_attention);
  const ParallelSpec& p = s.parallel;
  CHECK(p.data == 1);
  CHECK(p.tensor == 1);
  CHECK(p.pipeline == 1);
  CHECK(p.zero == 0);
  CHECK(p.schedule == Schedule::one_f_one_b);
  CHECK(p.virtual_stages == 1);
  CHECK_FALSE(p.sequence_parallel);
  CHECK(p.bucket_size == core::Bytes{25'000'000});
  CHECK(p.split_points.empty());
  // No cluster: the smallest that holds every device; A100 fabric defaults.
  CHECK(s.cluster.nodes == 1);
  CHECK(s.cluster.gpus_per_node == 1);
  CHECK(s.cluster.intra_node.name == "nvlink3");
  CHECK(s.cluster.inter_node.name == "ib-hdr");
}

TEST_CASE("without a cluster section devices are packed 8 to a node") {
  TempDir dir;
  const Scenario s = load_text(dir, kBase + "parallel: {data: 5, tensor: 4}\n");
  CHECK(s.cluster.gpus_per_node == 8);
  CHECK(s.cluster.nodes == 3);  // 20 devices
}

TEST_CASE("default links follow the device generation") {
  TempDir dir;
  auto links = [&](const std::string& device) {
    const Scenario s = load_text(dir, "model: mlp\ndevice: " + device + "\ntraining: {micro_batch: 1}\n");
    return s.cluster.intra_node.name + " " + s.cluster.inter_node.name;
  };
  CHECK(links("v100-16gb") == "nvlink2 eth-100g");
  CHECK(links("a100-40gb") == "nvlink3 ib-hdr");
  CHECK(links("h100-80gb") == "nvlink4 ib-ndr");
  CHECK(links("h200-141gb") == "nvlink4 ib-ndr");
  CHECK(links("mi300x") == "pcie5 ib-ndr");
  CHECK(links("l4") == "pcie4 eth-100g");
}

TEST_CASE("every model preset loads by name") {
  TempDir dir;
  for (const auto& p : models::presets()) {
    INFO(p.name);
    const Scenario s =
        load_text(dir, "model: " + p.name + "\ndevice: h200-141gb\ntraining: {micro_batch: 1, seq_len: 128}\n");
    CHECK(s.model.name == p.name);
    CHECK(s.model.parameters() > 0);
  }
}

TEST_CASE("an image model needs no seq_len and ignores one given") {
  TempDir dir;
  const Scenario a = load_text(dir, "model: resnet50\ndevice: a100-80gb\ntraining: {micro_batch: 32}\n");
  CHECK_FALSE(a.model.sequence_model);
  CHECK(a.training.seq_len == 0);
  const Scenario b =
      load_text(dir, "model: resnet50\ndevice: a100-80gb\ntraining: {micro_batch: 32, seq_len: 77}\n");
  CHECK(b.training.seq_len == 0);
  CHECK(b.model.parameters() == 25'557'032);
}

TEST_CASE("training and parallel keys are read") {
  TempDir dir;
  const Scenario s = load_text(dir,
                               kBase +
                                   "  precision: fp32\n"
                                   "  optimizer: momentum\n"
                                   "  recompute: selective\n"
                                   "  recompute_layers: 3\n"
                                   "  gradient_accumulation: 3\n"
                                   "  attention: flash\n"
                                   "parallel:\n"
                                   "  data: 2\n"
                                   "  tensor: 2\n"
                                   "  pipeline: 3\n"
                                   "  zero: 2\n"
                                   "  schedule: interleaved\n"
                                   "  virtual_stages: 2\n"
                                   "  sequence_parallel: true\n"
                                   "  bucket_size: 50MiB\n"
                                   "  split_points: [10, 20, 30, 40, 50]\n");
  CHECK(s.training.precision == Precision::fp32);
  CHECK(s.training.optimizer == Optimizer::momentum);
  CHECK(s.training.recompute == Recompute::selective);
  CHECK(s.training.recompute_layers == 3);
  CHECK(s.training.flash_attention);
  CHECK(s.parallel.devices() == 12);
  CHECK(s.parallel.zero == 2);
  CHECK(s.parallel.schedule == Schedule::interleaved);
  CHECK(s.parallel.virtual_stages == 2);
  CHECK(s.parallel.sequence_parallel);
  CHECK(s.parallel.bucket_size == core::Bytes{50 * core::kMiB});
  CHECK(s.parallel.split_points == std::vector<std::int64_t>{10, 20, 30, 40, 50});
}

TEST_CASE("the interleaved schedule defaults to 2 virtual stages") {
  TempDir dir;
  const Scenario s = load_text(dir, kBase + "  gradient_accumulation: 2\nparallel: {pipeline: 2, schedule: interleaved}\n");
  CHECK(s.parallel.virtual_stages == 2);
}

TEST_CASE("a device preset's fields can be overridden") {
  TempDir dir;
  const Scenario s = load_text(dir,
                               "model: gpt2\n"
                               "device: {preset: a100-80gb, memory: 40GiB, reserved: 2GiB, "
                               "kernel_launch: 5us, memory_bandwidth: 1.5TB/s}\n"
                               "training: {micro_batch: 2, seq_len: 1024}\n");
  const auto preset = *hw::find_device("a100-80gb");
  CHECK(s.device.name == "a100-80gb");
  CHECK(s.device.memory == core::Bytes{40 * core::kGiB});
  CHECK(s.device.reserved == core::Bytes{2 * core::kGiB});
  CHECK(s.device.kernel_launch == core::Duration{5000});
  CHECK(s.device.memory_bandwidth.bytes_per_s == Approx(1.5e12));
  CHECK(s.device.peak_16bit.per_s == Approx(preset.peak_16bit.per_s));
  CHECK(s.device.peak_fp32.per_s == Approx(preset.peak_fp32.per_s));
  CHECK(s.device.matmul_efficiency == preset.matmul_efficiency);
}

TEST_CASE("a custom device needs memory peak_flops and memory_bandwidth") {
  TempDir dir;
  const Scenario s = load_text(dir,
                               "model: gpt2\n"
                               "device:\n"
                               "  name: my-gpu\n"
                               "  memory: 24GiB\n"
                               "  peak_flops: 100TFLOPS\n"
                               "  memory_bandwidth: 1TB/s\n"
                               "  matmul_efficiency: 0.6\n"
                               "training: {micro_batch: 2, seq_len: 1024}\n");
  CHECK(s.device.name == "my-gpu");
  CHECK(s.device.memory == core::Bytes{24 * core::kGiB});
  CHECK(s.device.peak_16bit.per_s == Approx(100e12));
  CHECK(s.device.peak_fp32.per_s == Approx(100e12));  // defaults to peak_flops
  CHECK(s.device.peak_tf32.per_s == 0);
  CHECK(s.device.memory_bandwidth.bytes_per_s == Approx(1e12));
  CHECK(s.device.reserved == core::Bytes{0});
  CHECK(s.device.kernel_launch == core::Duration{4000});
  CHECK(s.device.matmul_efficiency == Approx(0.6));
  CHECK(s.device.memory_efficiency == Approx(0.8));
  // An unnamed custom device is called "custom"; it gets the generic PCIe/Ethernet fabric.
  const Scenario u = load_text(dir,
                               "model: gpt2\n"
                               "device: {memory: 24GiB, peak_flops: 1PFLOPS, memory_bandwidth: 8Tb/s}\n"
                               "training: {micro_batch: 2, seq_len: 1024}\n");
  CHECK(u.device.name == "custom");
  CHECK(u.device.peak_16bit.per_s == Approx(1e15));
  CHECK(u.device.memory_bandwidth.bytes_per_s == Approx(1e12));
  CHECK(u.cluster.intra_node.name == "pcie4");
}

TEST_CASE("cluster links take presets or a preset with overrides") {
  TempDir dir;
  const Scenario s = load_text(dir,
                               kBase +
                                   "parallel: {data: 16}\n"
                                   "cluster:\n"
                                   "  nodes: 2\n"
                                   "  gpus_per_node: 8\n"
                                   "  intra_node: nvlink4\n"
                                   "  inter_node: {preset: ib-ndr, bandwidth: 100GB/s, latency: 5us}\n");
  CHECK(s.cluster.nodes == 2);
  CHECK(s.cluster.gpus_per_node == 8);
  CHECK(s.cluster.intra_node.name == "nvlink4");
  CHECK(s.cluster.intra_node.bandwidth == hw::find_link("nvlink4")->bandwidth);
  CHECK(s.cluster.inter_node.name == "ib-ndr");
  CHECK(s.cluster.inter_node.bandwidth.bytes_per_s == Approx(100e9));
  CHECK(s.cluster.inter_node.latency == core::Duration{5000});
}

TEST_CASE("cluster pods: pod_nodes and an oversubscription written as a ratio or as papers write it") {
  TempDir dir;
  const Scenario none = load_text(dir, kBase + "parallel: {data: 16}\ncluster: {nodes: 2, gpus_per_node: 8}\n");
  CHECK(none.cluster.pod_nodes == 0);
  CHECK(none.cluster.oversubscription == 1);
  const Scenario a = load_text(
      dir, kBase + "parallel: {data: 16}\ncluster: {nodes: 2, gpus_per_node: 8, pod_nodes: 1, oversubscription: 7}\n");
  CHECK(a.cluster.pod_nodes == 1);
  CHECK(a.cluster.oversubscription == 7);
  const Scenario b = load_text(
      dir, kBase + "parallel: {data: 16}\ncluster: {nodes: 2, gpus_per_node: 8, pod_nodes: 1, oversubscription: '1:7'}\n");
  CHECK(b.cluster.oversubscription == 7);
}

TEST_CASE("cluster.collective_sms: none by default, a count of SMs when given") {
  TempDir dir;
  const Scenario none = load_text(dir, kBase + "parallel: {data: 8}\ncluster: {nodes: 1, gpus_per_node: 8}\n");
  CHECK(none.cluster.collective_sms == 0);
  const Scenario s = load_text(
      dir, kBase + "parallel: {data: 8}\ncluster: {nodes: 1, gpus_per_node: 8, collective_sms: 24}\n");
  CHECK(s.cluster.collective_sms == 24);
}

TEST_CASE("parallel.fsdp.unshard: copy for fully_shard, view with a flat parameter or when given") {
  TempDir dir;
  const Scenario plain = load_text(dir, kBase + "parallel: {data: 2, fsdp: true}\n");
  CHECK(plain.parallel.fsdp.unshard_copy);
  const Scenario flat = load_text(dir, kBase + "parallel: {data: 2, fsdp: {flat_parameter: true}}\n");
  CHECK_FALSE(flat.parallel.fsdp.unshard_copy);
  const Scenario view = load_text(dir, kBase + "parallel: {data: 2, fsdp: {unshard: view}}\n");
  CHECK_FALSE(view.parallel.fsdp.unshard_copy);
}

TEST_CASE("a cluster section without sizes packs devices like no section") {
  TempDir dir;
  const Scenario s = load_text(dir, kBase + "parallel: {data: 4}\ncluster: {intra_node: nvlink4}\n");
  CHECK(s.cluster.gpus_per_node == 4);
  CHECK(s.cluster.nodes == 1);
  const Scenario t = load_text(dir, kBase + "parallel: {data: 16}\ncluster: {gpus_per_node: 4}\n");
  CHECK(t.cluster.nodes == 4);
}

TEST_CASE("a model preset with shape overrides") {
  TempDir dir;
  const Scenario s = load_text(dir,
                               "model: {preset: gpt2, layers: 24, name: deep-gpt2}\n"
                               "device: a100-80gb\n"
                               "training: {micro_batch: 2, seq_len: 512}\n");
  CHECK(s.model.name == "deep-gpt2");
  CHECK(s.model.num_blocks == 24);
  CHECK(s.model.parameters() == gpt2_params(24));
  CHECK(s.model.seq_len == 512);
}

// MPT's benchmark configurations are GPT-3's shape with every dropout probability 0: the
// override removes the three kinds of masks and nothing else. With flash attention the kernel
// keeps no attention-probability mask, so per sample of s tokens the difference is the
// embedding's s x h mask and, per block, the attention output's and the MLP output's (1 byte
// each): (2 x 12 + 1) x 512 x 768 bytes for GPT-2 small.
TEST_CASE("a transformer preset's dropout override removes the dropout masks") {
  TempDir dir;
  const std::string training = "device: a100-80gb\ntraining: {micro_batch: 2, seq_len: 512, attention: flash}\n";
  const Scenario with = load_text(dir, "model: {preset: gpt2}\n" + training);
  const Scenario without = load_text(dir, "model: {preset: gpt2, dropout: false}\n" + training);
  CHECK(without.model.parameters() == with.model.parameters());
  CHECK((models::saved_per_sample(with.model) - models::saved_per_sample(without.model)).value ==
        (2 * 12 + 1) * 512 * 768);
  CHECK_THROWS_WITH(load_text(dir, "model: {preset: gpt2, dropout: 0.1}\n" + training),
                    Catch::Contains("dropout"));
}

TEST_CASE("a model file is read relative to the scenario") {
  TempDir dir;
  std::filesystem::create_directory(dir.path() / "models");
  dir.write("models/tiny.yaml",
            "name: tiny\nsequence_model: false\nlayers:\n"
            "  - {name: fc0, kind: linear, in: 4, out: 4}\n"
            "  - {name: loss, kind: loss, vocab: 4, head: none}\n");
  const Scenario s =
      load_text(dir, "model: {file: models/tiny.yaml}\ndevice: a100-80gb\ntraining: {micro_batch: 2}\n");
  CHECK(s.model.name == "tiny");
  CHECK(s.model.parameters() == 4 * 4 + 4);
}

// --- --set ---------------------------------------------------------------------------------

TEST_CASE("a --set replaces a value in the file") {
  TempDir dir;
  const Scenario s = load_text(dir, kBase, {"training.micro_batch=4", "training.optimizer=sgd"});
  CHECK(s.training.micro_batch == 4);
  CHECK(s.training.optimizer == Optimizer::sgd);
}

TEST_CASE("a --set on a preset model turns it into a preset with overrides") {
  TempDir dir;
  const Scenario s = load_text(dir, kBase, {"model.layers=36"});
  CHECK(s.model.num_blocks == 36);
  CHECK(s.model.parameters() == gpt2_params(36));
  // The same as writing {preset: gpt2, layers: 36}.
  const Scenario w = load_text(dir,
                               "model: {preset: gpt2, layers: 36}\ndevice: a100-80gb\n"
                               "training: {micro_batch: 2, seq_len: 1024}\n");
  CHECK(w.model.parameters() == s.model.parameters());
}

TEST_CASE("a --set on a preset device turns it into a preset with overrides") {
  TempDir dir;
  const Scenario s = load_text(dir, kBase, {"device.memory=40GiB"});
  CHECK(s.device.name == "a100-80gb");
  CHECK(s.device.memory == core::Bytes{40 * core::kGiB});
}

TEST_CASE("a --set inside `fsdp: true` adds to the empty mapping it stands for") {
  TempDir dir;
  const std::string text = kBase + "parallel: {data: 8, fsdp: true}\n";
  const Scenario s = load_text(dir, text, {"parallel.fsdp.shard_size=4"});
  CHECK(s.parallel.fsdp.enabled);
  CHECK(s.parallel.fsdp.shard_size == 4);
  CHECK(s.parallel.fsdp.reduce_dtype == Precision::fp32);  // every other key at its default
  // Through a `false` there is nothing to add to: the override is refused where it is written.
  const auto f = test::load_error(dir, kBase + "parallel: {data: 8, fsdp: false}\n",
                                  {"parallel.fsdp.shard_size=4"});
  REQUIRE(f.error.has_value());
  CHECK(f.error->where().file == "--set parallel.fsdp.shard_size=4");
  CHECK_THAT(f.error->detail(), Catch::Contains("'fsdp' is false, not a mapping"));
}

TEST_CASE("a --set creates a missing section") {
  TempDir dir;
  const Scenario s = load_text(dir, kBase, {"parallel.data=4", "cluster.inter_node.latency=7us"});
  CHECK(s.parallel.data == 4);
  CHECK(s.training.global_batch == 8);
  CHECK(s.cluster.inter_node.latency == core::Duration{7000});
  // A link mapping without a preset starts from the default link (ib-hdr for an A100).
  CHECK(s.cluster.inter_node.name == "custom");
  CHECK(s.cluster.inter_node.bandwidth == hw::find_link("ib-hdr")->bandwidth);
}

TEST_CASE("a --set replaces a whole value and the last one wins") {
  TempDir dir;
  const Scenario s =
      load_text(dir, kBase, {"device=h100-80gb", "training.seq_len=256", "training.seq_len=512"});
  CHECK(s.device.name == "h100-80gb");
  CHECK(s.training.seq_len == 512);
}

TEST_CASE("a --set may supply a key the file lacks") {
  TempDir dir;
  const Scenario s = load_text(dir, "model: gpt2\ndevice: a100-80gb\ntraining: {micro_batch: 2}\n",
                               {"training.seq_len=128"});
  CHECK(s.training.seq_len == 128);
}

// --- batch arithmetic -----------------------------------------------------------------------

TEST_CASE("global_batch sets gradient_accumulation") {
  TempDir dir;
  const Scenario s = load_text(dir, kBase + "  global_batch: 64\nparallel: {data: 4}\n");
  CHECK(s.training.gradient_accumulation == 8);  // 64 / (2 x 4)
  CHECK(s.training.global_batch == 64);
}

TEST_CASE("gradient_accumulation sets global_batch") {
  TempDir dir;
  const Scenario s = load_text(dir, kBase + "  gradient_accumulation: 3\nparallel: {data: 4}\n");
  CHECK(s.training.global_batch == 24);  // 2 x 3 x 4
}

TEST_CASE("global_batch and gradient_accumulation may both be given when they agree") {
  TempDir dir;
  const Scenario s =
      load_text(dir, kBase + "  gradient_accumulation: 4\n  global_batch: 16\nparallel: {data: 2}\n");
  CHECK(s.training.gradient_accumulation == 4);
  CHECK(s.training.global_batch == 16);
}

TEST_CASE("tensor and pipeline parallelism do not change the batch") {
  TempDir dir;
  const Scenario s = load_text(dir, kBase + "  global_batch: 16\nparallel: {tensor: 4, pipeline: 2}\n");
  CHECK(s.training.gradient_accumulation == 8);
}

// --- model state bytes ------------------------------------------------------------------------

TEST_CASE("mixed-precision Adam keeps 2 + 2 + 12 bytes per parameter") {
  for (auto p : {Precision::bf16, Precision::fp16})
    for (auto o : {Optimizer::adam, Optimizer::adamw}) {
      const StateBytes b = state_bytes_per_param(p, o);
      CHECK(b.weights == 2);
      CHECK(b.gradients == 2);
      CHECK(b.optimizer_states == 12);
      CHECK(b.total() == 16);
    }
}

TEST_CASE("fp32 Adam keeps 4 + 4 + 8 bytes per parameter") {
  const StateBytes b = state_bytes_per_param(Precision::fp32, Optimizer::adam);
  CHECK(b.weights == 4);
  CHECK(b.gradients == 4);
  CHECK(b.optimizer_states == 8);
  CHECK(b.total() == 16);
}

TEST_CASE("SGD keeps no optimizer state but mixed precision keeps an fp32 master copy") {
  CHECK(state_bytes_per_param(Precision::fp32, Optimizer::sgd).optimizer_states == 0);
  CHECK(state_bytes_per_param(Precision::fp32, Optimizer::sgd).total() == 8);
  CHECK(state_bytes_per_param(Precision::bf16, Optimizer::sgd).optimizer_states == 4);
  CHECK(state_bytes_per_param(Precision::bf16, Optimizer::sgd).total() == 8);
}

TEST_CASE("momentum keeps one fp32 buffer") {
  CHECK(state_bytes_per_param(Precision::fp32, Optimizer::momentum).total() == 12);
  CHECK(state_bytes_per_param(Precision::fp16, Optimizer::momentum).optimizer_states == 8);
  CHECK(state_bytes_per_param(Precision::fp16, Optimizer::momentum).total() == 12);
}

TEST_CASE("true 16-bit keeps every state in the parameter dtype, no master") {
  // Lightning bf16-true: torch.optim allocates m and v with zeros_like(param), so 2-byte
  // states beside 2-byte weights and gradients: Adam 2 + 2 + (2 + 2) = 8 bytes per parameter.
  for (auto p : {Precision::bf16_true, Precision::fp16_true}) {
    const StateBytes adam = state_bytes_per_param(p, Optimizer::adamw);
    CHECK(adam.weights == 2);
    CHECK(adam.gradients == 2);
    CHECK(adam.optimizer_states == 4);
    CHECK(adam.master == 0);
    CHECK(adam.total() == 8);
    CHECK(state_bytes_per_param(p, Optimizer::momentum).total() == 6);  // 2 + 2 + 2
    CHECK(state_bytes_per_param(p, Optimizer::sgd).total() == 4);       // 2 + 2
  }
}

TEST_CASE("autocast keeps fp32 weights, gradients and states with no separate master") {
  // HF Trainer fp16=True / bf16=True: the model stays fp32, 4 + 4 + 8 = 16 bytes per parameter
  // for AdamW, as fp32 training (the 16-bit weight copies are per-forward activations).
  for (auto p : {Precision::amp_bf16, Precision::amp_fp16}) {
    const StateBytes b = state_bytes_per_param(p, Optimizer::adamw);
    CHECK(b.weights == 4);
    CHECK(b.gradients == 4);
    CHECK(b.optimizer_states == 8);
    CHECK(b.master == 0);
    CHECK(b.total() == 16);
    CHECK(weight_cast_bytes(p) == 2);
    CHECK(autocast(p));
  }
  CHECK(weight_cast_bytes(Precision::bf16) == 0);
  CHECK(weight_cast_bytes(Precision::fp32) == 0);
}

TEST_CASE("fp8 keeps mixed precision's states and casts GEMM weights to one byte") {
  const StateBytes b = state_bytes_per_param(Precision::fp8, Optimizer::adamw);
  CHECK(b.total() == 16);  // 2 + 2 + (4 master + 4 + 4)
  CHECK(b.master == 4);
  CHECK(weight_cast_bytes(Precision::fp8) == 1);
  CHECK(math_mode(Precision::fp8) == cost::MathMode::fp8);
  CHECK(math_mode(Precision::amp_bf16) == cost::MathMode::half);
  CHECK(math_mode(Precision::fp32) == cost::MathMode::fp32);
}

TEST_CASE("Lion keeps one momentum buffer, like momentum SGD") {
  // fp32: 4 + 4 + 4; mixed: 2 + 2 + (4 master + 4); bf16-true: 2 + 2 + 2.
  CHECK(state_bytes_per_param(Precision::fp32, Optimizer::lion).total() == 12);
  CHECK(state_bytes_per_param(Precision::bf16, Optimizer::lion).optimizer_states == 8);
  CHECK(state_bytes_per_param(Precision::bf16_true, Optimizer::lion).total() == 6);
  TempDir dir;
  CHECK(load_text(dir, kBase + "  optimizer: lion\n").training.optimizer == Optimizer::lion);
}

TEST_CASE("every precision is read under its name") {
  TempDir dir;
  CHECK(precision_names().size() == 8);
  for (const std::string& name : precision_names()) {
    if (name == "fp8") continue;  // the base's A100 has no FP8 tensor cores (below)
    const Scenario s = load_text(dir, kBase + "  precision: " + name + "\n");
    CHECK(to_string(s.training.precision) == name);
  }
}

TEST_CASE("fp8 needs a device with FP8 tensor cores") {
  TempDir dir;
  const std::string h100 = std::string(kBase).replace(kBase.find("a100-80gb"), 9, "h100-80gb");
  CHECK(load_text(dir, h100 + "  precision: fp8\n").training.precision == Precision::fp8);
  try {
    load_text(dir, kBase + "  precision: fp8\n");
    FAIL("fp8 on an A100 loaded");
  } catch (const core::ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.find(":6:") != std::string::npos);  // the precision line
    CHECK(what.find("training.precision") != std::string::npos);
    CHECK(what.find("a100-80gb") != std::string::npos);
  }
}

TEST_CASE("enum names match the scenario spelling") {
  CHECK(to_string(Precision::bf16) == "bf16");
  CHECK(to_string(Optimizer::adamw) == "adamw");
  CHECK(to_string(Recompute::selective) == "selective");
  CHECK(to_string(Schedule::one_f_one_b) == "1f1b");
  CHECK(to_string(Schedule::interleaved) == "interleaved");
}

TEST_CASE("offload keys: defaults, values and the host side of the cluster") {
  TempDir dir;
  const Scenario plain = load_text(dir, kBase);
  CHECK(plain.training.offload.optimizer == OffloadTarget::none);
  CHECK(plain.training.offload.parameters == OffloadTarget::none);
  // a100-80gb defaults to a DGX A100 640GB node: 2 TiB DDR4, 409.6 GB/s x 0.75, PCIe 4.
  CHECK(plain.cluster.host_memory.value == 2048 * core::kGiB);
  CHECK(plain.cluster.host_memory_bandwidth.bytes_per_s == Approx(409.6e9 * 0.75));
  CHECK(plain.cluster.pcie.name == "pcie4");
  const Scenario s = load_text(dir, kBase +
                                        "  offload: {optimizer: cpu, parameters: cpu}\n"
                                        "parallel: {zero: 3}\n"
                                        "cluster:\n"
                                        "  host_memory: 512GiB\n"
                                        "  host_memory_bandwidth: 100GB/s\n"
                                        "  pcie: {bandwidth: 20GB/s, latency: 10us}\n");
  CHECK(s.training.offload.optimizer_on_cpu());
  CHECK(s.training.offload.parameters_on_cpu());
  CHECK(s.cluster.host_memory.value == 512 * core::kGiB);
  CHECK(s.cluster.host_memory_bandwidth.bytes_per_s == Approx(100e9));
  CHECK(s.cluster.pcie.bandwidth.bytes_per_s == Approx(20e9));
  CHECK(s.cluster.pcie.latency.ns == 10'000);
  // V100 presets default to a DGX-2 node on PCIe 3.
  const Scenario v = load_text(dir, "model: gpt2\ndevice: v100-32gb\ntraining: {micro_batch: 1, seq_len: 1024}\n");
  CHECK(v.cluster.host_memory.value == 1536 * core::kGiB);
  CHECK(v.cluster.pcie.name == "pcie3");
}

namespace {

// What a scenario holds, field by field, for comparing loads.
std::string describe(const Scenario& s) {
  std::ostringstream o;
  const auto& t = s.training;
  const auto& p = s.parallel;
  const auto& c = s.cluster;
  o << s.name << " | " << s.file << " | " << s.device.name << " " << s.device.memory.value << " "
    << s.device.reserved.value << " | " << t.micro_batch << " " << t.gradient_accumulation << " "
    << t.global_batch << " " << t.seq_len << " " << static_cast<int>(t.precision) << " "
    << static_cast<int>(t.optimizer) << " " << static_cast<int>(t.recompute) << " "
    << t.recompute_layers << " " << t.flash_attention << " " << t.caching_allocator << " "
    << static_cast<int>(t.offload.optimizer) << " | " << p.data << " " << p.tensor << " "
    << p.pipeline << " " << p.zero << " " << static_cast<int>(p.schedule) << " " << p.virtual_stages
    << " " << (p.allreduce ? static_cast<int>(*p.allreduce) : -1) << " " << p.bucket_size.value << " | " << c.nodes << " "
    << c.gpus_per_node << " " << c.intra_node.name << " " << c.inter_node.name << " "
    << c.host_memory.value << " " << c.pcie.name << " | " << s.limits.max_ops << " "
    << s.limits.max_layers << " " << s.limits.ops_key << " " << s.limits.ops_at.file << ":"
    << s.limits.ops_at.line << ":" << s.limits.ops_at.column << " | " << s.model.name << " "
    << s.model.parameters() << " " << s.model.seq_len;
  return o.str();
}

std::string load_or_error(const std::function<Scenario()>& load) {
  try {
    return describe(load());
  } catch (const core::ConfigError& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE(
    "a scenario memo puts points together as the slow way loads them and falls back on errors") {
  TempDir dir;
  const std::string base =
      "name: memo\n"
      "model: {preset: gpt2, name: small, layers: 8, hidden: 512, heads: 8}\n"
      "device: a100-80gb\n"
      "training: {micro_batch: 1, global_batch: 32, seq_len: 512, precision: bf16, optimizer: "
      "adam}\n"
      "parallel: {data: 2, tensor: 2, pipeline: 2}\n"
      "cluster: {nodes: 1, gpus_per_node: 8, intra_node: nvlink3, inter_node: ib-hdr}\n";
  const std::string path = dir.write("memo.yaml", base);
  ScenarioMemo memo;
  ModelCache cache;
  cache.node_text = YAML::Dump(YAML::Load(base)["model"]);
  int fast = 0, failed = 0, checked = 0;
  // Global batch 34 is whole for data 1 x micro-batch 2 and not for data 2: the pipeline-4 points
  // come first, so the pipeline-2 ones meet every section read and still fail their arithmetic.
  for (const char* layout :
       {"parallel.pipeline=4|parallel.data=1", "parallel.pipeline=2|parallel.data=2"})
    for (const char* seq : {"training.seq_len=512", "training.seq_len=1024"})
      for (const char* mb : {"training.micro_batch=1", "training.micro_batch=2"})
        for (const char* gb : {"training.global_batch=32", "training.global_batch=34"})
          for (const char* dev : {"device=a100-80gb", "device=h100-80gb"})
            for (const char* link : {"cluster.inter_node=ib-hdr", "cluster.inter_node=ib-ndr"}) {
              const std::string l = layout;
              const std::vector<std::string> sets{
                  l.substr(0, l.find('|')), l.substr(l.find('|') + 1), seq, mb, gb, dev, link};
              const std::string want = load_or_error([&] { return load_scenario(path, sets); });
              std::optional<Scenario> put = memo.load(path, sets, &cache);
              if (put) ++fast;
              const std::string got = load_or_error([&] {
                Scenario s = put ? std::move(*put)
                                 : load_scenario_tree(YAML::Load(base), path, sets, &cache, &memo);
                Scenario copy = s;
                cache.give_back(std::move(s.model));
                return copy;
              });
              INFO(sets[0] + " " + sets[1] + " " + seq + " " + mb + " " + gb + " " + dev + " " +
                   link);
              CHECK(got == want);
              ++checked;
              if (got.find("not divisible") != std::string::npos) ++failed;
            }
  CHECK(checked == 64);
  CHECK(failed == 8);  // pipeline 2, micro-batch 2, global batch 34
  CHECK(fast >= 40);   // every point whose sections were all read before, the failing ones not
  // Those failing points' sections were all read: put together, they pass with global batch 32
  // and fail (nothing returned, the model handed back) with 34.
  std::vector<std::string> sets{"parallel.pipeline=2",      "parallel.data=2",
                                "training.seq_len=512",     "training.micro_batch=2",
                                "training.global_batch=32", "device=a100-80gb",
                                "cluster.inter_node=ib-hdr"};
  std::optional<Scenario> put = memo.load(path, sets, &cache);
  REQUIRE(put);
  CHECK(describe(*put) == describe(load_scenario(path, sets)));
  cache.give_back(std::move(put->model));
  sets[4] = "training.global_batch=34";
  CHECK_FALSE(memo.load(path, sets, &cache));
  sets[4] = "training.global_batch=32";
  CHECK(memo.load(path, sets, &cache));
  // An override of the model, or of a key no section has, is loaded the slow way.
  CHECK_FALSE(memo.load(path, {"model.layers=4"}, &cache));
  CHECK_FALSE(memo.load(path, {"nonsense.key=1"}, &cache));
  // Overrides seen only together with others are not a section seen alone.
  CHECK_FALSE(memo.load(path, {"training.micro_batch=2"}, &cache));
  // limits.max_layers is kept with its section; a held model above a point's limit is refused
  // at the model, as building it would have been (this gpt2 holds 8 x 6 + 3 = 51 layers).
  sets.push_back("limits.max_layers=51");
  cache.give_back(std::move(load_scenario_tree(YAML::Load(base), path, sets, &cache, &memo).model));
  put = memo.load(path, sets, &cache);
  REQUIRE(put);
  CHECK(put->limits.max_layers == 51);
  cache.give_back(std::move(put->model));
  sets.back() = "limits.max_layers=50";
  CHECK_FALSE(memo.load(path, sets, &cache));
  CHECK_THAT(load_or_error(
                 [&] { return load_scenario_tree(YAML::Load(base), path, sets, &cache, &memo); }),
             Catch::Contains("model: the model holds 51 layers, more than limits.max_layers = 50"));

  // A device read from a file is not kept: the file may change between loads.
  dir.write("dev.yaml", "preset: a100-80gb\nmemory: 40GB\n");
  const std::string file_text =
      "model: gpt2\ndevice: {file: dev.yaml}\ntraining: {micro_batch: 1, seq_len: 512}\n";
  const std::string with_file = dir.write("file.yaml", file_text);
  ScenarioMemo file_memo;
  ModelCache file_cache;
  file_cache.node_text = "gpt2";
  CHECK(load_scenario_tree(YAML::Load(file_text), with_file, {}, &file_cache, &file_memo)
            .device.memory == core::Bytes{40'000'000'000});
  CHECK_FALSE(file_memo.load(with_file, {}, &file_cache));
}
