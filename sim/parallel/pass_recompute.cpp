// Activation recomputation (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models"). Selective: the attention core's saved tensors (the 5as/h term) are not
// kept; one recompute op re-creates them before the layer's backward. Full: a checkpointed
// block keeps only its input (the checkpoint); before the backward of its last layer one
// recompute op replays the block's forwards, with their tensor-parallel collectives, and books
// their saved tensors again. Selective-op (torchtitan's op-level policy, recompute_policy.hpp):
// a checkpointed block as under full, whose forwards keep the outputs the policy saves and
// whose recompute op runs only the rest. `training.recompute_layers` checkpoints that many
// blocks per chunk (full and selective-op). A recompute op waits for what the layer's backward
// waits for (StageContext::param_ready, set by the passes before this one: the copy back of an
// offloaded checkpoint, a fetch or gather of the layer's parameters, the K/V exchange). Under
// ZeRO-3 that is the gather of the block's last layer only; DeepSpeed's replay gathers every
// layer of the block in forward order (docs/zero3.md, "Not modelled").
#include <algorithm>

#include "sim/parallel/flash_core.hpp"
#include "sim/parallel/pass.hpp"
#include "sim/parallel/recompute_policy.hpp"
#include "sim/scenario/precision.hpp"

namespace trainsim::parallel {

namespace {

using scenario::Recompute;

constexpr std::string_view kKeys[] = {"training.recompute", "training.recompute_layers",
                                      "training.attention", "training.fp8_attention",
                                      "training.precision", "training.fp8_weight_cache",
                                      "parallel.context"};

class RecomputePass final : public LoweringPass {
 public:
  void prepare(LowerContext& L) override {
    const auto n = L.m.order.size();
    const auto& t = L.s.training;
    checkpointed_.assign(n, 0);
    policy_.clear();
    if (t.recompute == Recompute::selective_op) {
      const models::DType act = scenario::activation_dtype(t.precision);
      const int norm_bytes = scenario::autocast(t.precision) ? 4 : models::dtype_bytes(act);
      policy_ = op_policy(L.m, L.shards, L.tensor,
                          {act, t.flash_attention, t.eager_modules, norm_bytes, t.compile});
    }
    for (std::size_t i = 0; i < n; ++i) {
      checkpointed_[i] = checkpointed(L, static_cast<std::int32_t>(i));
      L.kept[i].checkpointed = checkpointed_[i] != 0;
      const auto& sh = L.shards[i];
      if (checkpointed_[i] && policy_.empty())
        L.kept[i].saved = {};
      else if (checkpointed_[i])  // what the policy keeps; the rest is re-created apart
        L.kept[i] = {policy_[i].kept, sh.saved - policy_[i].kept};
      else if (L.s.training.recompute == Recompute::selective)
        L.kept[i] = {sh.saved - sh.saved_core, sh.saved_core};
    }
  }

  void before_layer(StageContext& c, UnitStep& u, std::int32_t i) override {
    if (u.forward()) return;
    const LowerContext& L = c.L;
    const auto mb_samples = L.mb_samples;
    const LayerRange r = u.range;
    allocs_.clear();
    frees_.clear();
    // Replays before the backward that needs them.
    if (checkpointed_[i] && block_last(L, i, r)) {
      double flops = 0;
      core::Bytes bytes{};
      std::int32_t first = i;
      while (first > r.first && block_of(L, first - 1) == block_of(L, i)) --first;
      std::int32_t gemms = 0, launches = 0;
      for (std::int32_t k = first; k <= i; ++k) {
        const auto& sk = L.shards[k];
        launches += kernel_shape(sk.kind).forward_launches;
        if (casts_replayed(L, k))  // the replay's weight casts, kept to the layer's backward
          allocs_.push_back(activation(weight_casts(L, k), TensorKind::weight_cast, k));
        if (!policy_.empty()) {  // only what the policy did not keep runs again
          allocs_.push_back(activation(L.kept[k].core * mb_samples, TensorKind::core, k));
          flops += policy_[k].flops * mb_samples;
          bytes += policy_[k].bytes * mb_samples;
          gemms += policy_[k].gemms;
          launches -= policy_[k].saved_mm;
          continue;
        }
        allocs_.push_back(activation(sk.saved * mb_samples, TensorKind::saved, k));
        flops += sk.flops * mb_samples;
        bytes += sk.io * mb_samples + sk.dequant_traffic;  // the replay dequantizes again
        launches += sk.dequant_launches;
        gemms += sk.matmul ? kernel_shape(sk.kind).gemms : 0;
      }
      // The replayed forward runs the block's kernels (and its tensor-parallel collectives).
      Op op = compute_op(OpKind::recompute, i, u.microbatch(), u.chunk(), flops, bytes, true);
      if (policy_.empty())  // the replayed forwards' flash-attention kernels
        for (std::int32_t k = first; k <= i; ++k)
          add_flash_core(op, L.s, L.m.graph[L.m.order[k]],
                         L.shards[k].core_flops * double(mb_samples), false);
      op.model_flops = false;
      op.kernels = std::max(1, gemms);
      op.work.serial_memory = true;
      op.work.launches = std::max(1, launches);
      c.emit_compute(u, op, allocs_, frees_, c.ref_or_none(c.param_ready), first, i);
    }
    const auto& sh = L.shards[i];
    if (L.s.training.recompute == Recompute::selective && sh.saved_core.value > 0) {
      Op op = compute_op(OpKind::recompute, i, u.microbatch(), u.chunk(),
                         sh.core_flops * mb_samples, sh.saved_core * mb_samples, true);
      op.model_flops = false;
      allocs_.assign({activation(sh.saved_core * mb_samples, TensorKind::core, i)});
      c.emit_compute(u, op, allocs_, frees_, c.ref_or_none(c.param_ready), i + 1, i);
    }
  }

  // Full recomputation keeps one input per checkpointed block, from the forward of its first
  // layer to that layer's backward.
  void layer_op(StageContext& c, const UnitStep& u, LayerOp& lo) override {
    const std::int32_t i = lo.layer;
    if (!checkpointed_[i] || !block_first(c.L, i, u.range)) return;
    const MemEffect checkpoint = activation(checkpoint_bytes(c.L, i, u), TensorKind::checkpoint, i);
    (u.forward() ? lo.allocs : lo.frees).push_back(checkpoint);
  }

 private:
  // Layers whose saved activations full recomputation replaces by one checkpoint per block.
  static bool checkpointed(const LowerContext& L, std::int32_t i) {
    const auto& s = L.s;
    const models::Layer& l = L.m.graph[L.m.order[i]];
    const bool blocks = s.training.recompute == Recompute::full ||
                        s.training.recompute == Recompute::selective_op;
    if (!blocks || l.block < 0) return false;
    if (s.training.recompute_layers < 0) return true;
    // Count blocks from the chunk's first block (its first layer may sit outside the blocks:
    // the embedding).
    const auto& range = L.chunks[L.chunk_of[i]];
    int first_block = -1;
    for (std::int32_t k = range.first; k < range.end && first_block < 0; ++k)
      first_block = block_of(L, k);
    return l.block - first_block < s.training.recompute_layers;
  }
  static int block_of(const LowerContext& L, std::int32_t i) {
    return L.m.graph[L.m.order[i]].block;
  }
  static bool block_first(const LowerContext& L, std::int32_t i, const LayerRange& r) {
    return i == r.first || block_of(L, i - 1) != block_of(L, i);
  }
  static bool block_last(const LowerContext& L, std::int32_t i, const LayerRange& r) {
    return i + 1 == r.end || block_of(L, i + 1) != block_of(L, i);
  }
  // The received activation for the first layer of a later pipeline chunk, else the outputs
  // feeding the block.
  static core::Bytes checkpoint_bytes(const LowerContext& L, std::int32_t i, const UnitStep& u) {
    if (i == u.range.first && u.g > 0)
      return L.shards[L.chunks[u.g - 1].end - 1].output * L.mb_samples;
    core::Bytes b{};
    for (auto pr : L.producers[i]) b += L.shards[pr].output;
    return b * L.mb_samples;
  }

  std::vector<char> checkpointed_;
  std::vector<OpPolicyLayer> policy_;  // selective-op: per layer, else empty
  std::vector<MemEffect> allocs_, frees_;
};

}  // namespace

PassEntry recompute_pass() {
  return {"recompute", kKeys, {}, make_pass<RecomputePass>};
}

}  // namespace trainsim::parallel
