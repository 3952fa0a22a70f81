#pragma once
// Congestion above the nodes: an oversubscribed fat tree (docs/scale.md, "Congestion between
// pods"). Nodes sit in pods of full bisection bandwidth (cluster.pod_nodes); a pod's uplinks
// carry pod_gpus x B_nic / R, R = cluster.oversubscription (Llama 3's cluster: pods of 3,072
// GPUs, R = 7). Every group of a parallel dimension communicates at once (all data-parallel
// groups reduce their gradients together), so a pod's uplinks are shared by all of them.
//
// Rings (and trees) over a group spanning pods, its nodes in rank order, pod by pod: each of
// the group's k rings per node (one per NIC) leaves and enters each pod once. A pod holds m
// members of each of pod_gpus / m such groups, so each group's crossing gets m x B_nic / R
// where its rings would take k x B_nic: the link it sees is the spanning link with bandwidth
//   min(B_intra, k x B_nic, m x B_nic / R)
// (congestion only when fewer than R of its nodes share a pod: m / k < R).
//
// All-to-all over a group spanning pods: (n - m) / n of each rank's S bytes go to ranks in other
// pods, through uplinks that give each GPU B_nic / R when every GPU of the pod sends at once:
//   time >= (n - m) / n x S x R / B_nic + (n - 1) x latency
// besides the node-level bound (cost::all_to_all_across_nodes).
#include <cstdint>

#include "sim/core/units.hpp"
#include "sim/hw/device.hpp"

namespace trainsim::cost {

// The link of a ring or tree over a group with `pod_members` members in each pod (0: inside one
// pod, unchanged): `spanning` (cost::spanning_link) with its bandwidth capped at
// pod_members x inter.bandwidth / oversubscription.
hw::LinkSpec congested_link(const hw::LinkSpec& spanning, const hw::LinkSpec& inter,
                            std::int64_t pod_members, double oversubscription);

// How many times slower the congested link is than `spanning` (1: not congested).
double congestion_factor(const hw::LinkSpec& spanning, const hw::LinkSpec& inter,
                         std::int64_t pod_members, double oversubscription);

// The uplinks' bound on an all-to-all of `bytes` per rank over n ranks, pod_members of them in
// each pod (0: zero, the group stays in one pod).
core::Duration all_to_all_uplink_time(core::Bytes bytes, std::int64_t n, std::int64_t pod_members,
                                      const hw::LinkSpec& inter, double oversubscription);

// An all-to-all over a group spanning nodes: the larger of the nodes' bound
// (cost::all_to_all_across_nodes) and the pods' uplinks' (all_to_all_uplink_time).
core::Duration all_to_all_across_pods(core::Bytes bytes, std::int64_t n,
                                      std::int64_t ranks_per_node, std::int64_t pod_members,
                                      const hw::LinkSpec& intra, const hw::LinkSpec& inter,
                                      double oversubscription);

}  // namespace trainsim::cost
