#include "sim/parallel/topology.hpp"

#include <algorithm>

namespace trainsim::parallel {

namespace {
std::int64_t degree(const scenario::Scenario& s, scenario::ParallelDim d) {
  switch (d) {
    case scenario::ParallelDim::tensor:
      return s.parallel.tensor;
    case scenario::ParallelDim::pipeline:
      return s.parallel.pipeline;
    case scenario::ParallelDim::data:
      return s.parallel.data * s.parallel.context;  // context ranks sit inside data
  }
  return 1;
}
}  // namespace

std::int64_t pod_members(const scenario::Scenario& s, std::int64_t stride, std::int64_t n) {
  const std::int64_t pod_nodes = s.cluster.pod_nodes;
  if (pod_nodes <= 0 || pod_nodes >= s.cluster.nodes || n <= 1) return 0;
  const std::int64_t pod_gpus = pod_nodes * s.cluster.gpus_per_node;
  if (stride * n <= pod_gpus) return 0;  // the group stays inside one pod
  return stride >= pod_gpus ? 1 : std::min(n, pod_gpus / stride);
}

std::int64_t rank_stride(const scenario::Scenario& s, scenario::ParallelDim dim) {
  std::int64_t stride = 1;
  for (auto d : s.cluster.placement) {
    if (d == dim) return stride;
    stride *= degree(s, d);
  }
  return stride;
}

GroupSpan strided_span(const scenario::Scenario& s, std::int64_t stride, std::int64_t n) {
  const std::int64_t gpn = s.cluster.gpus_per_node;
  GroupSpan g;
  g.per_node = stride >= gpn ? 1 : std::min(n, gpn / stride);
  g.inter_node = n > 1 && stride * n > gpn;
  g.pod_members = pod_members(s, stride, n);
  return g;
}

GroupSpan group_span(const scenario::Scenario& s, scenario::ParallelDim dim) {
  return strided_span(s, rank_stride(s, dim), degree(s, dim));
}

GroupSpan context_span(const scenario::Scenario& s) {
  return strided_span(s, rank_stride(s, scenario::ParallelDim::data), s.parallel.context);
}

bool inter_node_boundary(const scenario::Scenario& s, int from_stage, int to_stage) {
  const std::int64_t stride = rank_stride(s, scenario::ParallelDim::pipeline);
  const std::int64_t a = from_stage * stride / s.cluster.gpus_per_node;
  const std::int64_t b = to_stage * stride / s.cluster.gpus_per_node;
  return a != b;
}

GroupSpan data_subgroup_span(const scenario::Scenario& s, std::int64_t size, std::int64_t step) {
  return strided_span(s, rank_stride(s, scenario::ParallelDim::data) * step, size);
}

GroupSpan expert_data_span(const scenario::Scenario& s) {
  const std::int64_t e = s.parallel.expert;
  return data_subgroup_span(s, s.parallel.data * s.parallel.context / e, e);
}

}  // namespace trainsim::parallel
