#pragma once
// One layer entry of a model file: the keys of its kind, validated, turned into a Layer via
// kinds.hpp. Internal to models/ (model_yaml.cpp handles names, groups and inputs).
#include <cstdint>

#include "models/layer.hpp"
#include "models/yaml_fields.hpp"

namespace trainsim::models::yamlio {

struct LayerContext {
  std::int64_t tokens = 1;  // per sample: seq_len for sequence models, 1 otherwise
  DType dtype = DType::bf16;
  bool flash = false;
};

// Keys every layer entry may have besides its kind's own.
inline const std::vector<std::string> kCommonLayerKeys{"name", "kind", "inputs"};

// Validates the entry's keys for `kind` and builds the layer (named `name`). Dimension errors
// from kinds.hpp become ConfigErrors located at the entry.
Layer parse_layer(const MapReader& entry, LayerKind kind, std::string name,
                  const LayerContext& ctx);

}  // namespace trainsim::models::yamlio
