// The layer graph itself: names, order, cycles, totals, and a hand-computed tiny model.
#include <catch2/catch.hpp>

#include "models/builders.hpp"
#include "models/kinds.hpp"
#include "models/presets.hpp"
#include "sim/core/error.hpp"

using namespace trainsim;
using namespace trainsim::models;

TEST_CASE("layer kinds and dtypes spell and size as documented", "[model]") {
  for (const char* name :
       {"linear", "embedding", "layernorm", "rmsnorm", "attention", "mlp", "conv2d", "batchnorm",
        "pooling", "activation", "dropout", "add", "loss", "generic"}) {
    const auto k = layer_kind_from_string(name);
    REQUIRE(k);
    CHECK(to_string(*k) == name);
  }
  CHECK_FALSE(layer_kind_from_string("Linear"));
  CHECK(dtype_bytes(DType::fp32) == 4);
  CHECK(dtype_bytes(DType::fp16) == 2);
  CHECK(dtype_bytes(DType::bf16) == 2);
}

TEST_CASE("a hand-computed two-linear-layer model", "[model]") {
  // fc0 16 -> 32 (bias), ReLU (its output is fc1's saved input), fc1 32 -> 8 (bias), loss over
  // 8 classes, one vector per sample, bf16.
  const Model m = build_mlp({"tiny", 16, {32}, 8}, {1024, DType::bf16, false});
  CHECK(m.parameters() == (16 * 32 + 32) + (32 * 8 + 8));  // 808
  CHECK(m.parameters() == 808);
  // Saved: fc0 input 2*16 + fc1 input 2*32 + fp32 softmax 4*8 = 32 + 64 + 32.
  CHECK(saved_per_sample(m).value == 128);
  // FLOPs: 2*16*32 + 32 (ReLU) + 2*32*8 + 3*8 (log-softmax).
  CHECK(m.forward_flops_per_sample() == 1024.0 + 32 + 512 + 24);
  CHECK_FALSE(m.sequence_model);
  REQUIRE(m.order.size() == 4);
  CHECK(m.graph[m.order.front()].name == "fc0");
  CHECK(m.graph[m.order.back()].name == "loss");
}

TEST_CASE("a hand-computed sequence of two linear layers over s tokens", "[model]") {
  // 4 tokens, fp32: linear 8 -> 16 without bias, linear 16 -> 4 with bias.
  Model m;
  const Vertex a = add_layer(m, kinds::linear("a", {4, 8, 16, false}, DType::fp32));
  const Vertex b = add_layer(m, kinds::linear("b", {4, 16, 4, true}, DType::fp32));
  add_edge(m, a, b);
  finalize(m);
  CHECK(m.parameters() == 8 * 16 + 16 * 4 + 4);
  CHECK(saved_per_sample(m).value == 4 * 4 * 8 + 4 * 4 * 16);  // 128 + 256
  CHECK(m.graph[b].output.value == 4 * 4 * 4);
  CHECK(m.forward_flops_per_sample() == 2.0 * 4 * 8 * 16 + 2.0 * 4 * 16 * 4);
}

TEST_CASE("finalize keeps insertion order when it is valid and reorders when it is not",
          "[model]") {
  Model m;
  const Vertex c = add_layer(m, kinds::add("c", 4, DType::bf16));
  const Vertex a = add_layer(m, kinds::add("a", 4, DType::bf16));
  const Vertex b = add_layer(m, kinds::add("b", 4, DType::bf16));
  add_edge(m, a, b);
  add_edge(m, b, c);
  finalize(m);
  CHECK(m.order == std::vector<Vertex>{a, b, c});

  const Model r = build_resnet({"r", {1, 1}, 10, 64, 16}, {1, DType::bf16, false});
  for (std::size_t i = 0; i < r.order.size(); ++i) CHECK(r.order[i] == i);
}

TEST_CASE("a cycle is a ConfigError naming a layer on it", "[model]") {
  Model m;
  const Vertex in = add_layer(m, kinds::add("in", 4, DType::bf16));
  const Vertex x = add_layer(m, kinds::add("x", 4, DType::bf16));
  const Vertex y = add_layer(m, kinds::add("y", 4, DType::bf16));
  const Vertex after = add_layer(m, kinds::add("after", 4, DType::bf16));
  add_edge(m, in, x);
  add_edge(m, x, y);
  add_edge(m, y, x);
  add_edge(m, y, after);
  CHECK(find_cycle(m).size() == 2);
  try {
    finalize(m, "net.yaml");
    FAIL("finalize accepted a cycle");
  } catch (const core::ConfigError& e) {
    const std::string what = e.what();
    CHECK(e.where().file == "net.yaml");
    CHECK((e.key_path() == "x" || e.key_path() == "y"));
    CHECK_THAT(what, Catch::Contains("cycle"));
    CHECK_THAT(what, Catch::Contains("x -> y") || Catch::Contains("y -> x"));
  }
}

TEST_CASE("transformer builder names layers per block and sets the model's shape", "[model]") {
  TransformerConfig c;
  c.name = "toy";
  c.layers = 3;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 100;
  c.max_positions = 32;
  const Model m = build_transformer(c, {32, DType::bf16, false});
  CHECK(m.num_blocks == 3);
  CHECK(m.hidden == 64);
  CHECK(m.seq_len == 32);
  CHECK(boost::num_vertices(m.graph) == 1 + 3 * 6 + 2);
  const auto attn = find_layer(m, "block.2.attn");
  REQUIRE(attn);
  CHECK(m.graph[*attn].block == 2);
  CHECK(m.graph[*find_layer(m, "embed")].block == -1);
  // block.1.add1 sums the attention output and the block input (block.0.add2).
  const auto add1 = *find_layer(m, "block.1.add1");
  std::vector<std::string> inputs;
  for (auto e : boost::make_iterator_range(boost::in_edges(add1, m.graph)))
    inputs.push_back(m.graph[boost::source(e, m.graph)].name);
  std::sort(inputs.begin(), inputs.end());
  CHECK(inputs == std::vector<std::string>{"block.0.add2", "block.1.attn"});
  CHECK_THROWS_AS(build_transformer(c, {64, DType::bf16, false}), std::invalid_argument);
}

TEST_CASE("moving a model moves its graph: edges, order and counts survive, the source is empty") {
  using namespace trainsim;
  models::BuildOptions opts;
  opts.seq_len = 128;
  models::Model a = models::build_preset(*models::find_preset("gpt2"), opts);
  const auto params = a.parameters();
  const auto vertices = boost::num_vertices(a.graph), edges = boost::num_edges(a.graph);
  models::Model b(std::move(a));
  CHECK(b.parameters() == params);
  CHECK(boost::num_vertices(b.graph) == vertices);
  CHECK(boost::num_edges(b.graph) == edges);
  CHECK(boost::num_vertices(a.graph) == 0);
  // In- and out-edge lists still name live edges: every edge's ends agree both ways.
  std::size_t in_total = 0;
  for (auto v : b.order)
    for (auto [e, end] = boost::in_edges(v, b.graph); e != end; ++e) {
      CHECK(boost::target(*e, b.graph) == v);
      ++in_total;
    }
  CHECK(in_total == edges);
  models::Model c;
  c = std::move(b);
  models::Model d = c;  // a copy stays independent of its source
  CHECK(d.parameters() == params);
  CHECK(boost::num_edges(d.graph) == edges);
}
