// Stragglers (cluster.jitter; docs/scale.md): every program's compute lasts the expected maximum
// over the ranks it stands for — its data and tensor replicas, which meet at every data-parallel,
// ZeRO and tensor-parallel collective — of their per-rank times (cost::straggler_factor).
#include "sim/cost/jitter.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

constexpr std::string_view kKeys[] = {"cluster.jitter"};

class JitterPass final : public LoweringPass {
 public:
  void finish(const LowerContext& L, Plan& plan) override {
    const cost::Jitter& j = L.s.cluster.jitter;
    if (j.cv == 0) return;
    for (Program& P : plan.programs) P.straggler = cost::straggler_factor(j, P.count);
  }
};

}  // namespace

PassEntry jitter_pass() { return {"jitter", kKeys, {}, make_pass<JitterPass>, nullptr}; }

}  // namespace trainsim::parallel
