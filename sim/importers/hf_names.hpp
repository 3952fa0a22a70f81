#pragma once
// What Hugging Face's TrainingArguments fields mean to trainsim, shared by `import hf-trainer`
// (TrainingArguments JSON) and `import trl` (TRL's CLI YAML, whose fields are a superset).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/importers/draft.hpp"

namespace trainsim::importers {

// `optim` (transformers' OptimizerNames) -> training.optimizer; nullopt: no state model here.
std::optional<std::string> hf_optimizer(const std::string& optim);
// -> training.optimizer_impl where the name selects one (adamw_hf, the fused names).
std::optional<std::string> hf_optimizer_impl(const std::string& optim);

// A Hugging Face repository's name (the last part of meta-llama/Llama-2-7b-hf) -> the preset
// of that shape (Llama 2, Llama 3 / 3.1 / 3.3, Mistral 7B v0.1, GPT-2); nullopt otherwise.
std::optional<std::string> hf_repo_preset(const std::string& repo);

// The `fsdp` words (transformers' FSDPOption) of a space-separated string or a list of them;
// empty when absent or "false"; nullopt when the value is neither.
std::optional<std::vector<std::string>> hf_fsdp_words(const YAML::Node& f);

// `fsdp` words (FSDPOption) through Accelerate's FullyShardedDataParallelPlugin into
// parallel.fsdp; `version` is fsdp_config's (1 or 2); `dtype` the autocast dtype ("" for fp32).
// Errors are located at `at`.
void hf_fsdp(const std::vector<std::string>& words, std::int64_t version, const core::SourceLocation& at,
             const ImportOptions& o, std::int64_t data, const std::string& dtype, Draft& d);

}  // namespace trainsim::importers
