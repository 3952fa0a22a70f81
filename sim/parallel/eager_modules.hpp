#pragma once
// What PyTorch's eager modules keep for backward beyond the fused kernels the layer formulas
// describe (`training.modules: eager`; docs/finetuning.md, "Eager modules").

#include <vector>

#include "sim/parallel/shard.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::parallel {

// Bytes per sample a layer saves in addition to its formula's `saved` when its forward runs as
// eager PyTorch modules (torchtune's and Hugging Face transformers' Llama), split like the
// layer (Layer::saved vs saved_split). With e the activation dtype's bytes, s tokens:
//   RMSNorm (replicated):  4*s*h   the fp32 upcast x.float() that pow and the rsqrt product keep
//                                  (beside the e-byte normalized tensor the weight's product keeps,
//                                  which replaces the formula's e*s*h input)
//   attention (split):     e*s*hq  the contiguous copy of the attention output the output
//                                  projection keeps, beside the output the attention kernel keeps
//                          + 2*e*s*(hq - hk)  K and V expanded to every query head before the
//                                  attention call (grouped-query attention)
//   gated MLP (split):     e*s*f   act(gate), kept by the product with up, beside gate's output
// Under training.compile (torchtune compiles each decoder layer) the point-wise chains fuse and
// only the expanded K and V stay: they are the attention kernel's inputs, outside the graphs.
struct EagerExtra {
  core::Bytes replicated{};
  core::Bytes split{};
};
EagerExtra eager_extra(const models::Layer& l, int activation_bytes, int norm_bytes, bool compiled);

// Bytes per sample the eager modules' element-wise kernels move beyond the layer's io (one
// fused kernel per element-wise step), split like eager_extra, with e the activation dtype's
// bytes and n the norm's:
//   RMSNorm (replicated):  (20 + 2(n + 4) when n < 4, else 20) * s*h: the chain x.float(),
//                          pow, mean, x * rsqrt, type_as, * weight (torchtitan's and Hugging
//                          Face's Llama RMSNorm), each kernel reading and writing memory
//   attention (split):     (16 + 2e) * s*(hq + hk) RoPE in fp32 on Q and K (float, the complex
//                          product, type_as: torchtitan's apply_rotary_emb), 2e * s*hq the
//                          output's transpose-contiguous copy, and with grouped-query attention
//                          2e * s*(hq + hk) expanding K and V to every query head
//   gated MLP (split):     2e * s*f: act(gate) and the product with up as two kernels
// Under training.compile only the expansion of K and V stays.
EagerExtra eager_io(const models::Layer& l, int activation_bytes, int norm_bytes, bool compiled);

// Adds eager_extra to every shard's saved bytes and eager_io to its io under
// training.modules: eager (tensor degree t, sequence parallelism sp as in shard_layers);
// nothing otherwise.
void apply_modules(const scenario::Scenario& s, std::int64_t t, bool sp, std::vector<LayerShard>& shards);

}  // namespace trainsim::parallel
