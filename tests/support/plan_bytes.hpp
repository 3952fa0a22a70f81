#pragma once
// Lookups the memory-mechanism tests share: a layer of a built scenario by name, the saved
// bytes a lowered plan's first program books, and that program's ops of one kind.
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::testing {

inline const models::Layer& layer_named(const scenario::Scenario& s, const std::string& name) {
  for (const auto v : s.model.order)
    if (s.model.graph[v].name == name) return s.model.graph[v];
  FAIL("no layer " << name);
  throw;
}

// The saved bytes every layer's forward books, summed over the plan's first program.
inline std::int64_t saved_total(const scenario::Scenario& s) {
  const auto plan = parallel::lower(s);
  std::int64_t sum = 0;
  const auto& P = plan.programs.at(0);
  for (const auto& op : P.ops)
    for (auto k = op.alloc_begin; k < op.alloc_end; ++k)
      if (P.effects[k].tensor == parallel::TensorKind::saved) sum += P.effects[k].bytes.value;
  return sum;
}

// The first program's ops of `kind`, in order.
inline std::vector<const parallel::Op*> ops_of(const parallel::Plan& plan, parallel::OpKind kind) {
  std::vector<const parallel::Op*> out;
  for (const auto& op : plan.programs.at(0).ops)
    if (op.kind == kind) out.push_back(&op);
  return out;
}

}  // namespace trainsim::testing
