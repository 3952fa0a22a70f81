#pragma once
// A layer's parameter tensors by shape: each linear's weight (out x in, as nn.Linear stores it,
// `count` copies) and the layer's other tensors (Layer::tensors). What is left of `params`
// after both (a `generic` layer, whose shapes a model file does not give) is one vector.
#include <vector>

#include "models/layer.hpp"

namespace trainsim::models {

std::vector<ParamTensor> param_tensors(const Layer& l);

// A linear weight's input and output dimensions as one device stores it under Megatron-style
// tensor parallelism over `tensor` ranks: a split weight is divided along its input when it is
// row-parallel (RowParallelLinear), else along its output (ColumnParallelLinear); a weight that
// is not split (LinearWeight::split) is whole on every rank. The one place the sharded shape is
// computed: the load (quantized weights, lazy states), the optimizer states of LoRA adapters,
// LoRA's frozen base and selective recomputation's GEMMs all read it.
struct StoredDims {
  std::int64_t in = 0, out = 0;
};
StoredDims stored_dims(const LinearWeight& w, std::int64_t tensor);

}  // namespace trainsim::models
