#pragma once
// Reading the fine-tuning memory levers of `training` (docs/scenarios.md, "training"):
// loss_chunks, activation_offload, compile, modules, softmax_saves_input and fp8_weight_cache.
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/validate.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// Reads training.loss_chunks, training.activation_offload, training.compile,
// training.modules, training.softmax_saves_input and training.fp8_weight_cache from the
// training mapping `m`.
void read_levers(MapReader& m, TrainingSpec& t);

// The loss's chunks in effect: training.loss_chunks when given, else 0 under the precisions of
// the Megatron-LM recipe (fp16, bf16, fp8: its fused vocabulary-parallel cross-entropy, computed
// in place in the saved fp32 copy) and 1 under the others (PyTorch's cross_entropy, as Hugging
// Face, Lightning and torchtune call it).
std::int64_t effective_loss_chunks(const TrainingSpec& t);

// Refuses, located at training.activation_offload, the layouts its model does not cover:
// pipeline parallelism, ZeRO-3, FSDP and parameter offload; and, located at training.compile,
// compile with Megatron-LM's fused loss (no PyTorch cross-entropy to compile); and, located at
// training.fp8_weight_cache, a cache asked for under a precision other than fp8.
void validate_levers(const YamlContext& ctx, const Scenario& s, const LayoutNodes& nodes);

}  // namespace trainsim::scenario
