#pragma once
// The GEMMs one layer's compute op runs on one device, by shape (cost::GemmShape), for the
// tile and wave quantization of docs/gemm.md.
#include <cstdint>
#include <vector>

#include "models/layer.hpp"
#include "sim/cost/gemm_shape.hpp"

namespace trainsim::parallel {

// Appends to `out` the GEMMs of layer `l`'s forward (backward: its gradient GEMMs) for a
// micro-batch of `samples` on one of `tensor` ranks, as Megatron-LM runs them:
//   linears: M = tokens x samples, K = in, N = out; Q, K and V
//     fused into one GEMM (N = q + k + v outputs), gate and up into one; a split weight
//     divides N (column-parallel) or K (row-parallel, o and down) by the tensor degree;
//   a mixture of experts' `count` experts on `expert` ranks (parallel.expert): each rank runs
//     its count / expert experts as one grouped GEMM (batch = count / expert, Megatron-Core's
//     TEGroupedMLP), each expert on M = tokens x samples x expert / count rows: the tokens
//     every rank of the expert group routes to it under balanced routing;
//   attention core without flash attention (cuBLAS batched GEMMs): batch = samples x heads
//     per rank, Q K^T of (s, s, d) and attention x V of (s, d, s), d the head dimension; with
//     `flash` none: the flash kernels are priced at their own measured efficiency, not by
//     GEMM tiles (cost::KernelWork's flash parts, sim/parallel/flash_core.hpp).
// Backward runs, for each forward C[M,N] = A[M,K] B[K,N], dA = dC B^T (M, K, N) and
// dB = A^T dC (K, N, M). Layers without linears (norms, the loss head, generic matmul layers)
// add nothing.
void layer_gemms(const models::Layer& l, std::int64_t tensor, std::int64_t samples,
                 bool backward, std::vector<cost::GemmShape>& out, std::int64_t expert = 1,
                 bool flash = false);

}  // namespace trainsim::parallel
