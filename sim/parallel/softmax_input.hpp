#pragma once
// training.softmax_saves_input: what PyTorch's softmax kept for backward before 1.11 (the input
// beside the output) added to each standard attention layer's saved bytes.
#include <vector>

#include "sim/parallel/shard.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::parallel {

// The softmax input one attention layer keeps per sample, before tensor sharding: bytes x a x
// s^2 with the softmax's input in fp32 under fp32 and autocast, else the activation dtype; 0 for
// a layer that is not a standard (unfused, non-flash) attention.
core::Bytes softmax_input_bytes(const models::Layer& l, const scenario::TrainingSpec& t);

// Adds it to each attention shard's saved bytes (heads split over the t tensor ranks) and to
// the attention core that selective recomputation drops.
void apply_softmax_input(const scenario::Scenario& s, std::int64_t t, std::vector<LayerShard>& shards);

}  // namespace trainsim::parallel
