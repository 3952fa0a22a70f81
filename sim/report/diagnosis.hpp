#pragma once
// What went wrong and what to change: plain data filled by sim/diagnose (which re-simulates
// every remedy) and printed by the writers.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"

namespace trainsim::report {

struct Remedy {
  std::string description;  // "micro-batch 4 with 8 accumulation steps (same global batch)"
  std::vector<std::pair<std::string, std::string>> set;  // --set overrides that apply it
  std::string command{};  // `trainsim run FILE --set ...` (the scenario's own overrides first)
  bool changes_workload = false;  // e.g. a shorter sequence: a different training job
  bool fits = false;
  double step_time_s = 0;
  core::Bytes peak{};
  std::int64_t devices_total = 1;
};

// "model-state OOM", "activation OOM", "host-memory OOM": how a report titles a diagnosis kind.
inline std::string diagnosis_title(const std::string& kind) {
  if (kind == "model_states") return "model-state OOM";
  if (kind == "host_memory") return "host-memory OOM";
  return "activation OOM";
}

struct Diagnosis {
  std::string kind;     // "model_states" | "activations" | "host_memory"
  std::string summary;  // the numbers that show it, in one or two sentences
  std::string data_parallel_note;  // why data parallelism alone does not help
  core::Bytes model_state_bytes{};  // fullest device: weights + gradients + optimizer + reserved
  core::Bytes capacity{};
  core::Bytes peak{};
  std::int32_t device = 0;  // stage of the fullest device
  std::vector<Remedy> remedies;  // that fit, fastest first
  std::int32_t tried = 0;        // remedies simulated
};

}  // namespace trainsim::report
