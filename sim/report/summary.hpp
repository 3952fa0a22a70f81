#pragma once
// The figures a report shows, each derived from the plan (formulas) or the timeline (events).
// Writers (text, JSON) only format a Summary; they compute nothing.
#include <cstdint>
#include <string>
#include <vector>

#include <optional>

#include "sim/report/time_breakdown.hpp"
#include "sim/exec/timeline.hpp"
#include "sim/report/diagnosis.hpp"
#include "sim/parallel/program.hpp"
#include "sim/scenario/scenario.hpp"

namespace trainsim::report {

struct DeviceSummary {
  std::int32_t id = 0;  // = pipeline stage
  std::int32_t stage = 0;
  std::int64_t count = 1;  // identical devices this entry stands for
  std::string device;      // the stage's device name (parallel.stage_devices, else the scenario's)
  std::string layers;      // "embed .. block.5.add2"
  std::int64_t parameters = 0;
  core::Bytes capacity{};
  core::Bytes peak{};  // context + what the allocator reserved (the tensors' bytes without it)
  hw::MemBreakdown peak_breakdown;
  // PyTorch's max_memory_allocated / max_memory_reserved (no context): exec::DeviceTimeline.
  core::Bytes allocated_peak{}, reserved_peak{};
  hw::MemBreakdown model_states;  // weights + gradients + optimizer states + reserved
  double compute_busy_s = 0;
  double contention_s = 0;  // of it, lost to collectives holding SMs (DeviceTimeline::contention)
  bool fits = true;
  hw::MemBreakdown host;  // host memory held for each of these devices (offload)
  core::Bytes optimizer_spilled{};  // paged optimizer states evicted to host (exec/paging.hpp)
};

struct OomSummary {
  std::int32_t device = 0;
  double time_s = 0;
  std::string op;     // "forward", "backward", ..., "model_states" / "host_states" for the states booked at start
  std::string layer;  // layer name, "" when none
  std::int32_t microbatch = -1;
  std::string category;
  core::Bytes requested{};
  core::Bytes in_use{};
  hw::MemBreakdown in_use_breakdown;
  core::Bytes capacity{};
  core::Bytes segment{};  // the segment the caching allocator asked for (0 without it)
  std::string cause;  // "model_states" | "activations" | "host_memory"
};

// Communication time per device (mean over pipeline stages), and the part of it that compute
// did not hide.
struct CommSummary {
  std::string kind;  // tensor_parallel | data_parallel | pipeline_p2p | zero | offload_pcie | offload_cpu_optimizer
                     // | fsdp_all_gather | fsdp_reduce_scatter | hsdp_all_reduce | all_to_all
  double time_s = 0;
  double exposed_s = 0;
  // How many times slower than on a full-bisection fabric the most congested of these
  // collectives runs across pods (cluster.oversubscription; docs/scale.md): 1 when none is.
  double congestion = 1;
};

struct Summary {
  std::string name, file;
  std::string model_name;
  std::int64_t parameters = 0;
  // Parameters trained, model-wide (PEFT print_trainable_parameters): all without LoRA.
  std::int64_t trainable_parameters = 0;
  bool sequence_model = true;
  std::string device_name;
  std::int64_t devices_total = 1;
  scenario::TrainingSpec training;
  scenario::ParallelSpec parallel;
  bool fits = true;
  double step_time_s = 0;
  double samples_per_s = 0;
  double tokens_per_s = 0;
  double mfu = 0, hfu = 0;
  double bubble_fraction = 0;
  core::Bytes peak{};  // fullest device's peak demand
  core::Bytes allocated_peak{}, reserved_peak{};  // the largest over devices
  core::Bytes optimizer_spilled{};  // paged optimizer states evicted to host: the largest over devices
  // Host memory (offload): the fullest node's demand (sum over its GPUs), cluster.host_memory,
  // and whether every node holds its demand.
  core::Bytes host_per_node{};
  core::Bytes host_capacity{};
  bool host_fits = true;
  std::vector<DeviceSummary> devices;
  std::vector<OomSummary> ooms;
  std::int64_t ooms_dropped = 0;
  std::vector<CommSummary> comm;
  TimeBreakdown time_breakdown;  // where the step's time goes (time_breakdown.hpp)
  std::uint64_t events = 0;
  bool all_ooms = false;
  std::optional<Diagnosis> diagnosis;  // set when the step does not fit and it was asked for
};

// One device kind, or "mixed (stage 0 a100-80gb, stage 1 h100-80gb, ...)" when
// parallel.stage_devices gives stages different devices.
std::string device_kinds(const Summary& r);

Summary summarize(const scenario::Scenario& s, const parallel::Plan& plan,
                  const exec::Timeline& tl, bool all_ooms);

// "forward of block.17.attn, micro-batch 3" — how a person names an op.
std::string describe_op(const scenario::Scenario& s, parallel::OpKind kind, std::int32_t layer,
                        std::int32_t microbatch);

}  // namespace trainsim::report
