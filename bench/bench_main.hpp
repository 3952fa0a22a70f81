#pragma once
// The benchmarks' main(): keeps freed memory for reuse, as the trainsim command does, so each
// iteration measures the engine rather than the kernel's page faults.
#include <benchmark/benchmark.h>

#include "sim/core/memory_tuning.hpp"

#define TRAINSIM_BENCHMARK_MAIN()                          \
  int main(int argc, char** argv) {                        \
    trainsim::core::keep_freed_memory_for_reuse();         \
    benchmark::Initialize(&argc, argv);                    \
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) \
      return 1;                                            \
    benchmark::RunSpecifiedBenchmarks();                   \
    benchmark::Shutdown();                                 \
    return 0;                                              \
  }
