#include <catch2/catch.hpp>

#include <vector>

#include "models/kinds.hpp"
#include "sim/parallel/layer_gemms.hpp"

using namespace trainsim;
using cost::GemmShape;

namespace {
std::vector<GemmShape> gemms(const models::Layer& l, std::int64_t t, std::int64_t samples,
                             bool backward, std::int64_t expert = 1) {
  std::vector<GemmShape> out;
  parallel::layer_gemms(l, t, samples, backward, out, expert);
  return out;
}
}  // namespace

TEST_CASE("a GPT attention layer's GEMMs at tensor 8, as Megatron-LM runs them",
          "[parallel][gemm]") {
  // h = 1024, a = 16 (d = 64), s = 1024, one sample, tensor 8:
  //   QKV fused, column-parallel: (1024, 3 x 1024 / 8 = 384, 1024)
  //   scores Q K^T: (1024, 1024, 64) x 16 / 8 = 2 heads; context: (1024, 64, 1024) x 2
  //   projection, row-parallel: (1024, 1024, 1024 / 8 = 128)
  const models::Layer l = models::kinds::attention(
      "attn", {.tokens = 1024, .hidden = 1024, .heads = 16}, models::DType::fp16);
  const std::vector<GemmShape> fwd{{1024, 384, 1024, 1},
                                   {1024, 1024, 64, 2},
                                   {1024, 64, 1024, 2},
                                   {1024, 1024, 128, 1}};
  CHECK(gemms(l, 8, 1, false) == fwd);
  // Backward: each (M, N, K) gives its input gradient (M, K, N) and weight gradient (K, N, M).
  const auto bwd = gemms(l, 8, 1, true);
  REQUIRE(bwd.size() == 8);
  CHECK(bwd[0] == GemmShape{1024, 1024, 384, 1});
  CHECK(bwd[1] == GemmShape{1024, 384, 1024, 1});
  CHECK(bwd[6] == GemmShape{1024, 128, 1024, 1});
  CHECK(bwd[7] == GemmShape{128, 1024, 1024, 1});
  // Two samples double M of the linears and the batch of the attention products.
  CHECK(gemms(l, 8, 2, false)[0] == GemmShape{2048, 384, 1024, 1});
  CHECK(gemms(l, 8, 2, false)[1] == GemmShape{1024, 1024, 64, 4});
}

TEST_CASE("an MLP's up and down GEMMs, SwiGLU fuses gate and up", "[parallel][gemm]") {
  // GeLU, h = 1024, f = 4096, s = 1024, tensor 8: up (1024, 512, 1024), down (1024, 1024, 512).
  const models::Layer gelu = models::kinds::mlp(
      "mlp", {.tokens = 1024, .hidden = 1024, .ffn = 4096}, models::DType::fp16);
  CHECK(gemms(gelu, 8, 1, false) ==
        std::vector<GemmShape>{{1024, 512, 1024, 1}, {1024, 1024, 512, 1}});
  // SwiGLU, f = 2816, tensor 2: gate and up in one GEMM of N = 2 x 2816 / 2 = 2816;
  // down (1024, 1024, 1408).
  const models::Layer swiglu = models::kinds::mlp(
      "mlp",
      {.tokens = 1024, .hidden = 1024, .ffn = 2816,
       .activation = models::kinds::MlpActivation::swiglu, .bias = false},
      models::DType::bf16);
  CHECK(gemms(swiglu, 2, 1, false) ==
        std::vector<GemmShape>{{1024, 2816, 1024, 1}, {1024, 1024, 1408, 1}});
}

TEST_CASE("a mixture of experts runs its local experts as one grouped GEMM", "[parallel][gemm][expert]") {
  // 4 SwiGLU experts of f = 128 at h = 64, top-2, 32 tokens, 2 samples: 32 x 2 x 2 = 128
  // routed rows, 32 per expert under balanced routing.
  const models::Layer moe = models::kinds::mlp(
      "moe",
      {.tokens = 32, .hidden = 64, .ffn = 128,
       .activation = models::kinds::MlpActivation::swiglu, .bias = false, .experts = 4,
       .top_k = 2},
      models::DType::bf16);
  // Expert degree 1: all 4 experts on the rank, one grouped GEMM each for gate+up
  // (32, 2 x 128, 64) x 4 and down (32, 64, 128) x 4.
  CHECK(gemms(moe, 1, 2, false) ==
        std::vector<GemmShape>{{32, 256, 64, 4}, {32, 64, 128, 4}});
  // Expert degree 2: 2 experts per rank, each gets the 32 rows of both ranks: 64.
  CHECK(gemms(moe, 1, 2, false, 2) ==
        std::vector<GemmShape>{{64, 256, 64, 2}, {64, 64, 128, 2}});
  // Expert degree 4: one expert per rank with all 4 ranks' 32 rows.
  CHECK(gemms(moe, 1, 2, false, 4) ==
        std::vector<GemmShape>{{128, 256, 64, 1}, {128, 64, 128, 1}});
  // Backward: the input and weight gradients of each, grouped the same way.
  const auto bwd = gemms(moe, 1, 2, true, 2);
  REQUIRE(bwd.size() == 4);
  CHECK(bwd[0] == GemmShape{64, 64, 256, 2});
  CHECK(bwd[1] == GemmShape{64, 256, 64, 2});
}
