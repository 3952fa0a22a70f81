#include "sim/parallel/program.hpp"

namespace trainsim::parallel {

std::string_view to_string(OpKind k) {
  switch (k) {
    case OpKind::forward:
      return "forward";
    case OpKind::backward:
      return "backward";
    case OpKind::recompute:
      return "recompute";
    case OpKind::optimizer:
      return "optimizer";
    case OpKind::p2p:
      return "p2p";
    case OpKind::all_reduce:
      return "all_reduce";
    case OpKind::reduce_scatter:
      return "reduce_scatter";
    case OpKind::all_gather:
      return "all_gather";
    case OpKind::pcie_h2d:
      return "pcie_h2d";
    case OpKind::pcie_d2h:
      return "pcie_d2h";
    case OpKind::cpu_optimizer:
      return "cpu_optimizer";
    case OpKind::all_to_all:
      return "all_to_all";
  }
  return "?";
}

std::string_view to_string(CommPurpose p) {
  switch (p) {
    case CommPurpose::none:
      return "none";
    case CommPurpose::tensor:
      return "tensor_parallel";
    case CommPurpose::data:
      return "data_parallel";
    case CommPurpose::pipeline:
      return "pipeline_p2p";
    case CommPurpose::zero:
      return "zero";
    case CommPurpose::offload_pcie:
      return "offload_pcie";
    case CommPurpose::offload_cpu_optimizer:
      return "offload_cpu_optimizer";
    case CommPurpose::fsdp_all_gather:
      return "fsdp_all_gather";
    case CommPurpose::fsdp_reduce_scatter:
      return "fsdp_reduce_scatter";
    case CommPurpose::hsdp_all_reduce:
      return "hsdp_all_reduce";
    case CommPurpose::all_to_all:
      return "all_to_all";
    case CommPurpose::context_kv:
      return "context_kv";
  }
  return "?";
}

}  // namespace trainsim::parallel
