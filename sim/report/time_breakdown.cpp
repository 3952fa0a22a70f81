#include "sim/report/time_breakdown.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "sim/exec/player.hpp"

namespace trainsim::report {
namespace {

using parallel::CommPurpose;
using parallel::Op;
using parallel::OpKind;
using parallel::StreamKind;

// Compute kinds reported apart; a compute-stream op of another kind counts as "compute.other".
constexpr std::array<OpKind, 4> kComputeKinds = {OpKind::forward, OpKind::backward,
                                                 OpKind::recompute, OpKind::optimizer};

std::size_t compute_slot(OpKind k) {
  for (std::size_t i = 0; i < kComputeKinds.size(); ++i)
    if (kComputeKinds[i] == k) return i;
  return kComputeKinds.size();
}

struct Window {
  core::TimePoint a, b;
  CommPurpose purpose;
};

}  // namespace

TimeBreakdown time_breakdown(const parallel::Plan& plan, const exec::Timeline& tl) {
  TimeBreakdown out;
  out.step = tl.step_time;
  if (plan.programs.empty() || tl.devices.size() != plan.programs.size()) {
    out.parts.push_back({"idle", out.step});
    return out;
  }
  std::size_t last = 0;
  for (std::size_t p = 1; p < tl.devices.size(); ++p)
    if (tl.devices[p].end > tl.devices[last].end) last = p;
  const parallel::Program& P = plan.programs[last];
  const exec::DeviceTimeline& d = tl.devices[last];
  out.stage = P.stage;

  // Compute stream: kernels by kind, and the collectives run on it (tensor parallelism's inside
  // compute ops, and communication ops placed on the compute stream), all exposed.
  std::array<core::Duration, kComputeKinds.size() + 1> kernels{};
  std::array<core::Duration, parallel::kCommPurposes> exposed{};
  core::Duration contention{};  // compute ops' spans beyond their durations alone
  std::vector<std::pair<core::TimePoint, core::TimePoint>> busy;
  std::vector<Window> comm;
  for (std::size_t i = 0; i < P.ops.size() && i < d.start.size(); ++i) {
    const Op& op = P.ops[i];
    const core::Duration span = d.finish[i] - d.start[i];
    if (op.stream != StreamKind::compute) {
      if (op.purpose != CommPurpose::none) comm.push_back({d.start[i], d.finish[i], op.purpose});
      continue;
    }
    busy.emplace_back(d.start[i], d.finish[i]);
    if (op.arrival && i < d.arrival_end.size())  // a folded pipeline transfer, as the player timed it
      comm.push_back({d.arrival_start[i], d.arrival_end[i], CommPurpose::pipeline});
    if (op.purpose != CommPurpose::none && op.macro < 0) {
      exposed[static_cast<std::size_t>(op.purpose)] += span;
      continue;
    }
    if (op.macro >= 0) {
      const parallel::MacroTemplate& t = P.macros[static_cast<std::size_t>(op.macro)];
      core::Duration sum{};
      for (auto k = t.begin; k < t.end; ++k) {
        const Op& sub = P.macro_ops[k];
        const core::Duration tp = exec::tensor_parallel_time(plan, P, sub);
        const core::Duration whole = exec::op_duration(plan, P, sub);
        kernels[compute_slot(sub.kind)] += whole - tp;
        exposed[static_cast<std::size_t>(CommPurpose::tensor)] += tp;
        sum += whole;
      }
      // The macro op's span is its ops back to back; anything else is the first kind's.
      if (span != sum && t.end > t.begin)
        kernels[compute_slot(P.macro_ops[t.begin].kind)] += span - sum;
      continue;
    }
    const core::Duration tp = exec::tensor_parallel_time(plan, P, op);
    // Under cluster.collective_sms (no macro ops then) a compute op may outlast its duration
    // alone: the collectives beside it held SMs (exec/player.cpp).
    const core::Duration slowed =
        plan.collective_sms > 0 ? span - exec::op_duration(plan, P, op) : core::Duration{};
    kernels[compute_slot(op.kind)] += span - tp - slowed;
    contention += slowed;
    exposed[static_cast<std::size_t>(CommPurpose::tensor)] += tp;
  }

  // Idle compute stream: split by the communication running then (the lowest purpose when
  // several run at once), the rest idle. A sweep over every boundary.
  struct Edge {
    core::TimePoint t;
    int kind;  // -1 compute, else purpose index
    int delta;
  };
  // Edges in time order, merged from three runs that are each already in order but for rare
  // exceptions (sorted then): the compute stream's starts and ends (its ops run one after
  // another), the windows' starts and their ends. Edges of one instant may come in any order:
  // the sweep applies all of them before it accounts the next stretch.
  auto by_time = [](const Edge& x, const Edge& y) { return x.t < y.t; };
  auto in_order = [&](std::vector<Edge>& run) {
    if (!std::is_sorted(run.begin(), run.end(), by_time))
      std::sort(run.begin(), run.end(), by_time);
  };
  std::vector<Edge> computing_edges, starts, ends, merged, edges;
  computing_edges.reserve(2 * busy.size());
  for (const auto& [a, b] : busy) {
    computing_edges.push_back({a, -1, +1});
    computing_edges.push_back({b, -1, -1});
  }
  starts.reserve(comm.size());
  ends.reserve(comm.size());
  for (const Window& w : comm) {
    if (!(w.a < w.b)) continue;
    const int k = static_cast<int>(w.purpose);
    starts.push_back({w.a, k, +1});
    ends.push_back({w.b, k, -1});
  }
  in_order(computing_edges);
  in_order(starts);
  in_order(ends);
  merged.resize(computing_edges.size() + starts.size());
  std::merge(computing_edges.begin(), computing_edges.end(), starts.begin(), starts.end(),
             merged.begin(), by_time);
  edges.resize(merged.size() + ends.size());
  std::merge(merged.begin(), merged.end(), ends.begin(), ends.end(), edges.begin(), by_time);
  const core::TimePoint end = core::TimePoint{} + out.step;
  int computing = 0;
  std::array<int, parallel::kCommPurposes> active{};
  core::TimePoint at{};
  std::size_t e = 0;
  auto account = [&](core::TimePoint to) {
    to = std::min(to, end);
    if (!(at < to)) return;
    if (computing == 0) {
      std::size_t k = 0;
      while (k < active.size() && active[k] == 0) ++k;
      if (k < active.size()) exposed[k] += to - at;
    }
    at = to;
  };
  while (e < edges.size()) {
    account(edges[e].t);
    const core::TimePoint t = edges[e].t;
    for (; e < edges.size() && edges[e].t == t; ++e) {
      if (edges[e].kind < 0) computing += edges[e].delta;
      else active[static_cast<std::size_t>(edges[e].kind)] += edges[e].delta;
    }
  }
  account(end);

  for (std::size_t i = 0; i < kComputeKinds.size(); ++i)
    if (kernels[i].ns != 0)
      out.parts.push_back({"compute." + std::string(parallel::to_string(kComputeKinds[i])), kernels[i]});
  if (kernels.back().ns != 0) out.parts.push_back({"compute.other", kernels.back()});
  if (contention.ns != 0) out.parts.push_back({"contention", contention});
  for (std::size_t k = 0; k < exposed.size(); ++k)
    if (exposed[k].ns != 0)
      out.parts.push_back(
          {"exposed_comm." + std::string(parallel::to_string(static_cast<CommPurpose>(k))), exposed[k]});
  // The rest: the compute stream idle with no communication running (bubble, waiting).
  core::Duration placed{};
  for (const TimePart& t : out.parts) placed += t.time;
  const core::Duration idle = out.step - placed;
  if (idle.ns != 0) out.parts.push_back({"idle", idle});
  return out;
}

}  // namespace trainsim::report
