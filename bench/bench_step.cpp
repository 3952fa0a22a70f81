// Benchmarks: milliseconds to lower and play one training step of large scenarios, and events
// per second of the engine (ops of the expanded plan). Run: build/bench/trainsim_bench (a benchmark, never a timed test).
#include "bench/bench_main.hpp"

#include <string>

#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"

namespace {

using namespace trainsim;

const std::string kRoot = TRAINSIM_SOURCE_DIR;

void run_scenario(benchmark::State& state, const std::string& file,
                  const std::vector<std::string>& sets, bool compress = false) {
  const auto s = scenario::load_scenario(kRoot + "/" + file, sets);
  std::uint64_t events = 0;
  for (auto _ : state) {
    const auto plan = parallel::lower(s, {.compress = compress});
    const auto tl = exec::play(plan);
    events += tl.events;
    benchmark::DoNotOptimize(tl.step_time);
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events"] = benchmark::Counter(static_cast<double>(events) / static_cast<double>(state.iterations()));
}

void BM_Load(benchmark::State& state) {
  for (auto _ : state) {
    auto s = scenario::load_scenario(kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml");
    benchmark::DoNotOptimize(s.model.order.size());
  }
}

void BM_Gpt3_175B_1024(benchmark::State& state) {
  run_scenario(state, "scenarios/parallel/06_gpt3_175b_megatron.yaml", {});
}

// The same step with repeated pipeline units played as macro ops (what sweeps, plan, fit and
// run without visual outputs use); the report is identical.
void BM_Gpt3_175B_1024_Fast(benchmark::State& state) {
  run_scenario(state, "scenarios/parallel/06_gpt3_175b_megatron.yaml", {}, true);
}

// Fast play without the caching-allocator model (training.allocator: none): what the model costs.
void BM_Gpt3_175B_1024_Fast_NoAllocator(benchmark::State& state) {
  run_scenario(state, "scenarios/parallel/06_gpt3_175b_megatron.yaml", {"training.allocator=none"}, true);
}

// The sweep bench's eight layouts one by one (micro-batch, tensor, pipeline; data fills 1024
// GPUs), fast play with the allocator model: which layouts cost the most.
void BM_Gpt3_175B_1024_Layout(benchmark::State& state) {
  const auto mb = state.range(0), t = state.range(1), p = state.range(2);
  run_scenario(state, "scenarios/parallel/06_gpt3_175b_megatron.yaml",
               {"training.micro_batch=" + std::to_string(mb), "parallel.tensor=" + std::to_string(t),
                "parallel.pipeline=" + std::to_string(p), "parallel.data=" + std::to_string(1024 / (t * p))},
               true);
}

// One layout (tensor 8, pipeline 16, data 8) under each ZeRO stage, fast play with the allocator
// model. ZeRO-2's backward units repeat as macro ops with their reduce-scatters as taps; ZeRO-3's
// gathers gate every compute op, so its units play op by op (docs/performance.md, "Thirteenth pass")
// — the cost that dominates a sweep of distinct layouts over ZeRO stages.
void BM_Gpt3_175B_1024_Zero(benchmark::State& state) {
  run_scenario(state, "scenarios/parallel/06_gpt3_175b_megatron.yaml",
               {"parallel.zero=" + std::to_string(state.range(0)), "parallel.tensor=8",
                "parallel.pipeline=16", "parallel.data=8"},
               true);
}

// Lowering alone of that layout under ZeRO-3 (fast play's compressed plan), its expanded units
// lowered through every pass (0) or copied from the last congruent unit of their kind (1,
// LowerOptions::copy_units; docs/performance.md, "Twenty-second pass"). The plans are equal.
void BM_Gpt3_175B_1024_Zero3_Lower(benchmark::State& state) {
  const auto s = scenario::load_scenario(kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml",
                                         {"parallel.zero=3"});
  std::int64_t ops = 0;
  for (auto _ : state) {
    const auto plan = parallel::lower(s, {.compress = true, .copy_units = state.range(0) == 1});
    ops += plan.held_ops();
    benchmark::DoNotOptimize(plan.units_copied);
  }
  state.counters["ops"] = benchmark::Counter(static_cast<double>(ops) / static_cast<double>(state.iterations()));
}

// 16,384 GPUs: the same model with 128-way data parallelism (global batch 24,576).
void BM_Gpt3_175B_16384(benchmark::State& state) {
  run_scenario(state, "scenarios/parallel/06_gpt3_175b_megatron.yaml",
               {"parallel.data=128", "cluster.nodes=2048", "training.global_batch=24576"});
}

void BM_Llama70B_64(benchmark::State& state) {
  run_scenario(state, "scenarios/parallel/07_llama2_70b_64xh100.yaml", {});
}

void BM_Quickstart(benchmark::State& state) { run_scenario(state, "scenarios/quickstart.yaml", {}); }

// Fast play with contention (cluster.collective_sms): every unit stays expanded, the steady-state
// skip still writes periods down. Arg 0: without, 1: with 24 SMs.
void BM_Gpt3_175B_1024_Fast_Contention(benchmark::State& state) {
  run_scenario(state, "scenarios/parallel/06_gpt3_175b_megatron.yaml",
               {"cluster.collective_sms=" + std::to_string(state.range(0) ? 24 : 0)}, true);
}

}  // namespace

BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gpt3_175B_1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gpt3_175B_1024_Fast)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gpt3_175B_1024_Fast_NoAllocator)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gpt3_175B_1024_Layout)
    ->ArgsProduct({{1, 2}, {4, 8}, {8, 16}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gpt3_175B_1024_Zero)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gpt3_175B_1024_Zero3_Lower)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gpt3_175B_16384)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Llama70B_64)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Quickstart)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Gpt3_175B_1024_Fast_Contention)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);
TRAINSIM_BENCHMARK_MAIN()
