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
// and sk <= 4096, the bound of is_kernel_available in Megatron-LM's Megatron Core
// (megatron/core/fusions/fused_softmax.py), what Megatron users run today; Megatron-DeepSpeed's
// is 2048, which no vTrain row (s = 1024) reaches.
inline constexpr std::int64_t kFusedSoftmaxMaxSk = 4096;
bool fused_softmax_available(std::int64_t attn_batches, std::int64_t sq, std::int64_t sk);

// What the eager fallback costs beyond the fused kernel, per score element and per layer, with
// 16-bit inputs and softmax in fp32 (query-key layer scaling, Megatron's default, forces it):
//   forward  input.float(), x * scale, masked_fill_, softmax, .half(): 5 kernels for 1;
//            bytes 6 + 8 + 8 + 8 + 6 = 36 per element for the fused kernel's 2 + 2 = 4
//   backward their gradients (cast, mul, masked_fill, softmax backward, cast): 5 kernels for 1;
//            bytes 6 + 8 + 8 + 12 + 6 = 40 for the fused backward's 2 + 2 + 2 = 6
// and in memory (forward_torch_softmax's autograd graph):
//   saved    softmax keeps its fp32 output (4 bytes) for its backward; the casts and the scalar
//            multiply keep no tensor, masked_fill_ only the shared mask. The fused kernel kept
//            its 2-byte output instead, which with attention dropout nothing else keeps (dropout
//            keeps its mask, attn x V the dropout's output): +4 - 2 = +2 bytes per element; without
//            dropout attn x V keeps the 2-byte probabilities still: +4.
//   forward  transient: the fp32 scaled and masked scores (4 bytes) live beside the fp32
//            probabilities until the cast back (input.float() and x * scale coexist for 4 + 4
//            before that, the same peak).
//   backward transient: the fp32 incoming gradient and softmax backward's fp32 result, 4 + 4.
struct SoftmaxFallback {
  static constexpr int forward_launches = 4;
  static constexpr int backward_launches = 4;
  static constexpr std::int64_t forward_bytes = 32;   // per score element
  static constexpr std::int64_t backward_bytes = 34;  // per score element
  static constexpr std::int64_t probs_fp32 = 4;       // saved bytes per score element
  static constexpr std::int64_t forward_temp = 4;     // transient bytes per score element
  static constexpr std::int64_t backward_temp = 8;    // transient bytes per score element
};

// Megatron's causal kernel (ScaledUpperTriangMaskedSoftmax, megatron/model/fused_softmax.py, for
// AttnMaskType.causal with sq == sk: GPT's self-attention) reads only the lower triangle
// (megatron/fused_kernels/scaled_upper_triang_masked_softmax.h: row i of a score matrix loads
// its first i + 1 elements, `local_seq = blockIdx.x + 1`, and writes the whole row, zeros above
// the diagonal). Of a matrix's s^2 elements it reads s(s+1)/2, so each e-byte tensor it reads
// costs e x s(s-1)/2 bytes fewer than a full read:
//   forward  reads the scores, writes the probabilities: e(s+1)/(2s) + e per element
//            (3 bytes at e = 2 and large s, for the bidirectional kernel's 2 + 2 = 4)
//   backward reads the incoming gradient and the saved probabilities, writes the input
//            gradient: 2 x e(s+1)/(2s) + e (about 4 bytes at e = 2, for 2 + 2 + 2 = 6)
// The bytes `matrices` s x s score matrices of e-byte elements are not read, forward; the
// backward skips twice as many (two tensors read).
std::int64_t causal_unread_bytes(std::int64_t matrices, std::int64_t s, std::int64_t e);

// Saved bytes per score element the fallback adds to a 16-bit attention core that keeps
// `core_per_element` bytes per score element with the fused kernel: 2 (probabilities only),
// 5 (with dropout: 2 + 1-byte mask + 2-byte output); an fp32 softmax already kept (autocast's
// 4 + ...) adds nothing.
std::int64_t fallback_saved_per_element(std::int64_t core_per_element);

}  // namespace trainsim::parallel
