// Sweep throughput: points per second over a GPT-3 175B / 1024-GPU grid (micro-batch x
// tensor x pipeline, with the rest data-parallel), each point a full load, lower, play and
// summary, on 1 and 2 worker threads; the same layouts under GPipe; and a grid of timing and
// global-batch variants of the same layouts with and without the allocator memo a sweep shares
// between its points; and ZeRO-3 points, whose units stay expanded. Run:
// build/bench/trainsim_bench_sweep.
#include "bench/bench_main.hpp"


#include <string>

#include "sim/sweep/runner.hpp"

namespace {

using namespace trainsim;

const std::string kRoot = TRAINSIM_SOURCE_DIR;

// 2 x 2 x 2 = 8 points: micro-batch {1, 2}, tensor {4, 8}, pipeline {8, 16}; the grid is
// walked 8 times per iteration (64 points) so two threads are not left waiting on one point.
// Each walk names its points apart (`name`, which only the report shows), so no point reuses a
// plan a thread kept from the walk before: every point is lowered and costed as a new layout.
// With `allocator` false every point sets training.allocator=none (what the model costs).
std::vector<std::vector<std::string>> grid(bool allocator) {
  std::vector<std::vector<std::string>> g;
  for (int round = 0; round < 8; ++round)
  for (int mb : {1, 2})
    for (int t : {4, 8})
      for (int p : {8, 16})
        g.push_back({"training.micro_batch=" + std::to_string(mb), "parallel.tensor=" + std::to_string(t),
                     "parallel.pipeline=" + std::to_string(p), "parallel.data=" + std::to_string(1024 / (t * p)),
                     "name=walk-" + std::to_string(round)});
  if (!allocator)
    for (auto& point : g) point.push_back("training.allocator=none");
  return g;
}

// Plays `points` of the GPT-3 175B scenario once per iteration on state.range(0) threads — with
// a fresh memo each iteration when `memo` (what `trainsim sweep` shares between points) — and
// reports points per second.
void play_grid(benchmark::State& state, const std::vector<std::vector<std::string>>& points, bool memo = false) {
  const auto base = sweep::BaseScenario::from_file(kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml");
  std::int64_t done = 0;
  for (auto _ : state) {
    exec::AllocatorMemo fresh;
    exec::AllocatorMemo* shared = memo ? &fresh : nullptr;
    sweep::run_in_order<sweep::Status>(
        points.size(), static_cast<int>(state.range(0)),
        [&](std::size_t i) { return sweep::run_point(base, points[i], shared).status; },
        [&](std::size_t, sweep::Status&&) { ++done; });
  }
  state.counters["points/s"] = benchmark::Counter(static_cast<double>(done), benchmark::Counter::kIsRate);
}

void BM_SweepGpt3_175B_1024(benchmark::State& state) { play_grid(state, grid(state.range(1) != 0)); }

// A grid whose points share memory effects: the same 8 layouts x all-reduce {ring, tree} x
// inter-node link {HDR, NDR} x global batch {1536, 3072} = 64 distinct points, walked once per
// iteration with a fresh memo (what `trainsim sweep` shares between points) or none.
std::vector<std::vector<std::string>> timing_grid() {
  std::vector<std::vector<std::string>> g;
  for (int mb : {1, 2})
    for (int t : {4, 8})
      for (int p : {8, 16})
        for (const char* gb : {"1536", "3072"})
          for (const char* ar : {"ring", "tree"})
            for (const char* link : {"ib-hdr", "ib-ndr"})
              g.push_back({"training.micro_batch=" + std::to_string(mb), "parallel.tensor=" + std::to_string(t),
                           "parallel.pipeline=" + std::to_string(p), "parallel.data=" + std::to_string(1024 / (t * p)),
                           std::string("training.global_batch=") + gb, std::string("parallel.allreduce=") + ar,
                           std::string("cluster.inter_node=") + link});
  return g;
}

void BM_SweepGpt3_175B_1024_Shared(benchmark::State& state) {
  play_grid(state, timing_grid(), /*memo=*/state.range(1) != 0);
}

// GPipe: the same 8 layouts with the GPipe schedule at global batch 512 (8-64 micro-batches, all
// of them in flight at once, so most points run out of memory), walked twice per iteration
// (16 points). GPipe has no steady state to skip; its middle stages' replays are shared.
void BM_SweepGpt3_175B_1024_GPipe(benchmark::State& state) {
  auto points = grid(state.range(1) != 0);
  points.resize(16);
  for (auto& point : points) {
    point.push_back("parallel.schedule=gpipe");
    point.push_back("training.global_batch=512");
  }
  play_grid(state, points);
}

// ZeRO-3 (bench/sweeps/gpt3_175b_zero3.yaml in small): GPT-3 175B on two layouts (tensor 8 with
// pipeline 16 or 8) x bucket size {25MB, 200MB} (each its own plan of up to 376,336 ops) x device
// {A100-80GB, H100-80GB, A100-40GB} innermost (patched on the thread's plan): 12 points per
// iteration, named by iteration so no point takes a plan an earlier iteration kept. Every unit
// stays expanded; what a point costs is mostly O(ops), and the pages the plans touch.
void BM_SweepGpt3_175B_1024_Zero3(benchmark::State& state) {
  const auto base = sweep::BaseScenario::from_file(kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml");
  std::int64_t done = 0, iteration = 0;
  for (auto _ : state) {
    std::vector<std::vector<std::string>> points;
    for (int p : {16, 8})
      for (const char* bucket : {"25MB", "200MB"})
        for (const char* device : {"a100-80gb", "h100-80gb", "a100-40gb"})
          points.push_back({"parallel.zero=3", "parallel.pipeline=" + std::to_string(p),
                            "parallel.data=" + std::to_string(128 / p), std::string("parallel.bucket_size=") + bucket,
                            std::string("device=") + device, "name=iteration-" + std::to_string(iteration)});
    ++iteration;
    exec::AllocatorMemo memo;
    sweep::run_in_order<sweep::Status>(
        points.size(), static_cast<int>(state.range(0)),
        [&](std::size_t i) { return sweep::run_point(base, points[i], &memo).status; },
        [&](std::size_t, sweep::Status&&) { ++done; });
  }
  state.counters["points/s"] = benchmark::Counter(static_cast<double>(done), benchmark::Counter::kIsRate);
}

}  // namespace

// Args: threads (1, 2) x a switch (1, 0), timed in milliseconds of wall time.
void threads_by_switch(benchmark::internal::Benchmark* b) {
  b->Args({1, 1})->Args({2, 1})->Args({1, 0})->Args({2, 0})->Unit(benchmark::kMillisecond)->UseRealTime();
}

// The switch: the caching-allocator model (1) or not (0).
BENCHMARK(BM_SweepGpt3_175B_1024)->Apply(threads_by_switch);
BENCHMARK(BM_SweepGpt3_175B_1024_GPipe)->Apply(threads_by_switch);
// The switch: allocator replays shared through a memo (1) or not (0).
BENCHMARK(BM_SweepGpt3_175B_1024_Shared)->Apply(threads_by_switch);
// Threads 1 and 2.
BENCHMARK(BM_SweepGpt3_175B_1024_Zero3)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
TRAINSIM_BENCHMARK_MAIN()
