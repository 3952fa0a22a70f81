// Op durations: each op's cost (roofline or alpha-beta), costed once per duration class, and
// the macro templates' profiles, kept in the plan digest for the plan's next plays.

#include "sim/cost/congestion.hpp"
#include "sim/cost/contention.hpp"
#include "sim/cost/nccl.hpp"
#include "sim/exec/player_internal.hpp"
#include "sim/exec/tp_overlap.hpp"

namespace trainsim::exec {
namespace {

// The link a group spanning nodes sees: its NICs' share (cost::spanning_link), and where it
// spans pods, what the oversubscribed uplinks leave it (cost::congested_link, docs/scale.md).
hw::LinkSpec group_link(const Plan& plan, const parallel::CommWork& w) {
  const hw::LinkSpec link = cost::spanning_link(plan.intra_node, plan.inter_node, w.ranks_per_node);
  if (w.pod_members == 0) return link;
  return cost::congested_link(link, plan.inter_node, w.pod_members, plan.oversubscription);
}

// A collective inside a node as NCCL runs it (cost::nccl_best). A group spanning nodes keeps
// the alpha-beta formulas over the spanning link, every step at the network's latency: NCCL's
// model, which charges NVLink latency to a ring's steps inside the nodes and picks trees across
// them, predicts the cross-node tensor-parallel rows of vTrain's table 5-16% too fast
// (docs/collectives.md, "Groups across nodes"). Across pods the link is congested (group_link).
core::Duration nccl(const Plan& plan, cost::NcclColl coll, const parallel::CommWork& w,
                    std::optional<cost::CollectiveAlgo> only = std::nullopt) {
  if (w.inter_node) {
    const hw::LinkSpec link = group_link(plan, w);
    switch (coll) {
      case cost::NcclColl::all_reduce:
        return cost::all_reduce_time(w.bytes, w.ranks, link, only.value_or(cost::CollectiveAlgo::ring));
      case cost::NcclColl::reduce_scatter:
        return cost::reduce_scatter_time(w.bytes, w.ranks, link);
      case cost::NcclColl::all_gather:
        return cost::all_gather_time(w.bytes, w.ranks, link);
    }
  }
  return cost::nccl_best(coll, w.bytes, {w.ranks, 1}, plan.intra_node, plan.intra_node, only).time;
}

}  // namespace

core::Duration tp_collective_time(const Plan& plan, cost::NcclColl coll, const parallel::CommWork& w) {
  return nccl(plan, coll, w);
}

core::Duration tensor_parallel_time(const Plan& plan, const Program& program, const Op& op) {
  if (op.tp_collectives == 0) return {};
  // Under parallel.tp_comm_overlap only what the GEMMs do not hide (exec/tp_overlap.cpp).
  if (op.tp_overlap != parallel::TpOverlap::none)
    return std::max(core::Duration{}, overlapped_tp_time(plan, program, op));
  const core::Duration one =
      op.tp_sequence_parallel ? nccl(plan, cost::NcclColl::reduce_scatter, op.comm) +
                                    nccl(plan, cost::NcclColl::all_gather, op.comm)
                              : nccl(plan, cost::NcclColl::all_reduce, op.comm);
  return one * op.tp_collectives;
}

namespace {

// A compute op on `device` (the program's, or what a collective beside it leaves: contention.hpp).
core::Duration compute_duration(const Plan& plan, const Program& program, const Op& op,
                                const hw::DeviceSpec& device) {
  // The tensor-parallel collectives run on the compute stream after the kernels; the host
  // issues them asynchronously too, so its dispatch overlaps them (docs/devices.md).
  const core::Duration tp = tensor_parallel_time(plan, program, op);
  const int tp_launches = op.tp_collectives * (op.tp_sequence_parallel ? 2 : 1);
  cost::KernelWork work = op.work;
  if (op.gemm_end > op.gemm_begin)
    work.shape_efficiency = cost::gemms_efficiency(
        std::span(program.gemm_shapes).subspan(op.gemm_begin, op.gemm_end - op.gemm_begin),
        device.sm_count);
  // Under cluster.jitter the kernels last until the slowest of the program's ranks is done.
  core::Duration kernels = cost::device_time(work, device, plan.math, op.kernels);
  if (program.straggler != 1)
    kernels = core::duration_from_seconds(core::to_seconds(kernels) * program.straggler);
  return std::max(kernels + tp, cost::host_time(work, device, op.kernels,
                                                op.tp_collectives > 0 ? tp_launches : 0));
}

}  // namespace

bool is_compute(OpKind k) {
  return k == OpKind::forward || k == OpKind::backward || k == OpKind::recompute ||
         k == OpKind::optimizer;
}

bool takes_sms(OpKind k) {
  return k == OpKind::all_reduce || k == OpKind::reduce_scatter || k == OpKind::all_gather ||
         k == OpKind::all_to_all;
}

core::Duration contended_op_duration(const Plan& plan, const Program& program, const Op& op) {
  if (!is_compute(op.kind) || plan.collective_sms <= 0) return op_duration(plan, program, op);
  return compute_duration(plan, program, op,
                          cost::beside_collective(program.device, plan.collective_sms));
}

core::Duration op_duration(const Plan& plan, const Program& program, const Op& op) {
  switch (op.kind) {
    case OpKind::forward:
    case OpKind::backward:
    case OpKind::recompute:
    case OpKind::optimizer:
      return compute_duration(plan, program, op, program.device);
    case OpKind::p2p:
    case OpKind::all_reduce:
    case OpKind::reduce_scatter:
    case OpKind::all_gather:
    case OpKind::all_to_all: {
      const hw::LinkSpec link = op.comm.inter_node ? group_link(plan, op.comm) : plan.intra_node;
      if (op.kind == OpKind::p2p)
        return cost::p2p_time(op.comm.bytes, link) +
               cost::all_gather_time(op.comm.bytes * op.comm.gather_ranks, op.comm.gather_ranks,
                                     plan.intra_node);
      if (op.kind == OpKind::all_reduce)
        // Lowering marks the all-reduces parallel.allreduce may force (Op::data_reduction);
        // NCCL chooses for the others, as for the tensor-parallel ones folded into compute ops.
        return nccl(plan, cost::NcclColl::all_reduce, op.comm,
                    op.data_reduction ? plan.data_allreduce : std::nullopt);
      if (op.kind == OpKind::reduce_scatter)
        return nccl(plan, cost::NcclColl::reduce_scatter, op.comm);
      // All-to-all is grouped sends and receives in NCCL, outside its collective tuning model;
      // across nodes each rank's messages to other nodes leave through its own NIC, and those
      // to other pods through the pod's shared uplinks too.
      if (op.kind == OpKind::all_to_all)
        return op.comm.inter_node
                   ? cost::all_to_all_across_pods(op.comm.bytes, op.comm.ranks,
                                                  op.comm.ranks_per_node, op.comm.pod_members,
                                                  plan.intra_node, plan.inter_node,
                                                  plan.oversubscription)
                   : cost::all_to_all_time(op.comm.bytes, op.comm.ranks, link);
      return nccl(plan, cost::NcclColl::all_gather, op.comm);
    }
    case OpKind::pcie_h2d:
    case OpKind::pcie_d2h:
      return cost::p2p_time(op.comm.bytes, plan.pcie);
    case OpKind::cpu_optimizer:
      return op.work.bytes / plan.host_bandwidth_per_gpu;
  }
  return {};
}

inline MacroProfile Player::profile(const Program& P, const parallel::MacroTemplate& t,
                                    DurationTable& memo, DurationTable& tp_memo) const {
  MacroProfile m;
  const std::uint32_t n = t.end - t.begin;
  m.offset.reserve(n);
  m.kernel.reserve(n);
  m.kernel_before.reserve(n + 1);
  m.kernel_before.assign(1, core::Duration{});
  m.level.reserve(n + 1);
  m.level.assign(1, hw::MemBreakdown{});
  hw::MemBreakdown now;
  for (auto k = t.begin; k < t.end; ++k) {
    const Op& op = P.macro_ops[k];
    const WorkKey key = work_key(op);
    auto [d, inserted] = memo.find_or_add(key);
    if (inserted) *d = op_duration(plan, P, op);
    const core::Duration whole = *d;
    core::Duration tp{};
    if (op.tp_collectives > 0) {
      auto [t, fresh] = tp_memo.find_or_add(key);
      if (fresh) *t = tensor_parallel_time(plan, P, op);
      tp = *t;
    }
    m.offset.push_back(m.total);
    m.kernel.push_back(whole - tp);
    m.kernel_before.push_back(m.kernel_before.back() + m.kernel.back());
    m.total += whole;
    m.tp += tp;
    if (k > t.begin) {
      const Op& prev = P.macro_ops[k - 1];
      for (auto e = prev.free_begin; e < prev.free_end; ++e)
        now[P.effects[e].category] -= P.effects[e].bytes;
    }
    for (auto e = op.alloc_begin; e < op.alloc_end; ++e)
      now[P.effects[e].category] += P.effects[e].bytes;
    m.level.push_back(now);
  }
  const Op& last = P.macro_ops[t.end - 1];
  for (auto e = last.free_begin; e < last.free_end; ++e)
    now[P.effects[e].category] -= P.effects[e].bytes;
  m.net = now;
  m.level_total.reserve(m.level.size());
  for (const auto& l : m.level) m.level_total.push_back(l.total());
  m.build_highest();
  return m;
}

inline bool Player::kept_profiles_fit() const {
  if (!opt.plan_digest || !opt.plan_digest->profiles) return false;
  const PlayProfiles& k = *opt.plan_digest->profiles;
  if (k.profiles.size() != plan.programs.size() || k.math != plan.math ||
      !cost::same_link_speed(k.intra_node, plan.intra_node))
    return false;
  if (!k.intra_node_only &&
      (!cost::same_link_speed(k.inter_node, plan.inter_node) ||
       !cost::same_link_speed(k.pcie, plan.pcie) || k.data_allreduce != plan.data_allreduce ||
       !(k.host_bandwidth_per_gpu == plan.host_bandwidth_per_gpu) ||
       k.oversubscription != plan.oversubscription))
    return false;
  for (std::size_t p = 0; p < plan.programs.size(); ++p)
    if (!cost::same_kernel_speed(k.devices[p], plan.programs[p].device)) return false;
  return true;
}

void Player::keep_profiles() {
  if (!opt.plan_digest) return;
  auto& kept = opt.plan_digest->profiles;
  if (!kept) kept = std::make_shared<PlayProfiles>();
  PlayProfiles& k = *kept;
  if (profiles_reused) {  // costed for what it says already
    k.profiles = std::move(profiles);
    return;
  }
  k.devices.clear();
  k.intra_node_only = true;
  ++k.generation;
  for (const Program& P : plan.programs) {
    k.devices.push_back(P.device);
    for (const Op& op : P.macro_ops) {
      if (!is_compute(op.kind) || (op.tp_collectives > 0 && op.comm.inter_node)) k.intra_node_only = false;
    }
  }
  k.math = plan.math;
  k.intra_node = plan.intra_node;
  k.inter_node = plan.inter_node;
  k.pcie = plan.pcie;
  k.data_allreduce = plan.data_allreduce;
  k.host_bandwidth_per_gpu = plan.host_bandwidth_per_gpu;
  k.oversubscription = plan.oversubscription;
  k.profiles = std::move(profiles);
}

void Player::compute_durations() {
  const std::size_t ops = waiting.size();
  if (opt.plan_digest) {
    auto& kept = opt.plan_digest->layout;
    if (!kept) kept = std::make_shared<const PlayLayout>(make_layout(plan, *graph, ops));
    layout = kept;
  } else {
    layout = std::make_shared<const PlayLayout>(make_layout(plan, *graph, ops));
  }
  fine_first = layout->fine_first;
  end_key = layout->end_key;
  arrival_from = layout->arrival_from;
  work_class = layout->work_class;
  transfer_class = layout->transfer_class;
  records = read_event_ops();
  event_ops = layout->event_ops;
  const bool reuse = kept_profiles_fit();
  profiles_reused = reuse;
  if (reuse)
    profiles = std::move(opt.plan_digest->profiles->profiles);
  else
    profiles.assign(plan.programs.size(), {});
  DurationTable& memo = spare_memos().memo;
  DurationTable& tp_memo = spare_memos().tp_memo;
  const bool contention = plan.collective_sms > 0;
  // Each class once: the work classes on their program's device, the templates by profile.
  const std::vector<std::uint32_t>& class_op = layout->class_op;
  class_time.resize(layout->templates + class_op.size());
  class_beside.assign(contention ? class_time.size() : 0, core::Duration{});
  class_takes_sms.assign(contention ? class_time.size() : 0, 0);
  for (std::size_t c = 0; c < class_op.size(); ++c) {
    std::int32_t prog, idx;
    const Op& op = op_at(class_op[c], prog, idx);
    const std::size_t k = layout->templates + c;
    class_time[k] = op_duration(plan, plan.programs[prog], op);
    if (!contention) continue;
    class_beside[k] = contended_op_duration(plan, plan.programs[prog], op);
    class_takes_sms[k] = takes_sms(op.kind) ? 1 : 0;
  }
  for (std::size_t p = 0; p < plan.programs.size(); ++p) {
    const Program& P = plan.programs[p];
    if (!reuse) {
      memo.clear();
      tp_memo.clear();
      for (const auto& t : P.macros) profiles[p].push_back(profile(P, t, memo, tp_memo));
    }
    // (a plan under contention has no macro ops, pass_devices.cpp: no template is beside)
    for (std::size_t t = 0; t < P.macros.size(); ++t)
      class_time[layout->template_base[p] + t] = profiles[p][t].total;
  }
  // The folded transfers, a class (equal CommWork in one program) at a time.
  transfer_time.resize(layout->transfer_op.size());
  for (std::size_t c = 0; c < layout->transfer_op.size(); ++c) {
    std::int32_t p, idx;
    Op transfer = op_at(layout->transfer_op[c], p, idx);
    transfer.kind = OpKind::p2p;
    transfer.macro = -1;
    transfer.kernels = 1;
    transfer.work = {};
    transfer_time[c] = op_duration(plan, plan.programs[p], transfer);
  }
}

}  // namespace trainsim::exec
