#pragma once
// The kernels a causal language model's training loop launches around the model for each
// micro-batch (Megatron-DeepSpeed's GPT path under DeepSpeed's pipeline engine), itemised in
// pass_batch_host.cpp and docs/devices.md ("Per-micro-batch host work").
#include <cstdint>

namespace trainsim::parallel {

struct BatchHostWork {
  // get_batch_pipe on each stage that loads the micro-batch: broadcast_data 5, the labels' and
  // tokens' contiguous copies 2, the masks and position ids 5.
  static constexpr std::int32_t batch = 5 + 2 + 5;
  // The first stage's clones of its three inputs into the pipeline buffer.
  static constexpr std::int32_t input_clones = 3;
  // CrossEntropy's transposes, mask product, sums and division (6) and the loss accumulation (1);
  // plus 1 each for the accumulation division and the fp16 loss scale where they apply.
  static constexpr std::int32_t loss_forward = 6 + 1;
  // Autograd's seed and the division's and mask product's gradients; plus 1 each as above.
  static constexpr std::int32_t loss_backward = 3;
};

}  // namespace trainsim::parallel
