#pragma once
// Checking predicted peak memory against published measurements. A case file in the repository
// (scenarios/validation/memory/cases.yaml) maps each measured case's id to a scenario written
// from the case's stated settings; the measured figures are read at run time from the public
// calibration set (measured_memory_public.yaml, kept outside the repository). Each source
// reports a different figure, so each case is compared with the simulated figure of its kind.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/validation/compare.hpp"

namespace trainsim::validation {

// What a measured number is, and the simulated figure it is compared with:
//   allocated   torch.cuda.max_memory_allocated()      -> allocated_peak_bytes
//   active      torch active_bytes.all.peak             -> allocated_peak_bytes (blocks in use;
//               equal to allocated on one stream without record_stream)
//   reserved    torch.cuda.max_memory_reserved()        -> reserved_peak_bytes
//   nvidia-smi  NVML used memory (includes the context) -> reserved_peak_bytes + the device's
//               `reserved` (CUDA context, workspaces); the caching allocator never returns
//               segments, so the figure at the end of training is the peak
enum class MemoryKind { allocated, active, reserved, nvidia_smi };
std::string kind_name(MemoryKind k);
// The kind a source's description names ("peak memory active (torch active_bytes.all.peak)",
// "nvidia-smi used memory"), or nullopt when it names none or says it does not say.
std::optional<MemoryKind> classify_kind(const std::string& description);

// How a source's throughput relates to the run's GPUs: `per_gpu` (torchtune's logged
// tokens_per_second_per_gpu, one rank's tokens over its step), `total` (every rank's tokens),
// `none` (not compared). One GPU: both readings agree, so `unset` is taken as per GPU; several:
// the case must say.
enum class ThroughputScope { unset, per_gpu, total, none };
std::string scope_name(ThroughputScope s);

// One line of the case file.
struct MemoryCase {
  std::string id;
  std::string scenario;              // path, resolved against the case file's folder
  std::optional<MemoryKind> kind;    // unset: the kind the measured description names
  ThroughputScope throughput = ThroughputScope::unset;
  core::SourceLocation at;           // the case's entry in the case file
  std::string key_path;              // "cases[3]"
};
// Throws core::ConfigError at file:line:column for a bad entry (unknown key, missing id or
// scenario, unknown kind, an id listed twice).
std::vector<MemoryCase> read_memory_cases(const std::string& path);

// One case of the measured set: id, group, measured.peak_memory_GiB and measured.kind.
struct MeasuredMemory {
  std::string id, group;
  std::optional<double> gib;  // null in the source: a bound, an OOM or throughput only
  std::string kind_text;
  // measured.tokens_per_s / measured.samples_per_s, where the source prints a throughput
  std::optional<double> tokens_per_s, samples_per_s;
  core::SourceLocation at;
};
std::map<std::string, MeasuredMemory> read_measured_memory(const std::string& path);

// The simulated figures of one scenario (the fullest device of each).
struct SimulatedMemory {
  core::Bytes allocated{}, reserved{}, nvidia_smi{};
  bool fits = true;
  double step_time_s = 0;                       // the played step
  std::int64_t samples = 0, tokens = 0, gpus = 1;  // per step, over every GPU
  core::Bytes of(MemoryKind k) const;
};
SimulatedMemory simulate_memory(const std::string& scenario_path);

struct MemoryResult {
  std::string id, group, scenario;
  MemoryKind kind = MemoryKind::allocated;
  double measured_gib = 0, predicted_gib = 0;
  double error = 0;  // (predicted - measured) / measured
  SimulatedMemory simulated;
  ThroughputScope throughput_scope = ThroughputScope::unset;  // the case's `throughput`
  // The throughput comparison, where the measured case has one and the case compares it.
  struct Throughput {
    std::string unit;  // "tokens/s" or "samples/s"
    ThroughputScope scope = ThroughputScope::per_gpu;
    double measured = 0, predicted = 0;
    double step_error = 0;  // predicted step / measured step - 1 = measured / predicted - 1
  };
  std::optional<Throughput> throughput;
};
// Pairs every case with its measurement (a case the measured set lacks, or whose measurement
// is null or of no stated kind while the case names none, is a ConfigError at the case) and
// simulates it. `on_progress` is told of each case simulated.
std::vector<MemoryResult> compare_memory(const std::vector<MemoryCase>& cases,
                                         const std::map<std::string, MeasuredMemory>& measured,
                                         const std::function<void(int)>& on_progress = {});

// Error statistics over "all", "group=<group>" and "kind=<kind>".
std::map<std::string, ErrorStats> memory_subsets(const std::vector<MemoryResult>& results);
// Step-time error statistics of the cases with a throughput: "time:all", "time:group=<group>".
std::map<std::string, ErrorStats> throughput_subsets(const std::vector<MemoryResult>& results);

}  // namespace trainsim::validation
