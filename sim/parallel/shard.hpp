#pragma once
// What one device holds and does for one layer under tensor parallelism (and sequence
// parallelism), per micro-batch sample. Pure arithmetic on models::Layer.
#include <cstdint>
#include <vector>

#include "models/model.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::parallel {

struct LayerShard {
  std::int64_t params = 0;        // parameters on this device (before ZeRO-3)
  std::int64_t gemm_params = 0;   // of the weights its GEMMs read, those on this device
  core::Bytes saved{};            // saved for backward, per sample
  core::Bytes saved_core{};       // of which selective recomputation drops, per sample
  core::Bytes output{};           // output, per sample, as held on this device
  core::Bytes full_output{};      // bytes of one tensor-parallel all-reduce, per sample
  core::Bytes io{};               // activation bytes moved by the forward kernels, per sample
  double flops = 0;               // forward FLOPs per sample on this device
  double core_flops = 0;          // of which the attention core
  double backward_factor = 2;
  bool matmul = false;
  models::LayerKind kind = models::LayerKind::generic;
  int allreduce_forward = 0, allreduce_backward = 0;
};

// Shards every layer of `m` (indexed like m.order) for tensor degree t.
//   params: params_split / t + replicated
//   saved:  saved_split / t + replicated (/ t too with sequence parallelism)
//   flops:  split layers' FLOPs / t; replicated element-wise layers only / t with SP
std::vector<LayerShard> shard_layers(const models::Model& m, std::int64_t t, bool sequence_parallel);

}  // namespace trainsim::parallel
