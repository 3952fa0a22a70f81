#include "models/model.hpp"

#include <functional>
#include <queue>

#include "sim/core/error.hpp"

namespace trainsim::models {

std::int64_t Model::parameters() const {
  std::int64_t total = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(graph)))
    total = core::checked_add(total, graph[v].params);
  return total;
}

double Model::forward_flops_per_sample() const {
  double total = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(graph))) total += graph[v].flops;
  return total;
}

void reserve_layers(Model& m, std::size_t n) { m.graph.m_vertices.reserve(n); }

Vertex add_layer(Model& m, Layer layer) {
  return boost::add_vertex(std::move(layer), m.graph);
}

void add_edge(Model& m, Vertex from, Vertex to) {
  const auto n = boost::num_vertices(m.graph);
  TRAINSIM_CHECK(from < n && to < n, "add_edge with a vertex not in the model");
  boost::add_edge(from, to, m.graph);
}

std::optional<Vertex> find_layer(const Model& m, std::string_view name) {
  for (auto v : boost::make_iterator_range(boost::vertices(m.graph)))
    if (m.graph[v].name == name) return v;
  return std::nullopt;
}

core::Bytes saved_per_sample(const Model& m) {
  core::Bytes total{};
  for (auto v : boost::make_iterator_range(boost::vertices(m.graph))) total += m.graph[v].saved;
  return total;
}

std::vector<std::int32_t> block_bounds(const Model& m) {
  std::vector<std::int32_t> bound;
  const auto n = static_cast<std::int32_t>(m.order.size());
  const auto block = [&](std::int32_t i) { return m.graph[m.order[static_cast<std::size_t>(i)]].block; };
  for (std::int32_t i = 0; i < n; ++i) {
    const int b = block(i);
    if (b < 0 || b + 1 == static_cast<int>(bound.size())) continue;  // not a block, or the same one
    if (b != static_cast<int>(bound.size())) return {};                // out of order, or resumed
    bound.push_back(i);
  }
  if (m.num_blocks == 0 || static_cast<int>(bound.size()) != m.num_blocks) return {};
  std::int32_t after = n;
  for (std::int32_t i = n - 1; i >= 0 && block(i) != m.num_blocks - 1; --i) after = i;
  bound.push_back(after);
  return bound;
}

namespace {

// Kahn's algorithm with the smallest ready vertex first. Unlike a DFS-based
// boost::topological_sort it returns the insertion order whenever that order is valid, so a
// ResNet's main path stays before its downsample branch and stage partitions read naturally.
// Returns the vertices it could order; fewer than all means a cycle.
std::vector<Vertex> kahn_order(const Graph& g) {
  const auto n = boost::num_vertices(g);
  std::vector<std::size_t> indegree(n, 0);
  for (auto v : boost::make_iterator_range(boost::vertices(g)))
    indegree[v] = boost::in_degree(v, g);
  std::priority_queue<Vertex, std::vector<Vertex>, std::greater<>> ready;
  for (Vertex v = 0; v < n; ++v)
    if (indegree[v] == 0) ready.push(v);
  std::vector<Vertex> order;
  order.reserve(n);
  while (!ready.empty()) {
    const Vertex v = ready.top();
    ready.pop();
    order.push_back(v);
    for (auto e : boost::make_iterator_range(boost::out_edges(v, g))) {
      const Vertex w = boost::target(e, g);
      if (--indegree[w] == 0) ready.push(w);
    }
  }
  return order;
}

}  // namespace

std::vector<Vertex> find_cycle(const Model& m) {
  const Graph& g = m.graph;
  const auto n = boost::num_vertices(g);
  const auto ordered = kahn_order(g);
  if (ordered.size() == n) return {};
  // Every vertex Kahn could not order has a predecessor it could not order either; walking
  // predecessors n steps from any of them must end on a cycle.
  std::vector<bool> done(n, false);
  for (auto v : ordered) done[v] = true;
  Vertex start = 0;
  while (done[start]) ++start;
  auto unordered_pred = [&](Vertex v) {
    for (auto e : boost::make_iterator_range(boost::in_edges(v, g)))
      if (!done[boost::source(e, g)]) return boost::source(e, g);
    TRAINSIM_CHECK(false, "unordered vertex without an unordered predecessor");
    return v;
  };
  Vertex v = start;
  for (std::size_t i = 0; i < n; ++i) v = unordered_pred(v);
  // v is on a cycle; collect it walking backwards, then reverse into edge order.
  std::vector<Vertex> cycle{v};
  for (Vertex w = unordered_pred(v); w != v; w = unordered_pred(w)) cycle.push_back(w);
  return {cycle.rbegin(), cycle.rend()};
}

void finalize(Model& m, const std::string& file_for_errors) {
  auto order = kahn_order(m.graph);
  if (order.size() != boost::num_vertices(m.graph)) {
    const auto cycle = find_cycle(m);
    std::string path;
    for (auto v : cycle) path += m.graph[v].name + " -> ";
    path += m.graph[cycle.front()].name;
    throw core::ConfigError(core::SourceLocation{file_for_errors, 0, 0},
                            m.graph[cycle.front()].name,
                            "the model graph must be acyclic, but layer '" +
                                m.graph[cycle.front()].name + "' is on the cycle " + path);
  }
  m.order = std::move(order);
}

}  // namespace trainsim::models
