#include "sim/importers/import.hpp"

#include "sim/core/text_file.hpp"

namespace trainsim::importers {

const std::vector<std::string>& kinds() {
  static const std::vector<std::string> all = {"megatron", "deepspeed", "torchtitan", "hf-trainer", "torchtune", "litgpt", "trl", "llm-foundry"};
  return all;
}

Draft import_config(const std::string& kind, const std::string& path, const ImportOptions& o) {
  auto read = [&] { return core::read_text_file(path, {path, 0, 0}, ""); };
  if (kind == "megatron") return import_megatron(read(), path, o);
  if (kind == "deepspeed") return import_deepspeed(read(), path, o);
  if (kind == "torchtitan") return import_torchtitan(read(), path, o);
  if (kind == "hf-trainer") return import_hf_trainer(read(), path, o);
  if (kind == "torchtune") return import_torchtune(read(), path, o);
  if (kind == "litgpt") return import_litgpt(read(), path, o);
  if (kind == "trl") return import_trl(read(), path, o);
  if (kind == "llm-foundry") return import_llm_foundry(read(), path, o);
  std::string list;
  for (const auto& k : kinds()) list += (list.empty() ? "" : ", ") + k;
  throw core::ConfigError({"trainsim import", 0, 0}, "KIND",
                          "unknown kind '" + kind + "'; expected one of: " + list);
}

}  // namespace trainsim::importers
