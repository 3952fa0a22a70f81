#pragma once
// An op's duration class. Ops repeat per micro-batch with identical work, so a play costs each
// distinct piece of work once per program (layout.cpp numbers the classes, op_durations.cpp
// costs them, comm_accounting.cpp takes each class's tensor-parallel part). Ops of one program
// share a class only when their WorkKeys are equal, and the key holds every field of the op that
// op_duration and tensor_parallel_time read (the rest they read is the program's — its device,
// GEMM shapes, straggler factor — and the plan's), each compared exactly: floating-point fields
// bit for bit. A key built by folding the fields into a few words could make two different ops
// collide and silently share a duration.
#include <bit>
#include <cstdint>

#include "sim/core/flat_table.hpp"
#include "sim/parallel/program.hpp"

namespace trainsim::exec {

// The fields as 64-bit words, without loss: 32-bit fields two to a word (the first named in the
// low half), the enums, tp_collectives and the flags in a byte or a bit of their own. Words, not
// 22 fields, so that comparing two keys and hashing one take a few instructions per word: a plan
// of a few hundred thousand ops numbers its classes in one pass over them (layout.cpp).
struct WorkKey {
  // cost::KernelWork, the roofline's and the host dispatch's inputs (cost::device_time,
  // cost::host_time); floating-point fields as their bits.
  std::uint64_t flops = 0;
  std::uint64_t work_bytes = 0;
  // parallel::CommWork: a communication op's collective or transfer, or a compute op's
  // tensor-parallel collectives.
  std::uint64_t comm_bytes = 0;
  // comm.gather_ranks; then bits 32-39 kind, 40-47 tp_overlap, 48-55 tp_collectives, and one bit
  // each from 56: work.matmul, work.serial_memory, work.fp8_attention, comm.inter_node,
  // tp_sequence_parallel, data_reduction (an all-reduce priced with Plan::data_allreduce, the
  // parallel.allreduce setting, rather than NCCL's choice).
  std::uint64_t kind_and_flags = 0;
  std::uint64_t kernels_launches = 0;  // kernels, work.launches
  std::uint64_t ranks = 0;             // comm.ranks, comm.ranks_per_node
  std::uint64_t pod_members = 0;       // comm.pod_members (groups spanning pods)
  // The op's GEMMs, Program::gemm_shapes[gemm_begin, gemm_end): their tile and wave quantization
  // (cost::gemms_efficiency) and the userbuffers overlap's split (tp_overlap.cpp).
  std::uint64_t gemms = 0;  // gemm_begin, gemm_end
  std::uint64_t shape_efficiency = 0;
  // Flash attention's FLOPs (cost::KernelWork).
  std::uint64_t flash_model_flops = 0, flash_forward = 0, flash_backward = 0;
  bool operator==(const WorkKey&) const = default;
};

inline WorkKey work_key(const parallel::Op& op) {
  const auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
  const auto two = [](auto low, auto high) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(low)) |
           static_cast<std::uint64_t>(static_cast<std::uint32_t>(high)) << 32;
  };
  const auto bit = [](bool b, int at) { return static_cast<std::uint64_t>(b) << at; };
  const cost::KernelWork& w = op.work;
  const std::uint64_t small = static_cast<std::uint64_t>(op.kind) |
                              static_cast<std::uint64_t>(op.tp_overlap) << 8 |
                              static_cast<std::uint64_t>(op.tp_collectives) << 16;
  return WorkKey{
      .flops = bits(w.flops),
      .work_bytes = static_cast<std::uint64_t>(w.bytes.value),
      .comm_bytes = static_cast<std::uint64_t>(op.comm.bytes.value),
      .kind_and_flags = two(op.comm.gather_ranks, small) | bit(w.matmul, 56) |
                        bit(w.serial_memory, 57) | bit(w.fp8_attention, 58) |
                        bit(op.comm.inter_node, 59) | bit(op.tp_sequence_parallel, 60) |
                        bit(op.data_reduction, 61),
      .kernels_launches = two(op.kernels, w.launches),
      .ranks = two(op.comm.ranks, op.comm.ranks_per_node),
      .pod_members = static_cast<std::uint64_t>(op.comm.pod_members),
      .gemms = two(op.gemm_begin, op.gemm_end),
      .shape_efficiency = bits(w.shape_efficiency),
      .flash_model_flops = bits(w.flash_model_flops),
      .flash_forward = bits(w.flash_forward),
      .flash_backward = bits(w.flash_backward)};
}

// Equal keys have equal words, so equal hashes. The words are spread by independent multiplies
// and summed, then the sum goes through core::hash_mix once.
struct WorkHash {
  std::size_t operator()(const WorkKey& k) const {
    const std::uint64_t sum =
        k.flops * 0x9E3779B97F4A7C15ULL + k.work_bytes * 0xC2B2AE3D27D4EB4FULL +
        k.comm_bytes * 0x165667B19E3779F9ULL + k.kind_and_flags * 0xD6E8FEB86659FD93ULL +
        k.kernels_launches * 0xFF51AFD7ED558CCDULL + k.ranks * 0xC4CEB9FE1A85EC53ULL +
        k.gemms * 0x27D4EB2F165667C5ULL;
    return core::hash_mix(sum, k.shape_efficiency ^ k.flash_model_flops * 3 ^
                                   k.flash_forward * 5 ^ k.flash_backward * 7 ^
                                   k.pod_members * 11);
  }
};

}  // namespace trainsim::exec
