#pragma once
// Small scenarios built in code for oracle tests: a chain of plain layers and an ideal device
// (no launch overhead, exact rates) so hand-computed figures come out exactly.
#include <string>
#include <vector>

#include "models/builders.hpp"
#include "models/model.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::testing {

// One layer of a chain: every figure per sample.
inline models::Layer plain_layer(std::string name, std::int64_t params, std::int64_t saved,
                                 std::int64_t output, double flops = 0) {
  models::Layer l;
  l.name = std::move(name);
  l.kind = models::LayerKind::generic;
  l.params = params;
  l.saved = core::Bytes{saved};
  l.output = core::Bytes{output};
  l.flops = flops;
  l.matmul = true;
  return l;
}

// Chains `layers` in order; each layer is its own block, so pipelines cut between any two.
inline models::Model chain_model(const std::vector<models::Layer>& layers) {
  models::Model m;
  m.name = "chain";
  m.sequence_model = false;
  models::Vertex prev{};
  for (std::size_t i = 0; i < layers.size(); ++i) {
    models::Layer l = layers[i];
    l.block = static_cast<int>(i);
    const models::Vertex v = models::add_layer(m, l);
    if (i > 0) models::add_edge(m, prev, v);
    prev = v;
  }
  m.num_blocks = static_cast<int>(layers.size());
  models::finalize(m);
  return m;
}

// 1 TFLOP/s at 100% efficiency, effectively infinite memory bandwidth, no launch overhead.
inline hw::DeviceSpec ideal_device(std::int64_t memory_bytes) {
  hw::DeviceSpec d;
  d.name = "ideal";
  d.memory = core::Bytes{memory_bytes};
  d.peak_fp32 = core::FlopRate{1e12};
  d.peak_tf32 = core::FlopRate{1e12};
  d.peak_16bit = core::FlopRate{1e12};
  d.memory_bandwidth = core::Bandwidth{1e30};
  d.matmul_efficiency = 1.0;
  d.memory_efficiency = 1.0;
  d.reserved = core::Bytes{0};
  d.kernel_launch = core::Duration{0};
  d.matmul_ramp_s = 0;  // every GEMM at full efficiency, whatever its size
  d.host_dispatch = core::Duration{0};  // no host launch floor: times are the GPU's
  return d;
}

// Links that cost nothing, for figures that assume free communication.
inline hw::LinkSpec free_link() {
  hw::LinkSpec l;
  l.name = "free";
  l.bandwidth = core::Bandwidth{1e30};
  l.latency = core::Duration{0};
  return l;
}

inline scenario::Scenario make_scenario(models::Model m, hw::DeviceSpec d,
                                        scenario::TrainingSpec t = {},
                                        scenario::ParallelSpec p = {}) {
  scenario::Scenario s;
  s.name = "test";
  s.model = std::move(m);
  s.device = std::move(d);
  s.training = t;
  // Figures computed by hand are the tensors' bytes: the caching-allocator model stays off here
  // (a test of it turns it back on).
  s.training.caching_allocator = false;
  if (s.training.global_batch == 0 || s.training.global_batch == 1)
    s.training.global_batch = t.micro_batch * t.gradient_accumulation * p.data;
  s.parallel = p;
  s.cluster.nodes = 1;
  s.cluster.gpus_per_node = p.devices();
  s.cluster.intra_node = free_link();
  s.cluster.inter_node = free_link();
  return s;
}

// FSDP's test model: emb (1,000 params, root) | 3 blocks of attn (3,000) + mlp (5,000) | head
// (1,000, root): 26,000 parameters and no activations, so a peak is model states and FSDP's
// buffers alone.
inline models::Model fsdp_blocks_model() {
  std::vector<models::Layer> ls;
  ls.push_back(plain_layer("emb", 1000, 0, 0, 1e9));
  for (int b = 0; b < 3; ++b) {
    ls.push_back(plain_layer("block." + std::to_string(b) + ".attn", 3000, 0, 0, 1e9));
    ls.push_back(plain_layer("block." + std::to_string(b) + ".mlp", 5000, 0, 0, 1e9));
  }
  ls.push_back(plain_layer("head", 1000, 0, 0, 1e9));
  models::Model m = chain_model(ls);
  const int block[] = {-1, 0, 0, 1, 1, 2, 2, -1};
  for (std::size_t i = 0; i < m.order.size(); ++i) m.graph[m.order[i]].block = block[i];
  m.num_blocks = 3;
  return m;
}

// A Llama-shaped model small enough to count by hand: 2 blocks, h 64, 4 heads, SwiGLU f 128,
// RMSNorm, V 100, untied head, no bias, no dropout, rotary positions.
inline models::TransformerConfig tiny_llama_config() {
  models::TransformerConfig c;
  c.name = "tiny-dense";
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.ffn = 128;
  c.vocab = 100;
  c.mlp = models::kinds::MlpActivation::swiglu;
  c.norm = models::NormKind::rmsnorm;
  c.bias = false;
  c.dropout = false;
  c.learned_positions = false;
  c.tied_embeddings = false;
  return c;
}

// The expert tests' model: tiny_llama_config with 4 SwiGLU experts of f 128, top-2, bf16,
// `tokens` per sample. One MoE MLP's routed experts: 4 x 3 x 64 x 128 = 98,304 parameters
// (router 4 x 64 = 256 apart). `experts` 0 gives the same shape with a dense MLP.
inline models::Model tiny_moe(std::int64_t tokens = 32, std::int64_t experts = 4) {
  models::TransformerConfig c = tiny_llama_config();
  if (experts > 0) {
    c.name = "tiny-moe";
    c.experts = experts;
    c.top_k = 2;
  }
  return models::build_transformer(c, {tokens, models::DType::bf16, true});
}

// The expert tests' training: micro-batch 2, 2 accumulation steps, 32 tokens, bf16, AdamW.
inline scenario::TrainingSpec tiny_moe_training() {
  scenario::TrainingSpec t;
  t.micro_batch = 2;
  t.gradient_accumulation = 2;
  t.seq_len = 32;
  t.precision = scenario::Precision::bf16;
  t.optimizer = scenario::Optimizer::adamw;
  return t;
}

}  // namespace trainsim::testing
