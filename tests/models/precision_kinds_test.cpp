// Activation bytes under the precisions that keep some tensors in another dtype than the
// activation dtype: PyTorch autocast (fp32 norms, residual stream and softmax) and fp8 linears
// (GEMM inputs kept in one byte). Hand computations beside each check, per sample.
#include <catch2/catch.hpp>

#include "models/builders.hpp"
#include "models/kinds.hpp"
#include "models/presets.hpp"

using namespace trainsim;
using namespace trainsim::models;

namespace {

std::int64_t block_saved(const Model& m, int block) {
  std::int64_t saved = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(m.graph)))
    if (m.graph[v].block == block) saved += m.graph[v].saved.value;
  return saved;
}

const Layer& layer(const Model& m, const char* name) { return m.graph[*find_layer(m, name)]; }

Model gpt3_block(bool autocast, bool fp8) {
  BuildOptions o{2048, DType::bf16, false};
  o.autocast = autocast;
  o.fp8_gemm_inputs = fp8;
  return build_transformer(std::get<TransformerConfig>(find_preset("gpt3")->config), o);
}

}  // namespace

TEST_CASE("under autocast a GPT-3 block keeps 38sh + 7as^2 bytes per sample", "[kinds][precision]") {
  // bf16 (Korthikanti et al. 2022): 34sh + 5as^2. Autocast changes:
  //  - each LayerNorm runs in fp32 on the fp32 residual stream: saves 4sh instead of 2sh (+2sh x 2);
  //  - softmax runs in fp32: keeps its 4as^2 output, its dropout mask as^2, and attn x V keeps
  //    its 2-byte cast of the dropout output 2as^2: 7as^2 instead of 2 + 1 + 2 = 5as^2.
  //  - linears keep their 16-bit cast inputs: unchanged.
  const std::int64_t s = 2048, h = 12288, a = 96;
  const Model m = gpt3_block(true, false);
  CHECK(block_saved(m, 3) == 38 * s * h + 7 * a * s * s);
  CHECK(layer(m, "block.3.attn").saved.value == 11 * s * h + 7 * a * s * s);
  CHECK(layer(m, "block.3.attn").saved_attention_core.value == 7 * a * s * s);
  CHECK(layer(m, "block.3.ln1").saved.value == 4 * s * h);
  CHECK(layer(m, "block.3.ln1").output.value == 4 * s * h);    // fp32 residual stream
  CHECK(layer(m, "block.3.add2").output.value == 4 * s * h);
  CHECK(layer(m, "block.3.attn").output.value == 2 * s * h);   // the 16-bit projection output
  CHECK(layer(m, "embed").output.value == 4 * s * h);          // fp32 weights, fp32 lookup
}

TEST_CASE("fp8 linears keep their GEMM inputs in one byte: a GPT-3 block keeps 27sh + 5as^2",
          "[kinds][precision]") {
  // attention: QKV input 1sh + output-dropout mask 1sh; Q, K, V 6sh; projection input 1sh; core
  //   5as^2 (16-bit as before) -> 9sh + 5as^2.
  // MLP (f = 4h): fc1 input 1sh + dropout mask 1sh; GeLU input 2 x 4sh; fc2 input 1 x 4sh -> 14sh.
  // LayerNorms 2sh each (bf16).
  const std::int64_t s = 2048, h = 12288, a = 96;
  const Model m = gpt3_block(false, true);
  CHECK(layer(m, "block.3.attn").saved.value == 9 * s * h + 5 * a * s * s);
  CHECK(layer(m, "block.3.mlp").saved.value == 14 * s * h);
  CHECK(block_saved(m, 3) == 27 * s * h + 5 * a * s * s);
}

TEST_CASE("a layer's GEMM weights: its own, or the embedding's for a tied head", "[kinds][precision]") {
  const Model m = gpt3_block(false, false);
  const std::int64_t h = 12288, V = 50257;
  CHECK(layer(m, "block.0.attn").gemm_params == layer(m, "block.0.attn").params);
  CHECK(layer(m, "block.0.mlp").gemm_params == layer(m, "block.0.mlp").params);
  CHECK(layer(m, "block.0.ln1").gemm_params == 0);
  CHECK(layer(m, "embed").gemm_params == 0);           // a lookup, not a GEMM
  CHECK(layer(m, "loss").params == 0);                 // tied: the embedding owns the weights
  CHECK(layer(m, "loss").gemm_params == V * h);        // but the head GEMM reads all of them
}

TEST_CASE("the default precision's bytes do not move", "[kinds][precision]") {
  const std::int64_t s = 2048, h = 12288, a = 96;
  CHECK(block_saved(gpt3_block(false, false), 3) == 34 * s * h + 5 * a * s * s);
}
