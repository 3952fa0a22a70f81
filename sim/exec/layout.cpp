// The plan's op numbering (the expanded plan's fine ids), duration classes and transfer classes,
// which the plan alone sets (PlayLayout).

#include "sim/exec/player_internal.hpp"

namespace trainsim::exec {

PlayLayout Player::make_layout(const Plan& plan, const DependencyGraph& g, std::size_t ops) {
  const std::span<const std::uint32_t> offset = g.offset;
  PlayLayout l;
  l.feeds_data_reduction.assign(ops, 0);
  l.fine_first.resize(ops);
  l.end_key.resize(ops);
  l.arrival_from.assign(ops, kNone);
  l.work_class.resize(ops);  // every op gets a class below
  l.transfer_class.assign(ops, kNone);
  l.event_ops.resize(ops);
  for (const Program& P : plan.programs) {
    l.template_base.push_back(l.templates);
    l.templates += static_cast<std::uint32_t>(P.macros.size());
  }
  ClassTable& classes = spare_class_table();
  std::uint64_t fine = 0;
  bool data_reductions = false;
  for (std::size_t p = 0; p < plan.programs.size(); ++p) {
    const Program& P = plan.programs[p];
    TRAINSIM_CHECK(P.effects.size() < EventOp::kMacro, "too many effects to number in EventOp");
    classes.clear();  // durations are per program (its device)
    WorkKey last_key{};
    std::uint32_t last_class = kNone;
    const auto transfers_before = static_cast<std::uint32_t>(l.transfer_op.size());
    for (std::size_t i = 0; i < P.ops.size(); ++i) {
      const Op& op = P.ops[i];
      const std::uint32_t id = offset[p] + static_cast<std::uint32_t>(i);
      data_reductions = data_reductions || op.data_reduction;
      l.fine_first[id] = fine;
      l.event_ops[id] = EventOp::of(op);
      if (op.macro < 0) {
        l.end_key[id] = fine++;
        // Consecutive ops often repeat the same work (a unit's transfers): the last one first.
        const WorkKey key = work_key(op);
        if (last_class == kNone || !(key == last_key)) {
          auto [c, added] = classes.find_or_add(key);
          if (added) {
            *c = l.templates + static_cast<std::uint32_t>(l.class_op.size());
            l.class_op.push_back(id);
          }
          last_key = key;
          last_class = *c;
        }
        l.work_class[id] = last_class;
        continue;
      }
      const parallel::MacroTemplate& t = P.macros[static_cast<std::size_t>(op.macro)];
      const std::uint64_t ops_in = t.end - t.begin;
      l.work_class[id] = l.template_base[p] + static_cast<std::uint32_t>(op.macro);
      if (op.arrival) {
        TRAINSIM_CHECK(op.dep_end == op.dep_begin + 1,
                       "a folded transfer waits for exactly one op");
        const parallel::OpRef from = P.deps[op.dep_begin];
        l.arrival_from[id] = offset[from.program] + static_cast<std::uint32_t>(from.index);
        // A program has a few kinds of transfers: searched from the newest class down.
        std::uint32_t c = kNone;
        for (auto k = static_cast<std::uint32_t>(l.transfer_op.size()); k-- > transfers_before;)
          if (same_transfer(op.comm, P.ops[l.transfer_op[k] - offset[p]].comm)) {
            c = k;
            break;
          }
        if (c == kNone) {
          c = static_cast<std::uint32_t>(l.transfer_op.size());
          l.transfer_op.push_back(id);
        }
        l.transfer_class[id] = c;
      }
      fine += ops_in + (op.arrival ? 1 : 0);
      l.end_key[id] = fine - 1;
      l.extra_events += ops_in - 1 + (op.arrival ? 1 : 0);
    }
  }
  // The ops an all-reduce priced by Plan::data_allreduce waits for (ZeRO 0 plans have some).
  if (!data_reductions) return l;
  for (std::uint32_t u = 0; u + 1 < g.succ_begin.size(); ++u)
    for (auto k = g.succ_begin[u]; k < g.succ_begin[u + 1]; ++k) {
      const std::uint32_t v = g.succ[k];
      const std::int32_t p = g.program_of[v];
      if (plan.programs[p].ops[v - offset[p]].data_reduction) l.feeds_data_reduction[u] = 1;
    }
  return l;
}

}  // namespace trainsim::exec
