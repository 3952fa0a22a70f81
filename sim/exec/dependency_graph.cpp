#include "sim/exec/dependency_graph.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "sim/core/error.hpp"

namespace trainsim::exec {

DependencyGraph build_dependency_graph(const parallel::Plan& plan) {
  const auto& progs = plan.programs;
  DependencyGraph g;
  g.offset.push_back(0);
  for (const auto& P : progs) g.offset.push_back(g.offset.back() + static_cast<std::uint32_t>(P.ops.size()));
  const std::uint32_t total = g.total();
  g.program_of.resize(total);
  for (std::size_t p = 0; p < progs.size(); ++p)
    for (std::size_t i = 0; i < progs[p].ops.size(); ++i)
      g.program_of[g.offset[p] + i] = static_cast<std::int32_t>(p);
  g.waiting.assign(total, 0);
  g.succ_begin.assign(total + 1, 0);

  // One pass over the programs lists the edges in plan order and counts them; a stable counting
  // sort by source then builds the successor lists (a second pass over the ops, four times the
  // bytes of the edge list, cost more).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  std::vector<std::pair<std::uint32_t, DependencyGraph::Tap>> taps;  // by macro op, in plan order
  std::size_t deps = 0;
  for (const auto& P : progs) deps += P.deps.size();
  edges.reserve(total + deps);
  auto for_each_edge = [&](auto&& visit) {
    for (std::size_t p = 0; p < progs.size(); ++p) {
      const parallel::Program& P = progs[p];
      std::int64_t last_in_stream[parallel::kStreams];
      std::fill(std::begin(last_in_stream), std::end(last_in_stream), -1);
      for (std::size_t i = 0; i < P.ops.size(); ++i) {
        const std::uint32_t id = g.offset[p] + static_cast<std::uint32_t>(i);
        const parallel::Op& op = P.ops[i];
        const int s = static_cast<int>(op.stream);
        if (op.stream != parallel::StreamKind::p2p && last_in_stream[s] >= 0)
          visit(g.offset[p] + static_cast<std::uint32_t>(last_in_stream[s]), id);
        last_in_stream[s] = static_cast<std::int64_t>(i);
        for (auto d = op.dep_begin; d < op.dep_end; ++d) {
          const parallel::OpRef r = P.deps[d];
          TRAINSIM_CHECK(r.program >= 0 && r.program < static_cast<std::int32_t>(progs.size()) &&
                             r.index >= 0 &&
                             r.index < static_cast<std::int32_t>(progs[r.program].ops.size()),
                         "dependency on a missing op");
          const std::uint32_t from = g.offset[r.program] + static_cast<std::uint32_t>(r.index);
          if (op.tap < 0) {
            visit(from, id);
            continue;
          }
          TRAINSIM_CHECK(op.dep_end == op.dep_begin + 1 && progs[r.program].ops[r.index].macro >= 0,
                         "a tap waits for one macro op alone");
          ++g.waiting[id];
          taps.push_back({from, {id, op.tap}});
        }
      }
    }
  };
  for_each_edge([&](std::uint32_t from, std::uint32_t to) {
    ++g.succ_begin[from + 1];
    ++g.waiting[to];
    edges.emplace_back(from, to);
  });
  for (std::uint32_t i = 0; i < total; ++i) g.succ_begin[i + 1] += g.succ_begin[i];
  g.succ.resize(g.succ_begin[total]);
  std::vector<std::uint32_t> fill(g.succ_begin.begin(), g.succ_begin.end() - 1);
  for (const auto& [from, to] : edges) g.succ[fill[from]++] = to;
  if (!taps.empty()) {
    g.tap_begin.assign(total + 1, 0);
    for (const auto& t : taps) ++g.tap_begin[t.first + 1];
    for (std::uint32_t i = 0; i < total; ++i) g.tap_begin[i + 1] += g.tap_begin[i];
    g.taps.resize(taps.size());
    std::vector<std::uint32_t> at(g.tap_begin.begin(), g.tap_begin.end() - 1);
    for (const auto& [from, t] : taps) g.taps[at[from]++] = t;
  }
  return g;
}

}  // namespace trainsim::exec
