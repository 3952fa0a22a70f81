#pragma once
// A layer's parameter tensors by shape: each linear's weight (out x in, as nn.Linear stores it,
// `count` copies) and the layer's other tensors (Layer::tensors). What is left of `params`
// after both (a `generic` layer, whose shapes a model file does not give) is one vector.
#include <vector>

#include "models/layer.hpp"

namespace trainsim::models {

std::vector<ParamTensor> param_tensors(const Layer& l);

}  // namespace trainsim::models
