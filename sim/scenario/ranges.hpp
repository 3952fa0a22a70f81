#pragma once
// The accepted range of every count and device figure a scenario gives (docs/robustness.md,
// "Ranges of counts and figures"). Each is checked where it is read, so a value past 2^31 or
// 2^32 is a located error instead of a count that wraps when lowering narrows it to 32 bits,
// and a figure is never so small or large that a duration stops being finite.
#include <cstdint>

namespace trainsim::scenario::ranges {

// Inclusive bounds of an integer key.
struct IntRange {
  std::int64_t min = 1;
  std::int64_t max = 1;
};

// Parallel degrees (data, tensor, pipeline): beyond any cluster built (2^20), and small enough
// that rank arithmetic in 32 bits cannot wrap.
inline constexpr IntRange kDegree{1, std::int64_t{1} << 20};
// data x tensor x pipeline, and cluster.nodes x cluster.gpus_per_node.
inline constexpr std::int64_t kMaxDevices = std::int64_t{1} << 24;
inline constexpr IntRange kClusterCount{1, kMaxDevices};  // nodes, gpus_per_node, plan --gpus
inline constexpr IntRange kVirtualStages{1, 1024};
inline constexpr IntRange kMicrobatchGroup{0, std::int64_t{1} << 20};  // per interleaved group; 0: pipeline
inline constexpr IntRange kScheduleMicrobatches{0, std::int64_t{1} << 20};  // per pipeline schedule; 0: the step's
inline constexpr IntRange kZeroStage{0, 3};
// Micro-batch size, micro-batches per step and the op limit: a step holds at least two ops per
// micro-batch, and lowering counts micro-batches and ops in 32 bits.
inline constexpr IntRange kMicroBatch{1, 1'000'000'000};
inline constexpr IntRange kGradientAccumulation{1, 1'000'000'000};
inline constexpr IntRange kMaxOps{1, 1'000'000'000};
inline constexpr IntRange kMaxLayers{1, 10'000'000};  // limits.max_layers
inline constexpr IntRange kStageBlocks{0, 10'000'000};  // blocks of an uneven pipeline stage; 0: even
inline constexpr IntRange kSeqLen{1, std::int64_t{1} << 30};  // tokens per sample
// device.sm_count: 0 turns the GEMM shape model off; beyond any GPU built (H100: 132).
inline constexpr IntRange kSmCount{0, 65536};

// Inclusive bounds of a device or link figure, in base units (FLOP/s, bytes/s, bytes,
// seconds), and how the error writes them.
struct FigureRange {
  double min = 0;
  double max = 0;
  const char* text = "";
};

inline constexpr FigureRange kFlopRate{1e9, 1e21, "between 1 GFLOP/s and 1e21 FLOP/s"};
inline constexpr FigureRange kMemoryBandwidth{1e9, 1e15, "between 1 GB/s and 1 PB/s"};
inline constexpr FigureRange kLinkBandwidth{1e6, 1e15, "between 1 MB/s and 1 PB/s"};
inline constexpr FigureRange kMemory{1048576.0, 1125899906842624.0, "between 1 MiB and 1 PiB"};
inline constexpr FigureRange kLatency{0, 1, "between 0 and 1 s"};  // latencies, launch, ramp
inline constexpr FigureRange kEfficiency{0.001, 1, "between 0.001 and 1"};

}  // namespace trainsim::scenario::ranges
