#pragma once
// A model is a DAG of layers (Boost.Graph) plus what the builders know about its shape.
// Edges point from producer to consumer. `order` is a topological order fixed at build time;
// lowering plays layers in that order and frees an output after its last consumer.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "models/layer.hpp"

namespace trainsim::models {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Layer>;
using Vertex = Graph::vertex_descriptor;

// Most layers a model may hold in all, over every group and block (a scenario's
// `limits.max_layers` raises it). A run costs about 15 us of CPU per layer and `diagnose`
// re-simulates each remedy from the file, so at this size a run takes under 0.5 s of CPU and a
// diagnosis under 1.5 s (docs/robustness.md); real models hold under 2,000 layers.
inline constexpr std::int64_t kDefaultMaxLayers = 25'000;

// What a model needs from the training setup to compute its activation sizes.
struct BuildOptions {
  // Tokens per sample (ignored by image models). The default fits every preset's context
  // (BERT's 512 learned positions), so a preset builds with default options.
  std::int64_t seq_len = 512;
  DType activation_dtype = DType::bf16;
  bool flash_attention = false;  // keep no s x s scores (FlashAttention-style kernel)
  // PyTorch autocast: GEMMs run in activation_dtype, the ops autocast runs in fp32 (softmax,
  // layer_norm, the loss) and the residual stream around them stay fp32 (docs/models.md).
  bool autocast = false;
  // fp8 linears (Transformer Engine, torchao float8): a GEMM keeps its input in fp8.
  bool fp8_gemm_inputs = false;
  // The dtype of the ops autocast leaves in fp32 (norms, embeddings, residual adds).
  DType fp32_ops_dtype() const { return autocast ? DType::fp32 : activation_dtype; }
  // Bytes per element of what a GEMM keeps of its input for backward (0: the activation dtype).
  std::int64_t gemm_input_bytes() const { return fp8_gemm_inputs ? 1 : 0; }
  std::int64_t max_layers = kDefaultMaxLayers;  // refused before building past it
};

struct Model {
  std::string name;
  Graph graph;
  std::vector<Vertex> order;   // topological order of all layers
  bool sequence_model = true;  // tokens/s is meaningful
  std::int64_t seq_len = 0;    // tokens per sample for sequence models
  int num_blocks = 0;          // repeated blocks (transformer layers / residual blocks)
  std::int64_t hidden = 0;     // hidden size where meaningful (0 otherwise)

  std::int64_t parameters() const;  // sum over layers, exact
  double forward_flops_per_sample() const;

  // Boost 1.74's adjacency_list has no move operations (and its swap copies three times), so
  // moving a Model copied its whole graph, several times per scenario load. The graph's two
  // containers are public: moving them moves the graph (a std::list and a std::vector keep
  // their nodes and buffer, so the edge iterators stored in the vertices stay valid).
  Model() = default;
  Model(const Model&) = default;
  Model& operator=(const Model&) = default;
  Model(Model&& o) noexcept { *this = std::move(o); }
  Model& operator=(Model&& o) noexcept {
    if (this == &o) return *this;
    name = std::move(o.name);
    graph.m_edges = std::move(o.graph.m_edges);
    graph.m_vertices = std::move(o.graph.m_vertices);
    o.graph.m_edges.clear();
    o.graph.m_vertices.clear();
    order = std::move(o.order);
    sequence_model = o.sequence_model;
    seq_len = o.seq_len;
    num_blocks = o.num_blocks;
    hidden = o.hidden;
    return *this;
  }
};

// Room for `n` layers: the vertex vector then never regrows (Boost's stored vertices have no
// move constructor, so every regrowth copied each layer with its name and edge lists).
void reserve_layers(Model& m, std::size_t n);
// Adds a layer; returns its vertex. Names must be unique (builders ensure it).
Vertex add_layer(Model& m, Layer layer);
void add_edge(Model& m, Vertex from, Vertex to);
// Computes `order`; throws core::ConfigError naming a layer on the cycle if the graph is cyclic.
// The order is the insertion order wherever that is valid (smallest vertex first among the
// ready ones), so builders' reading order is what lowering plays.
void finalize(Model& m, const std::string& file_for_errors = "");
// The layers of one cycle in edge order (empty when the graph is acyclic).
std::vector<Vertex> find_cycle(const Model& m);
// The vertex of the layer called `name`, if any (linear scan).
std::optional<Vertex> find_layer(const Model& m, std::string_view name);
// Sum of `saved` over all layers: activation bytes kept for backward per sample, no sharding.
core::Bytes saved_per_sample(const Model& m);
// Where a pipeline cut at block boundaries may fall: the index in `order` of each block's first
// layer, then of the first layer after the last block (order.size() when none follows), when
// the blocks run 0, 1, ... in the layer order, each a contiguous run of layers; empty otherwise,
// or without blocks.
std::vector<std::int32_t> block_bounds(const Model& m);

}  // namespace trainsim::models
