#pragma once
// One device's memory through the caching-allocator model (hw::CachingAllocator): the model
// states as flat buffers first, then every effect of the step in the player's order, each
// tensor named by its kind, layer and micro-batch. The state it reports is the tensors' bytes by
// category plus `allocator_cache`, what the allocator reserves beyond them, so the total is the
// CUDA context plus the allocator's reserved bytes. The player and the memory series both use it.
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/hw/caching_allocator.hpp"
#include "sim/parallel/program.hpp"

namespace trainsim::exec {

class AllocatorModel {
 public:
  // The context (MemCategory::reserved of the program's persistent states) is off the
  // allocator's capacity. The caller books state_buffers(P) first.
  explicit AllocatorModel(const parallel::Program& P);
  // What the allocator may reserve: the device's memory less the context.
  static core::Bytes capacity(const parallel::Program& P);
  // The persistent model states, each category one flat buffer (as Megatron's and DeepSpeed's
  // contiguous buffers hold them), booked before the step: without what the load keeps and the
  // lazily created optimizer states (Program::lazy_states).
  static std::vector<parallel::MemEffect> state_buffers(const parallel::Program& P);

  // The key naming an effect's tensor when its op is about micro-batch `microbatch`: its kind,
  // its layer counted from the program's first (stages holding equal layers name their tensors
  // alike, so a replay of one stage's log can go on with another's) and the micro-batch.
  std::uint64_t key(const parallel::MemEffect& e, std::int32_t microbatch) const;
  // Names tensors from P's first layer on (a replay resumed for another program).
  void rebase(const parallel::Program& P) { layer_base_ = P.first_layer; }
  // Another context beside the same allocator state (a replay resumed for another device).
  void set_context(core::Bytes context) {
    now_[hw::MemCategory::reserved] = context;
    now_total_ += context - context_;
    context_ = context;
  }
  core::Bytes context() const { return context_; }
  // An effect's layer counted from `first_layer` (its program's first), as keys name it;
  // kNoLayer for an effect about no layer.
  static constexpr std::int32_t kNoLayer = std::numeric_limits<std::int32_t>::min();
  static std::int32_t relative_layer(const parallel::MemEffect& e, std::int32_t first_layer) {
    return e.layer < 0 ? kNoLayer : e.layer - first_layer;
  }

  // Plays P's load (Program::load) after the model states (the memory series; the player books
  // its allocations itself to record a request that does not fit), then end_load().
  void play_load(const parallel::Program& P);
  // The step's peaks begin after the load, with the segments it left cached.
  void end_load() { alloc_.reset_peaks(); }
  // training.optimizer_states: lazy. P's optimizer step, whose first memory effect P.lazy_states
  // are created before (FirstStepStates, first_step_states.hpp); -1 when P creates none lazily.
  // The caller plays P's log once as that first step, creating the states there, then
  // end_load(), then the step it reports.
  static std::int32_t lazy_states_op(const parallel::Program& P);

  hw::CachingAllocator::Result allocate(const parallel::MemEffect& e, std::int32_t microbatch);
  // False when the tensor is not held (a lowering bug the caller reports).
  bool release(const parallel::MemEffect& e, std::int32_t microbatch);

  hw::MemBreakdown state() const;
  core::Bytes total() const { return core::Bytes{context_.value + alloc_.reserved()}; }
  const hw::CachingAllocator& allocator() const { return alloc_; }
  hw::CachingAllocator& allocator() { return alloc_; }
  const hw::MemBreakdown& tensors() const { return now_; }
  // tensors().total(), kept as effects come (asked at every request that meets the peak).
  core::Bytes tensors_total() const { return now_total_; }

 private:
  hw::CachingAllocator alloc_;
  hw::MemBreakdown now_;  // tensors' bytes by category, with the context
  core::Bytes now_total_;
  core::Bytes context_;
  std::int32_t layer_base_ = 0;
};

}  // namespace trainsim::exec
