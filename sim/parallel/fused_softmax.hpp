#pragma once
// Megatron's attention softmax (FusedScaleMaskSoftmax, megatron/model/fused_softmax.py in
// Megatron-LM and Megatron-DeepSpeed): one fused CUDA kernel scales, masks and normalizes the
// b x np score matrices of sq x sk (np: heads per tensor rank) when its warp layout fits them;
// otherwise PyTorch runs the same steps as separate eager ops (docs/devices.md, "Unfused
// attention softmax").
#include <cstdint>

namespace trainsim::parallel {

// Whether the fused kernel serves a causal self-attention of 16-bit scores
// (is_kernel_available / the custom_kernel_constraint): 16 < sk, sq % 4 == 0, sk % 4 == 0,
// attn_batches = b x np a multiple of 4 and of the kernel's batches per 128-thread block
//   warp = min(32, 2^ceil(log2 sk)), per warp = 2 when 2^ceil(log2 sk) <= 128 else 1,
//   per block = 128 / warp x per warp   (scaled_upper_triang_masked_softmax.h)
// The upper bound on sk differs by version (2048 in Megatron-DeepSpeed, larger later) and is
// not checked.
bool fused_softmax_available(std::int64_t attn_batches, std::int64_t sq, std::int64_t sk);

// What the eager fallback costs beyond the fused kernel, per score element and per layer, with
// 16-bit inputs and softmax in fp32 (query-key layer scaling, Megatron's default, forces it):
//   forward  input.float(), x * scale, masked_fill_, softmax, .half(): 5 kernels for 1;
//            bytes 6 + 8 + 8 + 8 + 6 = 36 per element for the fused kernel's 2 + 2 = 4
//   backward their gradients (cast, mul, masked_fill, softmax backward, cast): 5 kernels for 1;
//            bytes 6 + 8 + 8 + 12 + 6 = 40 for the fused backward's 2 + 2 + 2 = 6
struct SoftmaxFallback {
  static constexpr int forward_launches = 4;
  static constexpr int backward_launches = 4;
  static constexpr std::int64_t forward_bytes = 32;   // per score element
  static constexpr std::int64_t backward_bytes = 34;  // per score element
};

}  // namespace trainsim::parallel
