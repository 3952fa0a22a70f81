#include "sim/exec/player.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "sim/core/error.hpp"
#include "sim/core/event_queue.hpp"
#include "sim/exec/dependency_graph.hpp"

namespace trainsim::exec {

using parallel::Op;
using parallel::OpKind;
using parallel::Plan;
using parallel::Program;
using parallel::StreamKind;

std::string_view to_string(OomCause c) {
  switch (c) {
    case OomCause::model_states: return "model_states";
    case OomCause::activations: return "activations";
    case OomCause::host_memory: return "host_memory";
  }
  return "?";
}

core::Duration tensor_parallel_time(const Plan& plan, const Op& op) {
  if (op.tp_collectives == 0) return {};
  const hw::LinkSpec link = op.comm.inter_node
                               ? cost::spanning_link(plan.intra_node, plan.inter_node, op.comm.ranks_per_node)
                               : plan.intra_node;
  const core::Duration one =
      op.tp_sequence_parallel
          ? cost::reduce_scatter_time(op.comm.bytes, op.comm.ranks, link) +
                cost::all_gather_time(op.comm.bytes, op.comm.ranks, link)
          : cost::all_reduce_time(op.comm.bytes, op.comm.ranks, link);
  return one * op.tp_collectives;
}

core::Duration op_duration(const Plan& plan, const Program& program, const Op& op) {
  switch (op.kind) {
    case OpKind::forward:
    case OpKind::backward:
    case OpKind::recompute:
    case OpKind::optimizer:
      return cost::kernel_time(op.work, program.device, plan.math, op.kernels) +
             tensor_parallel_time(plan, op);
    case OpKind::p2p:
    case OpKind::all_reduce:
    case OpKind::reduce_scatter:
    case OpKind::all_gather: {
      const hw::LinkSpec link = op.comm.inter_node
                                   ? cost::spanning_link(plan.intra_node, plan.inter_node, op.comm.ranks_per_node)
                                   : plan.intra_node;
      if (op.kind == OpKind::p2p)
        return cost::p2p_time(op.comm.bytes, link) +
               cost::all_gather_time(op.comm.bytes * op.comm.gather_ranks, op.comm.gather_ranks, plan.intra_node);
      if (op.kind == OpKind::all_reduce) {
        // Stream all-reduces are data-parallel gradient reductions (tensor-parallel ones are
        // folded into compute ops above and stay ring).
        const cost::CollectiveAlgo algo =
            op.purpose == parallel::CommPurpose::data ? plan.data_allreduce : cost::CollectiveAlgo::ring;
        return cost::all_reduce_time(op.comm.bytes, op.comm.ranks, link, algo);
      }
      if (op.kind == OpKind::reduce_scatter) return cost::reduce_scatter_time(op.comm.bytes, op.comm.ranks, link);
      return cost::all_gather_time(op.comm.bytes, op.comm.ranks, link);
    }
    case OpKind::pcie_h2d:
    case OpKind::pcie_d2h:
      return cost::p2p_time(op.comm.bytes, plan.pcie);
    case OpKind::cpu_optimizer:
      return op.work.bytes / plan.host_bandwidth_per_gpu;
  }
  return {};
}

namespace {

struct Player {
  const Plan& plan;
  const PlayOptions& opt;
  Timeline tl;
  std::vector<hw::MemoryLedger> ledgers;
  std::vector<std::uint32_t> offset;     // first global id of each program
  std::vector<std::int32_t> program_of;  // global id -> program
  std::vector<std::uint32_t> waiting;    // unfinished predecessors per op
  std::vector<std::uint32_t> succ_begin, succ;  // CSR successor lists
  std::vector<char> done;
  std::vector<core::Duration> duration;  // per op, computed once (memoised by work)
  core::EventQueue<std::uint32_t> queue;
  std::vector<char> oom_seen;

  Player(const Plan& p, const PlayOptions& o) : plan(p), opt(o) {}

  const Op& op_at(std::uint32_t id, std::int32_t& prog, std::int32_t& idx) const {
    prog = program_of[id];
    idx = static_cast<std::int32_t>(id - offset[prog]);
    return plan.programs[prog].ops[idx];
  }

  void book(std::int32_t prog, std::int32_t idx, const Op* op, hw::MemCategory cat, core::Bytes b,
            core::TimePoint now) {
    hw::MemoryLedger& led = ledgers[prog];
    const hw::MemBreakdown before = led.current();
    const bool fits = led.allocate(cat, b, /*book_anyway=*/true);
    if (fits) return;
    tl.devices[prog].fits = false;
    const bool first_here = !oom_seen[prog];
    oom_seen[prog] = 1;
    if (!first_here && !opt.all_ooms) return;
    if (tl.ooms.size() >= opt.max_oom_points) {
      ++tl.ooms_dropped;
      return;
    }
    OomPoint pt;
    pt.program = prog;
    pt.time = now;
    pt.op = idx;
    if (op) {
      pt.kind = op->kind;
      pt.layer = op->layer;
      pt.microbatch = op->microbatch;
    }
    pt.category = cat;
    pt.requested = b;
    pt.in_use = before;
    pt.capacity = led.capacity();
    pt.cause = plan.programs[prog].model_states.total() > led.capacity() ? OomCause::model_states
                                                                          : OomCause::activations;
    tl.ooms.push_back(pt);
  }

  // Offloaded states sit in host memory before the step, like the model states on the GPU
  // (plan.host_per_node is the fullest node's demand). Recorded apart from the GPU ledgers: a
  // node can run out of host memory while every GPU fits.
  void check_host_memory() {
    if (plan.host_stage < 0 || plan.host_per_node <= plan.host_capacity) return;
    tl.host_fits = false;
    const hw::MemBreakdown& host = plan.programs[plan.host_stage].host;
    OomPoint pt;
    pt.program = plan.host_stage;
    pt.op = -1;
    pt.kind = OpKind::cpu_optimizer;
    pt.category = hw::MemCategory::optimizer_states;
    for (std::size_t c = 0; c < hw::kMemCategories; ++c)
      if (host.bytes[c] > host[pt.category]) pt.category = static_cast<hw::MemCategory>(c);
    pt.requested = plan.host_per_node;
    pt.capacity = plan.host_capacity;
    pt.cause = OomCause::host_memory;
    tl.ooms.push_back(pt);
  }

  void start(std::uint32_t id, core::TimePoint now) {
    std::int32_t prog, idx;
    const Op& op = op_at(id, prog, idx);
    const Program& P = plan.programs[prog];
    for (auto e = op.alloc_begin; e < op.alloc_end; ++e)
      book(prog, idx, &op, P.effects[e].category, P.effects[e].bytes, now);
    tl.devices[prog].start[idx] = now;
    queue.schedule(now + duration[id], id);
  }

  void finish(std::uint32_t id, core::TimePoint now) {
    std::int32_t prog, idx;
    const Op& op = op_at(id, prog, idx);
    const Program& P = plan.programs[prog];
    for (auto e = op.free_begin; e < op.free_end; ++e) {
      const auto cat = P.effects[e].category;
      TRAINSIM_CHECK(ledgers[prog].current()[cat] >= P.effects[e].bytes,
                     "stage " + std::to_string(prog) + " op " + std::to_string(idx) + " (" +
                         std::string(parallel::to_string(op.kind)) + " layer " +
                         std::to_string(op.layer) + " micro-batch " +
                         std::to_string(op.microbatch) + ") frees " +
                         std::to_string(P.effects[e].bytes.value) + " bytes of " +
                         std::string(hw::to_string(cat)) + " but only " +
                         std::to_string(ledgers[prog].current()[cat].value) + " are held");
      ledgers[prog].release(cat, P.effects[e].bytes);
    }
    tl.devices[prog].finish[idx] = now;
    done[id] = 1;
    for (auto k = succ_begin[id]; k < succ_begin[id + 1]; ++k) {
      const std::uint32_t s = succ[k];
      TRAINSIM_CHECK(waiting[s] > 0, "op became ready twice");
      if (--waiting[s] == 0) start(s, now);
    }
  }

  void build_graph() {
    DependencyGraph g = build_dependency_graph(plan);
    offset = std::move(g.offset);
    program_of = std::move(g.program_of);
    waiting = std::move(g.waiting);
    succ_begin = std::move(g.succ_begin);
    succ = std::move(g.succ);
    done.assign(waiting.size(), 0);
  }

  // Ops repeat per micro-batch with identical work, so each distinct piece of work is costed
  // once per device role.
  struct WorkKey {
    std::uint64_t a, b, c;
    bool operator==(const WorkKey&) const = default;
  };
  struct WorkHash {
    std::size_t operator()(const WorkKey& k) const {
      return std::hash<std::uint64_t>()(k.a * 0x9E3779B97F4A7C15ULL ^ (k.b + 0x7F4A7C15ULL) * 31 ^ k.c);
    }
  };
  void compute_durations() {
    duration.resize(waiting.size());
    std::unordered_map<WorkKey, core::Duration, WorkHash> memo;
    for (std::size_t p = 0; p < plan.programs.size(); ++p) {
      memo.clear();
      const Program& P = plan.programs[p];
      for (std::size_t i = 0; i < P.ops.size(); ++i) {
        const Op& op = P.ops[i];
        std::uint64_t flops_bits;
        std::memcpy(&flops_bits, &op.work.flops, sizeof flops_bits);
        const WorkKey key{static_cast<std::uint64_t>(op.kind) | (static_cast<std::uint64_t>(op.work.matmul) << 8) |
                              (static_cast<std::uint64_t>(op.comm.inter_node) << 9) |
                              (static_cast<std::uint64_t>(op.tp_sequence_parallel) << 10) |
                              (static_cast<std::uint64_t>(op.tp_collectives) << 56) |
                              (static_cast<std::uint64_t>(static_cast<std::uint32_t>(op.kernels)) << 16) |
                              (static_cast<std::uint64_t>(static_cast<std::uint32_t>(op.comm.ranks)) << 40),
                          flops_bits ^ static_cast<std::uint64_t>(op.comm.bytes.value),
                          static_cast<std::uint64_t>(op.work.bytes.value) ^
                              (static_cast<std::uint64_t>(op.comm.ranks_per_node) << 48) ^
                              (static_cast<std::uint64_t>(op.comm.gather_ranks) << 32) ^
                              (static_cast<std::uint64_t>(op.work.serial_memory) << 63)};
        auto [it, inserted] = memo.try_emplace(key);
        if (inserted) it->second = op_duration(plan, P, op);
        duration[offset[p] + i] = it->second;
      }
    }
  }

  // Part of [a, b) not covered by the sorted, disjoint busy intervals.
  static core::Duration uncovered(core::TimePoint a, core::TimePoint b,
                                  const std::vector<std::pair<core::TimePoint, core::TimePoint>>& busy) {
    std::int64_t covered = 0;
    auto it = std::lower_bound(busy.begin(), busy.end(), a,
                               [](const auto& iv, core::TimePoint t) { return iv.second <= t; });
    for (; it != busy.end() && it->first < b; ++it)
      covered += std::min(b, it->second).ns - std::max(a, it->first).ns;
    return core::Duration{(b - a).ns - covered};
  }

  void account() {
    core::TimePoint end{}, pipe_end{};
    for (std::size_t p = 0; p < plan.programs.size(); ++p) {
      const Program& P = plan.programs[p];
      DeviceTimeline& d = tl.devices[p];
      std::vector<std::pair<core::TimePoint, core::TimePoint>> busy;
      busy.reserve(P.ops.size());
      // Tensor-parallel part of each compute op, costed once per distinct op.
      std::vector<core::Duration> tp_time(P.ops.size());
      {
        std::unordered_map<WorkKey, core::Duration, WorkHash> memo;
        for (std::size_t i = 0; i < P.ops.size(); ++i) {
          const Op& op = P.ops[i];
          if (op.tp_collectives == 0) continue;
          const WorkKey key{static_cast<std::uint64_t>(op.comm.bytes.value),
                            static_cast<std::uint64_t>(op.comm.ranks) | (static_cast<std::uint64_t>(op.comm.inter_node) << 32) |
                                (static_cast<std::uint64_t>(op.comm.ranks_per_node) << 40),
                            static_cast<std::uint64_t>(op.tp_collectives) | (static_cast<std::uint64_t>(op.tp_sequence_parallel) << 8)};
          auto [it, inserted] = memo.try_emplace(key);
          if (inserted) it->second = tensor_parallel_time(plan, op);
          tp_time[i] = it->second;
        }
      }
      for (std::size_t i = 0; i < P.ops.size(); ++i) {
        const Op& op = P.ops[i];
        d.end = std::max(d.end, d.finish[i]);
        if (op.stream == StreamKind::compute) {
          const core::Duration span = d.finish[i] - d.start[i];
          d.compute_busy += span;
          if (op.kind != OpKind::optimizer) {
            d.pipeline_busy += span;
            pipe_end = std::max(pipe_end, d.finish[i]);
          }
          // Compute hides other traffic only while its kernels run, not during its own
          // tensor-parallel collectives.
          const core::Duration tp = tp_time[i];
          if (op.purpose == parallel::CommPurpose::none) busy.emplace_back(d.start[i], d.finish[i] - tp);
          if (tp.ns > 0) {
            CommStats& c = tl.comm[parallel::CommPurpose::tensor];
            c.time += tp;
            c.exposed += tp;
          }
        }
      }
      for (std::size_t i = 0; i < P.ops.size(); ++i) {
        const Op& op = P.ops[i];
        if (op.purpose == parallel::CommPurpose::none) continue;
        CommStats& c = tl.comm[op.purpose];
        const core::Duration span = d.finish[i] - d.start[i];
        c.time += span;
        c.exposed += op.stream == StreamKind::compute ? span : uncovered(d.start[i], d.finish[i], busy);
      }
      d.capacity = ledgers[p].capacity();
      d.peak = ledgers[p].peak();
      d.at_peak = ledgers[p].at_peak();
      end = std::max(end, d.end);
    }
    tl.step_time = end - core::TimePoint{};
    tl.pipeline_end = pipe_end;
  }

  void check_end_state() {
    for (std::size_t p = 0; p < plan.programs.size(); ++p) {
      const hw::MemBreakdown& now = ledgers[p].current();
      const hw::MemBreakdown& start = plan.programs[p].persistent;
      for (std::size_t c = 0; c < hw::kMemCategories; ++c)
        TRAINSIM_CHECK(now.bytes[c] == start.bytes[c],
                       "device " + std::to_string(p) + " ends the step holding " +
                           std::to_string(now.bytes[c].value) + " bytes of " +
                           std::string(hw::to_string(static_cast<hw::MemCategory>(c))) +
                           " instead of " + std::to_string(start.bytes[c].value));
      TRAINSIM_CHECK(now.total() == ledgers[p].in_use(), "per-category bytes do not sum to the total");
    }
  }

  Timeline run() {
    const auto& progs = plan.programs;
    tl.devices.resize(progs.size());
    oom_seen.assign(progs.size(), 0);
    for (const auto& P : progs) {
      ledgers.emplace_back(P.device.memory);
      auto& d = tl.devices[ledgers.size() - 1];
      d.start.assign(P.ops.size(), core::TimePoint{});
      d.finish.assign(P.ops.size(), core::TimePoint{});
    }
    // Model states and reserved memory are in place before the step starts.
    for (std::size_t p = 0; p < progs.size(); ++p)
      for (std::size_t c = 0; c < hw::kMemCategories; ++c)
        book(static_cast<std::int32_t>(p), -1, nullptr, static_cast<hw::MemCategory>(c),
             progs[p].persistent.bytes[c], core::TimePoint{});
    check_host_memory();
    build_graph();
    compute_durations();
    for (std::uint32_t id = 0; id < waiting.size(); ++id)
      if (waiting[id] == 0) start(id, core::TimePoint{});
    while (!queue.empty()) {
      const auto ev = queue.pop();
      finish(ev.payload, ev.time);
    }
    for (std::uint32_t id = 0; id < done.size(); ++id)
      TRAINSIM_CHECK(done[id], "op " + std::to_string(id) + " never ran: the schedule deadlocks");
    tl.events = queue.events_run();
    check_end_state();
    account();
    std::stable_sort(tl.ooms.begin(), tl.ooms.end(),
                     [](const OomPoint& a, const OomPoint& b) { return a.time < b.time; });
    return std::move(tl);
  }
};

}  // namespace

Timeline play(const Plan& plan, const PlayOptions& options) {
  Player p(plan, options);
  return p.run();
}

}  // namespace trainsim::exec
