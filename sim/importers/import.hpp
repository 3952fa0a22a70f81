#pragma once
// `trainsim import KIND FILE`: a scenario YAML from a training framework's own config.
// The mappings (option -> scenario key) and their sources are in docs/import.md.
#include <string>
#include <vector>

#include "sim/importers/draft.hpp"

namespace trainsim::importers {

// The kinds `import` reads: "megatron", "deepspeed", "torchtitan", "hf-trainer", "torchtune", "litgpt", "trl", "llm-foundry".
const std::vector<std::string>& kinds();

// Reads `path` as a config of `kind` and maps it to a scenario. Bad input (unreadable file,
// syntax, wrong types, values trainsim cannot represent) throws core::ConfigError located in
// the file where the format allows, naming the option. The Draft lists what was ignored.
Draft import_config(const std::string& kind, const std::string& path, const ImportOptions& o);

// Each importer: the file's text already read.
Draft import_megatron(const std::string& text, const std::string& path, const ImportOptions& o);
Draft import_deepspeed(const std::string& text, const std::string& path, const ImportOptions& o);
Draft import_torchtitan(const std::string& text, const std::string& path, const ImportOptions& o);
Draft import_hf_trainer(const std::string& text, const std::string& path, const ImportOptions& o);
Draft import_torchtune(const std::string& text, const std::string& path, const ImportOptions& o);
Draft import_litgpt(const std::string& text, const std::string& path, const ImportOptions& o);
Draft import_trl(const std::string& text, const std::string& path, const ImportOptions& o);
Draft import_llm_foundry(const std::string& text, const std::string& path, const ImportOptions& o);

}  // namespace trainsim::importers
