// Devices and links: each stage's device (parallel.stage_devices, else the scenario's), its
// reserved memory (booked before the step, a model state), and the links collectives use. None
// of them shapes the ops, so a lowered plan serves every device and link once these are set
// again (apply_settings; the sweep reuses plans across such points, sim/sweep/runner.cpp).
#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

// The pods (cluster.pod_nodes) shape each group's CommWork::pod_members (topology.cpp); their
// uplinks' oversubscription prices the groups that span them (Plan::oversubscription).
// cluster.collective_sms keeps every unit expanded (no macro ops), so it shapes the plan too.
constexpr std::string_view kKeys[] = {"parallel.stage_devices", "cluster.pod_nodes",
                                      "cluster.oversubscription", "cluster.collective_sms"};
constexpr std::string_view kSettings[] = {"device", "cluster.intra_node", "cluster.inter_node"};

class DevicesPass final : public LoweringPass {
 public:
  // Contention (Plan::collective_sms) times each op by what runs beside it when it runs, so the
  // ops of a unit cannot share one macro op's profile: every unit stays expanded (as ZeRO-3's),
  // which the steady-state skip still shortens.
  bool expands_units(const LowerContext& L) const override {
    return L.s.cluster.collective_sms > 0;
  }
  bool repeats(const StageContext& c, const UnitStep&) const override {
    return c.L.s.cluster.collective_sms <= 0;
  }
  void finish(const LowerContext& L, Plan& plan) override {
    plan.oversubscription = L.s.cluster.oversubscription;
    plan.collective_sms = static_cast<int>(L.s.cluster.collective_sms);
  }
  static void apply_settings(Plan& plan, const scenario::Scenario& s) {
    plan.intra_node = s.cluster.intra_node;
    plan.inter_node = s.cluster.inter_node;
    for (auto& P : plan.programs) {
      P.device = s.stage_device(P.stage);
      P.persistent[hw::MemCategory::reserved] = P.device.reserved;
      P.model_states[hw::MemCategory::reserved] = P.device.reserved;
    }
  }
};

}  // namespace

PassEntry devices_pass() {
  return {"devices", kKeys, kSettings, make_pass<DevicesPass>, DevicesPass::apply_settings};
}

}  // namespace trainsim::parallel
