#pragma once
// Process-wide allocator settings for programs that simulate many steps in one process
// (sweeps, plans, diagnoses, benchmarks). A large step allocates tens of MiB of ops and
// timelines; glibc would return them to the kernel after each step and page-fault them back in
// for the next, which costs more than the simulation itself. Keeping freed memory in the heap
// makes the second and later simulations run at the engine's own speed. Call once from main().
namespace trainsim::core {

void keep_freed_memory_for_reuse();

}  // namespace trainsim::core
