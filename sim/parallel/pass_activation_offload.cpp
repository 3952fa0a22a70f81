// Activation offload (torchtune's OffloadActivations, a saved_tensors_hooks context around the
// model's forward; docs/finetuning.md "Activation offload"). Every tensor a layer's forward saves
// for its backward (with full recomputation: each block's checkpointed input), of at least
// 1024 bytes (min_offload_size), is copied to pinned host memory on a side stream (pcie_d2h) once
// the forward that made it ends; the GPU frees it when the copy ends. In backward the tensor is
// copied back (pcie_h2d) when autograd unpacks it, and the layer's backward (or its block's
// replay) waits for the copy (torchtune's unpack makes the compute stream wait: no prefetch).
// The host issues that copy on its own stream as soon as it has issued the backward before,
// which the GPU is then still running (kernel launches are asynchronous): a layer's saved
// tensors come back beside the previous layer's backward (the copy waits for the op before it),
// a block's checkpoint beside the previous block's replay and backward (the copy waits for the
// op before that replay). The loss with its LM head stays on the GPU: torchtune wraps the output linear in
// a NoOpManager and computes the loss outside the context. Host memory holds one micro-batch's
// offloaded tensors (Program::host, activations).
#include "sim/parallel/offload.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

constexpr std::string_view kKeys[] = {"training.activation_offload"};
constexpr std::int64_t kMinOffloadBytes = 1024;  // OffloadActivations' min_offload_size

class ActivationOffloadPass final : public LoweringPass {
 public:
  bool expands_units(const LowerContext& L) const override {
    return L.s.training.activation_offload;
  }

  // Its per-layer copies run on from a forward to the backward.
  bool copies_units(const LowerContext& L) const override { return !expands_units(L); }

  void begin_unit(StageContext&, UnitStep&) override { block_lead_ = -1; }

  void begin_stage(StageContext& c) override {
    const auto n = c.L.m.order.size();
    back_at_.assign(n, {});
    recorded_.assign(n, 0);
    copied_out_.assign(n, -1);
  }

  // After a forward: its saved tensors (and a block's checkpoint) go to the host.
  void after_layer(StageContext& c, UnitStep& u, std::int32_t i, std::int32_t op) override {
    const LowerContext& L = c.L;
    if (!L.s.training.activation_offload || !u.forward() || layer(L, i).kind == models::LayerKind::loss)
      return;
    out_.clear();
    core::Bytes bytes{};
    const Op& o = c.P.ops[op];
    for (auto k = o.alloc_begin; k < o.alloc_end; ++k) {
      const MemEffect& e = c.P.effects[k];
      if (e.layer != i || e.bytes.value < kMinOffloadBytes ||
          (e.tensor != TensorKind::saved && e.tensor != TensorKind::checkpoint))
        continue;
      out_.push_back(e);
      bytes += e.bytes;
    }
    if (out_.empty()) return;
    copied_out_[i] = c.B.emit(pcie_copy_op(OpKind::pcie_d2h, i, u.microbatch(), u.chunk(), bytes),
                              std::span<const MemEffect>{}, out_, {c.B.ref(op)});
    if (recorded_[i]) return;
    recorded_[i] = 1;
    c.P.host[hw::MemCategory::activations] += bytes;
    for (const MemEffect& e : out_)
      back_at_[e.tensor == TensorKind::checkpoint ? block_last(L, i, u.range) : i].push_back(e);
  }

  // Before a backward: what it (or the replay of its block) reads comes back first, once the
  // host has issued the backward before it (see the top) and the copies out of these tensors
  // ended.
  void before_layer(StageContext& c, UnitStep& u, std::int32_t i) override {
    if (!c.L.s.training.activation_offload || u.forward() || back_at_[i].empty()) return;
    core::Bytes bytes{};
    bool checkpoint = false;
    for (const MemEffect& e : back_at_[i]) {
      bytes += e.bytes;
      checkpoint = checkpoint || e.tensor == TensorKind::checkpoint;
    }
    // The host's lead: the previous block's replay began after the op before it (the unit's
    // first block has none in the unit: one layer, as for saved tensors).
    const OpRef issued =
        checkpoint && block_lead_ >= 0 ? c.B.ref(block_lead_) : c.prefetch_after();
    if (checkpoint) block_lead_ = c.recent[1];  // the op before this block's replay
    // At most two layers' tensors: this layer's saved ones and its block's checkpoint.
    const auto& back = back_at_[i];
    c.param_ready = c.B.emit(pcie_copy_op(OpKind::pcie_h2d, i, u.microbatch(), u.chunk(), bytes),
                             back, std::span<const MemEffect>{},
                             {issued, c.ref_or_none(copied_out_[back.front().layer]),
                              c.ref_or_none(copied_out_[back.back().layer])});
  }

 private:
  static const models::Layer& layer(const LowerContext& L, std::int32_t i) {
    return L.m.graph[L.m.order[i]];
  }
  // The last layer of layer i's block in the unit (where full recomputation replays it).
  static std::int32_t block_last(const LowerContext& L, std::int32_t i, const LayerRange& r) {
    const int b = layer(L, i).block;
    while (i + 1 < r.end && layer(L, i + 1).block == b) ++i;
    return i;
  }

  std::vector<std::vector<MemEffect>> back_at_;  // per layer: copied back before its backward
  std::vector<char> recorded_;
  std::vector<std::int32_t> copied_out_;  // per layer: its latest copy to the host
  std::vector<MemEffect> out_;
  std::int32_t block_lead_ = -1;  // the op before the unit's latest replayed block
};

}  // namespace

PassEntry activation_offload_pass() {
  return {"activation_offload", kKeys, {}, make_pass<ActivationOffloadPass>};
}

}  // namespace trainsim::parallel
