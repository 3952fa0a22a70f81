#include "sim/validation/measured_unit.hpp"

#include "sim/core/error.hpp"

namespace trainsim::validation {

namespace {

struct Spelling {
  const char* name;
  MeasuredUnit unit;
};
constexpr Spelling kUnits[] = {
    {"ms", MeasuredUnit::ms},
    {"s", MeasuredUnit::s},
    {"tokens/s", MeasuredUnit::tokens_per_s},
    {"tokens/s/gpu", MeasuredUnit::tokens_per_s_per_gpu},
    {"samples/s", MeasuredUnit::samples_per_s},
    {"tflops/gpu", MeasuredUnit::tflops_per_gpu},
    {"mfu", MeasuredUnit::mfu},
};

}  // namespace

MeasuredUnit parse_measured_unit(const std::string& text) {
  std::string names;
  for (const auto& s : kUnits) {
    if (text == s.name) return s.unit;
    names += (names.empty() ? "" : " | ") + std::string(s.name);
  }
  throw core::ConfigError({"--measured-unit " + text, 1, 1}, "", "expected one of " + names);
}

const char* unit_name(MeasuredUnit unit) {
  for (const auto& s : kUnits)
    if (s.unit == unit) return s.name;
  return "?";
}

double step_seconds(MeasuredUnit unit, double value, const StepCounts& c) {
  auto per = [&](double count, double rate) { return count > 0 && rate > 0 ? count / rate : 0.0; };
  switch (unit) {
    case MeasuredUnit::ms: return value * 1e-3;
    case MeasuredUnit::s: return value;
    // tokens/s = global_batch x seq_len / step time.
    case MeasuredUnit::tokens_per_s: return per(c.tokens, value);
    // tokens/s/gpu = global_batch x seq_len / (step time x GPUs).
    case MeasuredUnit::tokens_per_s_per_gpu: return per(c.tokens, value * c.devices);
    case MeasuredUnit::samples_per_s: return per(c.samples, value);
    // Narayanan et al. 2021 eq. (3): FLOPs of a step counting the recomputed forward, per GPU
    // and second, in units of 10^12.
    case MeasuredUnit::tflops_per_gpu: return per(c.hardware_flops, value * 1e12 * c.devices);
    // MFU = model FLOPs of a step (no recomputation) / (step time x peak FLOP/s of all GPUs).
    case MeasuredUnit::mfu: return per(c.model_flops, value * c.peak_flops);
  }
  return 0;
}

}  // namespace trainsim::validation
