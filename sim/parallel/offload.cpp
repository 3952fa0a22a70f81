#include "sim/parallel/offload.hpp"

#include <algorithm>
#include <numeric>

namespace trainsim::parallel {

using hw::MemCategory;

HostStateBytes host_state_bytes_per_param(const scenario::Scenario& s) {
  const auto& off = s.training.offload;
  HostStateBytes h;
  if (!off.optimizer_on_cpu()) return h;
  const auto sb = scenario::state_bytes_per_param(s.training.precision, s.training.optimizer);
  h.optimizer_states = sb.optimizer_states;
  h.gradients = 4;
  if (!scenario::master_weights(s.training.precision)) h.weights = sb.weights;  // also serves parameter offload
  else if (off.parameters_on_cpu()) h.weights = sb.weights;
  return h;
}

hw::MemBreakdown host_states(const scenario::Scenario& s, std::int64_t params, int zero, std::int64_t data) {
  const HostStateBytes h = host_state_bytes_per_param(s);
  hw::MemBreakdown b;
  // Optimizer states and gradients are sharded from ZeRO-1 on (each rank updates its 1/data);
  // offloaded parameters exist only with ZeRO-3, which shards them too.
  auto shard = [&](int bytes_per_param) {
    const core::Bytes full = core::Bytes{params} * bytes_per_param;
    return zero >= 1 ? core::ceil_div(full, data) : full;
  };
  b[MemCategory::optimizer_states] = shard(h.optimizer_states);
  b[MemCategory::gradients] = shard(h.gradients);
  b[MemCategory::weights] = shard(h.weights);
  return b;
}

void remove_offloaded_states(const scenario::OffloadSpec& off, hw::MemBreakdown& persistent,
                             hw::MemBreakdown& model_states) {
  if (off.optimizer_on_cpu()) {
    persistent[MemCategory::optimizer_states] = {};
    model_states[MemCategory::optimizer_states] = {};
    model_states[MemCategory::gradients] = {};
  }
  if (off.parameters_on_cpu()) {
    persistent[MemCategory::weights] = {};
    model_states[MemCategory::weights] = {};
  }
}

Op pcie_copy_op(OpKind kind, std::int32_t layer, std::int32_t microbatch, std::int32_t chunk, core::Bytes bytes) {
  Op op;
  op.kind = kind;
  op.stream = kind == OpKind::pcie_h2d ? StreamKind::pcie_h2d : StreamKind::pcie_d2h;
  op.purpose = CommPurpose::offload_pcie;
  op.layer = layer;
  op.microbatch = microbatch;
  op.chunk = chunk;
  op.comm = CommWork{bytes, 1, false, 1};
  op.model_flops = false;
  return op;
}

core::Bytes cpu_optimizer_traffic(const scenario::Scenario& s, std::int64_t params) {
  const auto sb = scenario::state_bytes_per_param(s.training.precision, s.training.optimizer);
  const std::int64_t weight_rw = sb.master > 0 ? sb.weights : 2 * sb.weights;
  return core::Bytes{params} * (4 + 2 * sb.optimizer_states + weight_rw);
}

Op cpu_optimizer_op(core::Bytes traffic) {
  Op op;
  op.kind = OpKind::cpu_optimizer;
  op.stream = StreamKind::host;
  op.purpose = CommPurpose::offload_cpu_optimizer;
  op.work = cost::KernelWork{0, traffic, false};
  op.model_flops = false;
  return op;
}

core::Bandwidth host_bandwidth_per_gpu(const scenario::Scenario& s) {
  return core::Bandwidth{s.cluster.host_memory_bandwidth.bytes_per_s /
                         static_cast<double>(std::max<std::int64_t>(1, s.cluster.gpus_per_node))};
}

NodeHostDemand host_per_node(const std::vector<Program>& programs, std::int64_t pipeline_stride,
                             std::int64_t gpus_per_node, std::int64_t devices) {
  NodeHostDemand out;
  const auto p = static_cast<std::int64_t>(programs.size());
  if (p == 0 || gpus_per_node <= 0) return out;
  core::Bytes largest{};
  std::int32_t largest_stage = -1;
  for (std::int64_t st = 0; st < p; ++st) {
    const core::Bytes b = programs[st].host.total();
    if (b > largest) {
      largest = b;
      largest_stage = static_cast<std::int32_t>(st);
    }
  }
  if (largest.value == 0) return out;
  const std::int64_t cycle = pipeline_stride * p;
  const std::int64_t period = std::lcm(gpus_per_node, cycle);
  const std::int64_t ranks = std::min(period, devices);  // a short last node when devices % gpus_per_node != 0
  if (ranks > (std::int64_t{1} << 24)) {
    out.fullest = largest * gpus_per_node;
    out.stage = largest_stage;
    return out;
  }
  std::vector<core::Bytes> per_stage(p);
  for (std::int64_t node = 0; node * gpus_per_node < ranks; ++node) {
    std::fill(per_stage.begin(), per_stage.end(), core::Bytes{});
    core::Bytes sum{};
    for (std::int64_t r = node * gpus_per_node; r < std::min((node + 1) * gpus_per_node, devices); ++r) {
      const std::int64_t st = (r / pipeline_stride) % p;
      per_stage[st] += programs[st].host.total();
      sum += programs[st].host.total();
    }
    if (sum > out.fullest) {
      out.fullest = sum;
      out.stage = static_cast<std::int32_t>(std::max_element(per_stage.begin(), per_stage.end()) - per_stage.begin());
    }
  }
  return out;
}

}  // namespace trainsim::parallel
