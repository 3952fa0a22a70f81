#include "sim/report/summary.hpp"

#include <algorithm>
#include <array>

#include "sim/cost/all_to_all.hpp"
#include "sim/cost/congestion.hpp"

namespace trainsim::report {

namespace {
// Per kind, the largest slowdown the pods' shared uplinks give one of its collectives: a ring's
// or tree's link (cost::congestion_factor; also ring attention's exchanges, point-to-point steps
// of a ring), an all-to-all's uplink bound over its node bound.
std::array<double, parallel::kCommPurposes> congestion_by_kind(const parallel::Plan& plan) {
  std::array<double, parallel::kCommPurposes> worst;
  worst.fill(1.0);
  // Full bisection above the pods leaves every link as it is (no op needs a look).
  if (plan.oversubscription <= 1) return worst;
  const auto visit = [&](const parallel::Op& op) {
    const parallel::CommWork& w = op.comm;
    if (w.pod_members == 0) return;
    const bool tensor = op.tp_collectives > 0;
    double f = 1;
    if (op.kind == parallel::OpKind::all_to_all) {
      const double node = core::to_seconds(cost::all_to_all_across_nodes(
          w.bytes, w.ranks, w.ranks_per_node, plan.intra_node, plan.inter_node));
      const double pods = core::to_seconds(cost::all_to_all_across_pods(
          w.bytes, w.ranks, w.ranks_per_node, w.pod_members, plan.intra_node, plan.inter_node,
          plan.oversubscription));
      if (node > 0) f = pods / node;
    } else {
      f = cost::congestion_factor(cost::spanning_link(plan.intra_node, plan.inter_node, w.ranks_per_node),
                                  plan.inter_node, w.pod_members, plan.oversubscription);
    }
    auto& slot = worst[static_cast<std::size_t>(tensor ? parallel::CommPurpose::tensor : op.purpose)];
    slot = std::max(slot, f);
  };
  for (const auto& P : plan.programs) {
    for (const auto& op : P.ops) visit(op);
    for (const auto& op : P.macro_ops) visit(op);
  }
  return worst;
}

std::string layer_name(const scenario::Scenario& s, std::int32_t layer) {
  if (layer < 0 || layer >= static_cast<std::int32_t>(s.model.order.size())) return "";
  return s.model.graph[s.model.order[layer]].name;
}

double peak_rate(const hw::DeviceSpec& d, scenario::Precision p) {
  if (p == scenario::Precision::fp32) return d.peak_fp32.per_s;
  return d.peak_16bit.per_s;
}
}  // namespace

std::string describe_op(const scenario::Scenario& s, parallel::OpKind kind, std::int32_t layer,
                        std::int32_t microbatch) {
  std::string out(parallel::to_string(kind));
  const std::string name = layer_name(s, layer);
  if (!name.empty()) out += " of " + name;
  if (microbatch >= 0) out += ", micro-batch " + std::to_string(microbatch);
  return out;
}

std::string device_kinds(const Summary& r) {
  bool mixed = false;
  for (const auto& d : r.devices) mixed = mixed || (!d.device.empty() && d.device != r.device_name);
  if (!mixed) return r.device_name;
  std::string kinds = "mixed (";
  for (const auto& d : r.devices)
    kinds += (d.stage ? ", " : "") + std::string("stage ") + std::to_string(d.stage) + " " + d.device;
  return kinds + ")";
}

Summary summarize(const scenario::Scenario& s, const parallel::Plan& plan,
                  const exec::Timeline& tl, bool all_ooms) {
  Summary r;
  r.name = s.name;
  r.file = s.file;
  r.model_name = s.model.name;
  r.parameters = s.model.parameters();
  r.trainable_parameters = scenario::trainable_parameters(s.model, s.training.lora);
  r.sequence_model = s.model.sequence_model;
  r.device_name = s.device.name;
  r.devices_total = plan.devices_total;
  r.training = s.training;
  r.parallel = s.parallel;
  r.all_ooms = all_ooms;
  r.events = tl.events;
  r.step_time_s = core::to_seconds(tl.step_time);
  if (r.step_time_s > 0) {
    r.samples_per_s = static_cast<double>(plan.samples) / r.step_time_s;
    r.tokens_per_s = static_cast<double>(plan.tokens) / r.step_time_s;
    // Peak FLOPs of every device over the step: stages may run on different devices
    // (parallel.stage_devices), so count devices per distinct peak, then sum count x peak.
    std::vector<std::pair<double, std::int64_t>> by_peak;
    for (const auto& P : plan.programs) {
      const double peak = peak_rate(P.device, s.training.precision);
      auto it = std::find_if(by_peak.begin(), by_peak.end(), [&](const auto& e) { return e.first == peak; });
      if (it == by_peak.end()) by_peak.emplace_back(peak, P.count);
      else it->second += P.count;
    }
    double peak_sum = 0;
    for (const auto& [peak, count] : by_peak) peak_sum += static_cast<double>(count) * peak;
    if (by_peak.empty()) peak_sum = static_cast<double>(plan.devices_total) * peak_rate(s.device, s.training.precision);
    const double capacity_flops = peak_sum * r.step_time_s;
    r.mfu = plan.model_flops / capacity_flops;
    r.hfu = plan.hardware_flops / capacity_flops;
  }
  // Bubble: idle share of each stage's compute stream over the forward/backward phase.
  const double span = core::to_seconds(tl.pipeline_end);
  double idle = 0;
  for (std::size_t p = 0; p < plan.programs.size(); ++p) {
    const parallel::Program& P = plan.programs[p];
    const exec::DeviceTimeline& d = tl.devices[p];
    DeviceSummary ds;
    ds.id = P.stage;
    ds.stage = P.stage;
    ds.count = P.count;
    ds.device = P.device.name;
    ds.layers = layer_name(s, P.first_layer) + " .. " + layer_name(s, P.last_layer);
    ds.parameters = P.parameters;
    ds.capacity = d.capacity;
    ds.peak = d.peak;
    ds.peak_breakdown = d.at_peak;
    ds.allocated_peak = d.allocated_peak;
    ds.reserved_peak = d.reserved_peak;
    ds.model_states = P.model_states;
    ds.compute_busy_s = core::to_seconds(d.compute_busy);
    ds.contention_s = core::to_seconds(d.contention);
    ds.fits = d.fits;
    ds.host = P.host;
    ds.optimizer_spilled = d.paged_spill;
    r.optimizer_spilled = std::max(r.optimizer_spilled, d.paged_spill);
    r.fits = r.fits && d.fits;
    r.peak = std::max(r.peak, d.peak);
    r.allocated_peak = std::max(r.allocated_peak, d.allocated_peak);
    r.reserved_peak = std::max(r.reserved_peak, d.reserved_peak);
    if (span > 0) idle += (span - core::to_seconds(d.pipeline_busy)) / span;
    r.devices.push_back(ds);
  }
  r.host_per_node = plan.host_per_node;
  r.host_capacity = plan.host_capacity;
  r.host_fits = tl.host_fits;
  r.fits = r.fits && tl.host_fits;
  r.bubble_fraction = plan.programs.empty() ? 0 : idle / static_cast<double>(plan.programs.size());
  for (const auto& o : tl.ooms) {
    OomSummary os;
    os.device = o.program;
    os.time_s = core::to_seconds(o.time);
    os.op = o.op >= 0                                 ? std::string(parallel::to_string(o.kind))
            : o.cause == exec::OomCause::host_memory ? "host_states"
                                                     : "model_states";
    os.layer = layer_name(s, o.layer);
    os.microbatch = o.microbatch;
    os.category = std::string(hw::to_string(o.category));
    os.requested = o.requested;
    os.in_use = o.in_use.total();
    os.in_use_breakdown = o.in_use;
    os.capacity = o.capacity;
    os.segment = o.segment;
    os.cause = std::string(exec::to_string(o.cause));
    r.ooms.push_back(os);
  }
  r.ooms_dropped = tl.ooms_dropped;
  // Communication per device: the stages' totals averaged over the stages.
  const double stages = plan.programs.empty() ? 1.0 : static_cast<double>(plan.programs.size());
  const auto congestion = congestion_by_kind(plan);
  for (const auto& [purpose, c] : tl.comm)
    r.comm.push_back({std::string(parallel::to_string(purpose)), core::to_seconds(c.time) / stages,
                      core::to_seconds(c.exposed) / stages,
                      congestion[static_cast<std::size_t>(purpose)]});
  r.time_breakdown = time_breakdown(plan, tl);
  return r;
}

}  // namespace trainsim::report
