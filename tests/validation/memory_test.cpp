#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "sim/core/error.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/validation/memory.hpp"

using namespace trainsim;
using validation::MemoryKind;
namespace fs = std::filesystem;

namespace {

// Writes `text` to `name` in a fresh temporary folder of this process; returns its path.
std::string write(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("trainsim-memory-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << text;
  return (dir / name).string();
}

}  // namespace

TEST_CASE("a source's description names the figure it reports", "[validation]") {
  using validation::classify_kind;
  CHECK(classify_kind("nvidia-smi used memory (NVML) at end of training") == MemoryKind::nvidia_smi);
  CHECK(classify_kind("peak memory active (torch active_bytes.all.peak)") == MemoryKind::active);
  CHECK(classify_kind("peak memory reserved, training; GB=1e9") == MemoryKind::reserved);
  CHECK(classify_kind("torch.cuda.max_memory_allocated") == MemoryKind::allocated);
  // A description that lists the figures it does not tell apart names none.
  CHECK(!classify_kind("peak memory (README does not say active/allocated/reserved)"));
  CHECK(!classify_kind("torchtune peak memory (GB=1e9; alloc vs reserved not stated)"));
  CHECK(!classify_kind("monitoring screenshot"));
}

TEST_CASE("compare-memory compares each case with the figure of its kind", "[validation]") {
  // A 1 GiB context on a custom device and no allocator model: the reserved peak is the
  // allocated one (the tensors' bytes) and nvidia-smi adds exactly the context.
  const std::string scenario = write("s.yaml", R"(name: tiny
model: gpt2
device: {preset: a100-80gb, reserved: 1GiB}
training: {micro_batch: 1, seq_len: 128, precision: bf16, optimizer: adamw, allocator: none}
)");
  const auto sim = validation::simulate_memory(scenario);
  CHECK(sim.reserved == sim.allocated);
  CHECK(sim.nvidia_smi.value - sim.reserved.value == std::int64_t{1} << 30);
  CHECK(sim.of(MemoryKind::active) == sim.allocated);

  const std::string measured = write("m.yaml", R"(cases:
  - {id: a, group: g1, measured: {peak_memory_GiB: 1.0, kind: 'peak memory reserved'}}
  - {id: b, group: g2, measured: {peak_memory_GiB: 2.0, kind: 'not stated'}}
  - {id: c, measured: {peak_memory_GiB: null, kind: 'OOM'}}
)");
  const std::string cases = write("c.yaml", R"(cases:
  - {id: a, scenario: s.yaml}
  - {id: b, scenario: s.yaml, kind: nvidia-smi}
)");
  const auto m = validation::read_measured_memory(measured);
  REQUIRE(m.size() == 3);
  CHECK(!m.at("c").gib);
  const auto results = validation::compare_memory(validation::read_memory_cases(cases), m);
  REQUIRE(results.size() == 2);
  CHECK(results[0].kind == MemoryKind::reserved);
  CHECK(results[0].predicted_gib == Approx(core::to_gib(sim.reserved)));
  CHECK(results[1].kind == MemoryKind::nvidia_smi);
  CHECK(results[1].error == Approx((core::to_gib(sim.nvidia_smi) - 2.0) / 2.0));

  // A case whose measurement is null cannot be compared: refused at the case, before simulating.
  const std::string null_case = write("n.yaml", "cases:\n  - {id: c, scenario: s.yaml, kind: reserved}\n");
  CHECK_THROWS_AS(validation::compare_memory(validation::read_memory_cases(null_case), m),
                  core::ConfigError);
}

TEST_CASE("memory subsets average the absolute errors per group and kind", "[validation]") {
  // Errors +10% (group g, reserved) and -20% (group g, allocated): all has MAPE 15%, bias -5%.
  std::vector<validation::MemoryResult> r(2);
  r[0].group = r[1].group = "g";
  r[0].kind = MemoryKind::reserved;
  r[0].error = 0.10;
  r[1].kind = MemoryKind::allocated;
  r[1].error = -0.20;
  const auto s = validation::memory_subsets(r);
  CHECK(s.at("all").mape == Approx(0.15));
  CHECK(s.at("all").bias == Approx(-0.05));
  CHECK(s.at("all").worst == Approx(0.20));
  CHECK(s.at("group=g").n == 2);
  CHECK(s.at("kind=reserved").mape == Approx(0.10));
  CHECK(s.at("kind=allocated").n == 1);
}

TEST_CASE("FSDP with LoRA shards the frozen weights as stored and trains the adapters only",
          "[validation]") {
  // Llama-2-7B (6,738,415,616 parameters) built in bf16 (bf16-true), LoRA r8 on q and v:
  // 32 x 2 x 8 x (4096 + 4096) = 4,194,304 adapter parameters, sharded over 2 ranks in the
  // model's dtype. Per rank: weights (4,194,304 x 2 B adapter shards + 6,738,415,616 x 2 B
  // frozen bf16) / 2 = 6,742,609,920 B; gradients 4,194,304 x 2 / 2 = 4,194,304 B; AdamW states
  // in bf16 4,194,304 x 4 / 2 = 8,388,608 B. Trained like every parameter, the states would be
  // 8 B x 6.74e9 / 2 = 27.0 GB.
  const std::string path = write("fsdp-lora.yaml", R"(name: fsdp lora
model: llama2-7b
device: a100-80gb
cluster: {gpus_per_node: 2}
parallel: {data: 2, fsdp: true}
training:
  micro_batch: 1
  seq_len: 512
  precision: bf16-true
  optimizer: adamw
  lora: {rank: 8, targets: [q_proj, v_proj]}
)");
  const auto plan = parallel::lower(scenario::load_scenario(path));
  const auto& states = plan.programs.at(0).model_states;
  CHECK(states[hw::MemCategory::weights].value == 6'742'609'920);
  CHECK(states[hw::MemCategory::gradients].value == 4'194'304);
  CHECK(states[hw::MemCategory::optimizer_states].value == 8'388'608);
}

TEST_CASE("compare-memory compares a printed throughput as the step time it implies", "[validation]") {
  // One GPU (4 x 128 tokens a step) and eight (data 8: 32 x 128 tokens a step).
  const std::string one = write("t1.yaml", R"(name: one
model: gpt2
device: a100-80gb
training: {micro_batch: 4, seq_len: 128, precision: bf16, optimizer: adamw}
)");
  const std::string eight = write("t8.yaml", R"(name: eight
model: gpt2
device: a100-80gb
training: {micro_batch: 4, seq_len: 128, precision: bf16, optimizer: adamw}
parallel: {data: 8}
cluster: {nodes: 1, gpus_per_node: 8, intra_node: nvlink3}
)");
  const auto s1 = validation::simulate_memory(one);
  const auto s8 = validation::simulate_memory(eight);
  REQUIRE(s1.tokens == 512);
  REQUIRE(s8.tokens == 4096);
  REQUIRE(s8.gpus == 8);
  REQUIRE(s1.step_time_s > 0);

  const std::string measured = write("tm.yaml", R"(cases:
  - {id: one, group: g, measured: {peak_memory_GiB: 1.0, kind: reserved, tokens_per_s: 1000}}
  - {id: per, group: g, measured: {peak_memory_GiB: 1.0, kind: reserved, tokens_per_s: 1000}}
  - {id: tot, group: g, measured: {peak_memory_GiB: 1.0, kind: reserved, samples_per_s: 50}}
  - {id: off, group: g, measured: {peak_memory_GiB: 1.0, kind: reserved, tokens_per_s: 1000}}
  - {id: mem, group: g, measured: {peak_memory_GiB: 1.0, kind: reserved}}
)");
  const auto m = validation::read_measured_memory(measured);
  CHECK(*m.at("tot").samples_per_s == 50);
  CHECK(!m.at("mem").tokens_per_s);
  const std::string cases = write("tc.yaml", R"(cases:
  - {id: one, scenario: t1.yaml}
  - {id: per, scenario: t8.yaml, throughput: per-gpu}
  - {id: tot, scenario: t8.yaml, throughput: total}
  - {id: off, scenario: t8.yaml, throughput: none}
  - {id: mem, scenario: t1.yaml}
)");
  const auto r = validation::compare_memory(validation::read_memory_cases(cases), m);
  REQUIRE(r.size() == 5);
  // One GPU: 512 tokens per step; the step error is measured / predicted - 1.
  REQUIRE(r[0].throughput);
  CHECK(r[0].throughput->unit == "tokens/s");
  CHECK(r[0].throughput->predicted == Approx(512 / s1.step_time_s));
  CHECK(r[0].throughput->step_error == Approx(1000 / (512 / s1.step_time_s) - 1));
  // Per GPU: the step's 4,096 tokens over 8 GPUs; total: the step's 32 samples.
  REQUIRE(r[1].throughput);
  CHECK(r[1].throughput->predicted == Approx(4096.0 / 8 / s8.step_time_s));
  REQUIRE(r[2].throughput);
  CHECK(r[2].throughput->unit == "samples/s");
  CHECK(r[2].throughput->predicted == Approx(32 / s8.step_time_s));
  CHECK(!r[3].throughput);
  CHECK(!r[4].throughput);
  const auto t = validation::throughput_subsets(r);
  CHECK(t.at("time:all").n == 3);
  CHECK(t.at("time:group=g").n == 3);

  // A rate of a run on several GPUs must say whose it is, before anything is simulated.
  const std::string unsaid = write("tu.yaml", "cases:\n  - {id: per, scenario: t8.yaml}\n");
  CHECK_THROWS_AS(validation::compare_memory(validation::read_memory_cases(unsaid), m), core::ConfigError);
  const std::string bad = write("tb.yaml", "cases:\n  - {id: per, scenario: t8.yaml, throughput: both}\n");
  CHECK_THROWS_AS(validation::read_memory_cases(bad), core::ConfigError);
  const std::string negative = write("tn.yaml",
                                     "cases:\n  - {id: x, measured: {peak_memory_GiB: 1, tokens_per_s: -3}}\n");
  CHECK_THROWS_AS(validation::read_measured_memory(negative), core::ConfigError);
}
