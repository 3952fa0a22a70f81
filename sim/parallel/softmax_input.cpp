// PyTorch's softmax saved its input for backward until 1.11. The derivative of `_softmax` in
// tools/autograd/derivatives.yaml was `_softmax_backward_data(grad, result, dim, self)`: the
// CUDA and CPU kernels read only the output, but `self` was an argument of the formula, so
// SoftmaxBackward kept it (pytorch/pytorch issue #49600). PR #65242, relanded as #66018 on
// 2021-10-01 after the 1.10 branch, passes the input's dtype instead; 1.11 is the first release
// without the saved input. An eager attention that calls torch.softmax on its scores (Hugging
// Face's BertSelfAttention: scores / sqrt(d) + mask, then softmax) therefore kept the masked
// scores, a x s^2 elements per sample and layer, until that layer's backward, beside the
// softmax output, dropout mask and dropout output the Korthikanti et al. count already holds.
// Their dtype is softmax's input: fp32 when training in fp32; under autocast softmax runs in
// fp32 (it is on autocast's fp32 list), so the tensor it saves is fp32 too; in true 16-bit
// training, the activation dtype.
#include "sim/parallel/softmax_input.hpp"

#include "sim/scenario/precision.hpp"

namespace trainsim::parallel {

core::Bytes softmax_input_bytes(const models::Layer& l, const scenario::TrainingSpec& t) {
  // A standard core holds an s^2 term (saved_attention_core); flash attention's is 0.
  if (l.kind != models::LayerKind::attention || l.saved_attention_core.value == 0 || l.heads <= 0)
    return {};
  const std::int64_t s = l.linears[static_cast<std::size_t>(models::LinearRole::q)].tokens;
  const std::int64_t e = models::dtype_bytes(scenario::activation_dtype(t.precision));
  const std::int64_t b = t.precision == scenario::Precision::fp32 || scenario::autocast(t.precision) ? 4 : e;
  return core::Bytes{b} * l.heads * s * s;
}

void apply_softmax_input(const scenario::Scenario& s, std::int64_t t, std::vector<LayerShard>& shards) {
  if (!s.training.softmax_saves_input) return;
  const auto& m = s.model;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const core::Bytes x = softmax_input_bytes(m.graph[m.order[i]], s.training) / t;
    shards[i].saved += x;
    shards[i].saved_core += x;
  }
}

}  // namespace trainsim::parallel
