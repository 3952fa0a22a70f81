#pragma once
// Where ranks sit (cluster.placement): ranks are numbered with the first listed dimension varying
// fastest, and node k holds ranks [k x gpus_per_node, (k + 1) x gpus_per_node). The default
// [tensor, pipeline, data] keeps tensor groups inside a node, then pipeline, then data.
#include <cstdint>

#include "sim/scenario/scenario.hpp"

namespace trainsim::parallel {

// Distance in ranks between neighbours along `dim`: 1 for the first dimension of the order,
// the first's degree for the second, the product of the first two for the third.
std::int64_t rank_stride(const scenario::Scenario& s, scenario::ParallelDim dim);

// How a group of the ranks of `dim` sits on the nodes: whether it crosses a node boundary and
// how many of its members share each node (the ranks_per_node of cost::spanning_link). Exact
// when gpus_per_node is a multiple of the stride or the stride a multiple of it.
// pod_members: how many of its members share one pod (cluster.pod_nodes) when the group spans
// several pods, else 0 (also when the cluster is one pod).
struct GroupSpan {
  bool inter_node = false;
  std::int64_t per_node = 1;
  std::int64_t pod_members = 0;
};
// The pod_members of a group of n ranks `stride` ranks apart, the first rank of the group's
// pod-aligned block: as per_node with a pod's GPUs in place of a node's.
std::int64_t pod_members(const scenario::Scenario& s, std::int64_t stride, std::int64_t n);
// The span of a group of n ranks `stride` ranks apart (group_span, context_span and
// data_subgroup_span are such groups; FSDP's shard and replica groups too).
GroupSpan strided_span(const scenario::Scenario& s, std::int64_t stride, std::int64_t n);
// The data dimension holds data x context ranks, the context ranks varying fastest: its group
// is the gradient group (data x context ranks), context_span one sequence's context ranks.
GroupSpan group_span(const scenario::Scenario& s, scenario::ParallelDim dim);
GroupSpan context_span(const scenario::Scenario& s);
// How a group of `size` data ranks `step` data ranks apart sits on the nodes; the expert group
// (parallel.expert consecutive data ranks) and the expert-data-parallel group (the data x
// context / expert ranks `expert` apart that hold the same experts).
GroupSpan data_subgroup_span(const scenario::Scenario& s, std::int64_t size, std::int64_t step);
GroupSpan expert_data_span(const scenario::Scenario& s);

// Pipeline boundary from_stage -> to_stage, judged on the stages' rank 0 (tensor and data
// index 0): other ranks of the two stages may sit differently when a node boundary falls
// inside a stage's ranks.
bool inter_node_boundary(const scenario::Scenario& s, int from_stage, int to_stage);

}  // namespace trainsim::parallel
