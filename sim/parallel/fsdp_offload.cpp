#include "sim/parallel/fsdp_offload.hpp"

#include "sim/parallel/offload.hpp"
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

using hw::MemCategory;

void place_fsdp_offload(StageContext& c) {
  Program& P = c.P;
  for (MemCategory k : {MemCategory::weights, MemCategory::gradients,
                        MemCategory::optimizer_states}) {
    P.host[k] = P.model_states[k];
    P.model_states[k] = {};
    P.persistent[k] = {};
  }
  P.paged = {};
  c.optimizer_on_host = true;
}

std::int32_t fetch_fsdp_shard(StageContext& c, const UnitStep& u, std::int32_t layer,
                              core::Bytes bytes, std::int32_t after, MemEffect& staged) {
  staged = tensor(MemCategory::weights, bytes,
                  u.forward() ? TensorKind::fetched : TensorKind::fetched_backward, layer);
  return c.B.emit(pcie_copy_op(OpKind::pcie_h2d, layer, u.microbatch(), u.chunk(), bytes),
                  {staged}, {}, {c.ref_or_none(after)});
}

std::int32_t copy_fsdp_grad_out(StageContext& c, const UnitStep& u, std::int32_t layer,
                                const MemEffect& reduced, core::Bytes to_host,
                                std::int32_t after) {
  return c.B.emit(pcie_copy_op(OpKind::pcie_d2h, layer, u.microbatch(), u.chunk(), to_host),
                  {}, {reduced}, {c.ref_or_none(after)});
}

std::int32_t fsdp_cpu_step(StageContext& c, std::int64_t params, std::int32_t after) {
  const scenario::TrainingSpec& t = c.L.s.training;
  const scenario::StateBytes b = scenario::fsdp_state_bytes(t.precision, t.optimizer);
  const core::Bytes traffic =
      core::Bytes{params} * (b.gradients + 2 * b.optimizer_states + 2 * b.weights);
  return c.B.emit(cpu_optimizer_op(traffic), {}, c.held_grads, {c.ref_or_none(after)});
}

}  // namespace trainsim::parallel
