#pragma once
// The units published tables give a training step's speed in, and how each becomes a step
// time (the error is always computed on step time). Formulas and sources: docs/validation.md,
// "Measured units".
#include <cstdint>
#include <string>

namespace trainsim::validation {

enum class MeasuredUnit { ms, s, tokens_per_s, tokens_per_s_per_gpu, samples_per_s, tflops_per_gpu, mfu };

// "ms", "s", "tokens/s", "tokens/s/gpu", "samples/s", "tflops/gpu", "mfu"; throws
// core::ConfigError located at "--measured-unit TEXT" naming the accepted spellings otherwise.
MeasuredUnit parse_measured_unit(const std::string& text);
const char* unit_name(MeasuredUnit unit);
// A time (ms, s) is known before simulating; the rates need the simulated step's counts.
inline bool is_time(MeasuredUnit u) { return u == MeasuredUnit::ms || u == MeasuredUnit::s; }

// What one simulated step holds that the conversions need.
struct StepCounts {
  double tokens = 0;          // global_batch x seq_len (Plan::tokens)
  double samples = 0;         // global_batch (Plan::samples)
  double devices = 0;         // GPUs of the job (Plan::devices_total)
  double hardware_flops = 0;  // with recomputation (Plan::hardware_flops)
  double model_flops = 0;     // without recomputation (Plan::model_flops)
  double peak_flops = 0;      // FLOP/s of all the job's GPUs together at the training precision
};

// The step time, in seconds, at which the job would show `value` in `unit`. For ms and s the
// counts are not read. Returns 0 when a count the unit needs is 0 (e.g. tokens/s of an image
// model), so the caller can say the row cannot be compared in that unit.
double step_seconds(MeasuredUnit unit, double value, const StepCounts& c);

}  // namespace trainsim::validation
