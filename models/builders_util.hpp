#pragma once
// Internal helpers shared by the builders (builders*.cpp): checks and graph wiring.
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "models/builders.hpp"

namespace trainsim::models::detail {

inline void require_positive(std::int64_t v, const char* what) {
  if (v <= 0)
    throw std::invalid_argument(std::string(what) + " must be a positive integer, got " +
                                std::to_string(v));
}

// Adds `layer` with edges from each of `inputs`; returns its vertex.
inline Vertex add_after(Model& m, Layer layer, std::initializer_list<Vertex> inputs) {
  const Vertex v = add_layer(m, std::move(layer));
  for (Vertex in : inputs) add_edge(m, in, v);
  return v;
}

inline Layer in_block(Layer l, int block) {
  l.block = block;
  return l;
}

// Appends c.layers transformer blocks (wired per c.layout) over `tokens` tokens after `x`;
// returns the last block's output. Used by the language models and by ViT.
Vertex add_blocks(Model& m, Vertex x, const TransformerConfig& c, std::int64_t tokens,
                  const BuildOptions& opts);

}  // namespace trainsim::models::detail
