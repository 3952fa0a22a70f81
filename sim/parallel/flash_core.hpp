#pragma once
// Flash attention in the compute ops (docs/devices.md, "Flash attention"): the part of an op's
// FLOPs that is an attention core run by flash-attention kernels, and the FLOPs those kernels
// compute, which cost::device_time prices at the device's flash efficiencies.
#include <cstdint>

#include "models/layer.hpp"
#include "sim/parallel/program.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::parallel {

// The tile FlashAttention-2 skips causal blocks by: 128 query rows per forward thread block and
// 128 key columns per backward one for head dimension 128 on sm80 and sm90
// (Dao-AILab/flash-attention csrc/flash_attn/src/flash_fwd_launch_template.h,
// run_mha_fwd_hdim128: Flash_fwd_kernel_traits<128, 128, 64, ...>; the key blocks of 64
// divide the query block, so the diagonal is skipped at the query block's granularity).
inline constexpr std::int64_t kFlashTile = 128;

// The fraction of its queries x keys rectangle a rank's flash kernels compute, for `tokens`
// queries per rank. Non-causal: 1. Causal without context parallelism: the blocks on or below
// the diagonal of an n x n grid of tiles, n = ceil(tokens / tile), those above it skipped
// whole: n (n + 1) / 2 of n^2 blocks, (n + 1) / (2 n) (0.508 at 8192 tokens). Causal under
// context parallelism C (pass_context.cpp: the rank holds halves r and 2C-1-r of tokens / 2
// each, against the 2C halves of keys): of those 2 x 2C blocks, 2C - 1 lie wholly below the
// diagonal and two on it, each computing the single-rank fraction f of tokens / 2 queries:
// (2C - 1 + 2 f) / (4 C). Spread evenly over the rank's chunk kernels.
double flash_square_fraction(std::int64_t tokens, bool causal, std::int64_t context = 1,
                             std::int64_t tile = kFlashTile);

// The fraction of a packed sequence's tokens x tokens rectangle its flash kernels compute when
// it holds the documents of training.packed_documents and attention runs per document
// (variable-length kernels over cu_seqlens: Transformer Engine's THD format, as NeMo's packed
// SFT/PEFT runs it; NVIDIA/NeMo docs/source/features/optimizations/sequence_packing.rst: "the
// complexity of attention remains at sum_i s_i^2"): each document d is priced as
// flash_square_fraction prices a sequence of its length, d^2 x flash_square_fraction(d), and
// the sum is divided by tokens^2. `length`: tokens / length documents of `length` and one of the
// remainder; `lengths`: those documents. Without packed documents, flash_square_fraction(tokens).
double packed_square_fraction(std::int64_t tokens, const scenario::TrainingSpec::PackedDocuments& pd,
                              bool causal, std::int64_t tile = kFlashTile);

// Marks `model_flops` of op's FLOPs, the attention core of layer `l` as the model counts it
// (the whole square, 4 s^2 hq forward and twice that backward), as run by flash kernels when
// the scenario runs flash attention (training.attention: flash) and `l` is attention: the
// forward kernels compute model_flops x fraction (flash_square_fraction of l's tokens, its
// causal mask and parallel.context; packed_square_fraction under training.packed_documents,
// which needs context 1), the backward ones (five GEMMs of the
// forward's two: they recompute the scores; Dao 2023, FlashAttention-2, section 4.1)
// model_flops / 2 x 2.5 x fraction. Adds to what op already has.
void add_flash_core(Op& op, const scenario::Scenario& s, const models::Layer& l,
                    double model_flops, bool backward);

// Scales op's flash parts by `f` (an op left with f of its core's work).
void scale_flash_core(Op& op, double f);

}  // namespace trainsim::parallel
