// GEMM shapes (docs/gemm.md): every compute op of whole layers — a forward, a backward, a
// recomputation replaying a block's forwards — is given the GEMMs it runs on one device
// (layer_gemms), stored once per distinct run in Program::gemm_shapes. The player prices their
// tile and wave quantization on the program's device (exec/op_durations.cpp), so the shapes
// hold for any device: the device stays a plan setting.
#include <algorithm>

#include "sim/parallel/layer_gemms.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

constexpr std::string_view kKeys[] = {"model", "training.micro_batch", "training.seq_len",
                                      "parallel.tensor", "parallel.expert",
                                      "training.attention"};

class GemmPass final : public LoweringPass {
 public:
  void on_compute(StageContext& c, const ComputeOp& op) override {
    if (op.kind != OpKind::forward && op.kind != OpKind::backward &&
        op.kind != OpKind::recompute)
      return;
    const LowerContext& L = c.L;
    shapes_.clear();
    for (std::int32_t i = op.first; i <= op.last; ++i)
      if (L.shards[i].matmul)
        layer_gemms(L.m.graph[L.m.order[i]], L.tensor, L.mb_samples,
                    op.kind == OpKind::backward, shapes_, L.s.parallel.expert,
                    L.s.training.flash_attention);
    if (shapes_.empty()) return;
    const auto [begin, end] = intern(c.P);
    Op& o = c.P.ops[op.index];
    o.gemm_begin = begin;
    o.gemm_end = end;
  }

 private:
  // The run's place in the program's shapes, appended when not there yet.
  std::pair<std::uint32_t, std::uint32_t> intern(Program& P) {
    if (program_ != &P) {
      program_ = &P;
      runs_.clear();
    }
    for (const auto& [b, e] : runs_)
      if (e - b == shapes_.size() &&
          std::equal(shapes_.begin(), shapes_.end(), P.gemm_shapes.begin() + b))
        return {b, e};
    const auto b = static_cast<std::uint32_t>(P.gemm_shapes.size());
    P.gemm_shapes.insert(P.gemm_shapes.end(), shapes_.begin(), shapes_.end());
    runs_.emplace_back(b, static_cast<std::uint32_t>(P.gemm_shapes.size()));
    return runs_.back();
  }

  std::vector<cost::GemmShape> shapes_;
  const Program* program_ = nullptr;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> runs_;
};

}  // namespace

PassEntry gemm_pass() {
  return {"gemm", kKeys, {}, make_pass<GemmPass>};
}

}  // namespace trainsim::parallel
