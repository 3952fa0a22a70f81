#pragma once
// Entry points shared by the libFuzzer targets (tests/fuzz/fuzz_*.cpp, clang builds) and the
// regression replay test (every build): each takes one input and returns normally when the
// input was accepted or cleanly rejected (core::ConfigError, core::OverflowError, or a parser's
// std::invalid_argument where that is its documented contract). Anything else escaping -- an
// InternalError, another exception, a crash, a sanitizer report -- is a finding.
#include <stdexcept>
#include <string_view>

namespace trainsim::fuzz {

// A broken invariant that the harness itself checks (e.g. a parser returning a negative size).
class Finding : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// A scenario file: written to a temporary file and loaded; small valid ones are also lowered
// and played (the player checks its own invariants) and played twice to compare timelines.
void scenario_input(std::string_view data);
// A model value (YAML or JSON): models::build_model, then a one-GPU step when small.
void model_input(std::string_view data);
// A Hugging Face config.json, written to a file and built through {hf_config: PATH}.
void hf_config_input(std::string_view data);
// `--set` arguments, one per line, applied to a fixed valid scenario and loaded.
void overrides_input(std::string_view data);
// One quantity text fed to parse_bytes, parse_bandwidth, parse_flop_rate and parse_duration.
void units_input(std::string_view data);

// A sweep file (axes, zip, where; its base inline or {file: sweep-base.yaml}, a small fixed
// scenario beside it): loaded, expanded when under 20,000 grid points, and its first points
// loaded and played.
void sweep_input(std::string_view data);
// A measured-times CSV as `compare` and `calibrate` read it (validation::read_csv), every cell
// through the strict readers (positive finite times, positive whole counts).
void csv_input(std::string_view data);

// A framework config read by each importer of `trainsim import` (Megatron-LM arguments,
// DeepSpeed and HF Trainer JSON, torchtitan TOML); a scenario one of them writes must be YAML
// the scenario loader reads (it may reject its values, never its syntax).
void import_input(std::string_view data);

// The targets by name ("scenario", "model", "hf_config", "overrides", "units", "sweep", "csv",
// "import");
// nullptr when unknown.
using Entry = void (*)(std::string_view);
Entry entry_named(std::string_view target);

}  // namespace trainsim::fuzz
