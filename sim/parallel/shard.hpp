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
  std::int64_t expert_params = 0; // of which routed experts' (expert parallelism; pass_expert)
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
  // Fine-tuning (apply_training): parameters trained, weights held in bytes (frozen ones as
  // stored), the largest quantized linear weight dequantized for each forward and backward, and
  // whether the layer's output has a gradient (false below the lowest trained parameter).
  std::int64_t trainable = 0;
  core::Bytes weight_bytes{};
  core::Bytes dequantized{};
  core::Bytes dequant_traffic{};   // per pass: the NF4 weights dequantized and read (finetune.hpp)
  std::int32_t dequant_launches = 0;
  bool grad_out = true;
};

// Shards every layer of `m` (indexed like m.order) for tensor degree t and expert degree
// `expert` (parallel.expert: a mixture-of-experts layer's routed experts split over the tensor
// ranks, then over the expert ranks; pass_expert.cpp).
//   params: params_split / t + replicated, less the routed experts other expert ranks hold
//   saved:  saved_split / t + replicated (/ t too with sequence parallelism)
//   flops:  split layers' FLOPs / t; replicated element-wise layers only / t with SP
std::vector<LayerShard> shard_layers(const models::Model& m, std::int64_t t, bool sequence_parallel,
                                     std::int64_t expert);

// What each shard trains and holds (scenario::layer_training). Without training.lora every
// parameter is trained. With it, backward stops below the lowest layer holding an adapter: the
// layers under it save nothing and do no backward work and their outputs get no gradient; from
// it on, a frozen matmul layer computes input gradients only (its GEMMs' backward halves: the
// attention core's still computes both operands' gradients), and the adapters add their forward
// GEMMs, twice that in backward, and their saved tensors.
void apply_training(const scenario::Scenario& s, std::int64_t t, std::vector<LayerShard>& shards,
                    bool sp = false);

}  // namespace trainsim::parallel
