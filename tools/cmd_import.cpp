// `trainsim import KIND FILE`: writes the scenario a training framework's config describes
// (docs/import.md). Ignored options go to standard error and into the YAML's header.
#include <iostream>
#include <memory>

#include <boost/program_options.hpp>

#include "sim/core/output_file.hpp"
#include "sim/importers/import.hpp"
#include "tools/commands.hpp"

namespace po = boost::program_options;

namespace trainsim::tools {

int cmd_import(const std::vector<std::string>& args) {
  po::options_description opts(
      "trainsim import KIND FILE [options]\n"
      "KIND: megatron (a file of Megatron-LM arguments), deepspeed (ds_config.json),\n"
      "      torchtitan (job TOML), hf-trainer (TrainingArguments JSON),\n"
      "      torchtune (recipe config YAML), litgpt (finetune config YAML),\n"
      "      trl (trl sft --config YAML), llm-foundry (Composer train YAML)");
  importers::ImportOptions io;
  std::string output;
  opts.add_options()("help,h", "show this help")(
      "model", po::value<std::string>(), "model preset or Hugging Face config.json (deepspeed, hf-trainer; replaces the model torchtitan, torchtune, litgpt and trl configs name)")(
      "gpus", po::value<std::int64_t>(), "GPUs in all; the data-parallel degree is what the config's other degrees leave")(
      "gpus-per-node", po::value<std::int64_t>(), "GPUs per node (cluster.gpus_per_node); default: the scenario's, min(GPUs, 8)")(
      "device", po::value<std::string>(), "device preset (trainsim devices); default h100-80gb")(
      "seq-len", po::value<std::int64_t>(), "tokens per sample; replaces the config's (required for deepspeed, hf-trainer; torchtune, litgpt, trl: the padded length of a batch)")(
      "output,o", po::value<std::string>(&output), "write the scenario here instead of standard output");
  po::options_description hidden;
  hidden.add_options()("args", po::value<std::vector<std::string>>(), "KIND FILE");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("args", 2);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts
              << "\nUnknown options are listed as ignored (standard error and the YAML's header); values\n"
                 "trainsim cannot represent are errors naming the option. Mappings: docs/import.md.\n"
                 "exit codes: 0 written, 2 bad input or usage, 5 resources exhausted, 1 internal error\n";
    return kExitFits;
  }
  const auto positional = vm.count("args") ? vm["args"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (positional.size() != 2) throw po::error("expected KIND and FILE");
  if (vm.count("model")) io.model = vm["model"].as<std::string>();
  if (vm.count("gpus")) io.gpus = vm["gpus"].as<std::int64_t>();
  if (vm.count("gpus-per-node")) io.gpus_per_node = vm["gpus-per-node"].as<std::int64_t>();
  if (vm.count("device")) io.device = vm["device"].as<std::string>();
  if (vm.count("seq-len")) io.seq_len = vm["seq-len"].as<std::int64_t>();
  io.output = output;
  const importers::Draft d = importers::import_config(positional[0], positional[1], io);
  for (const auto& i : d.ignored) std::cerr << "trainsim import: ignored " << i << "\n";
  const std::string yaml = importers::to_yaml(d);
  if (output.empty()) {
    std::cout << yaml;
  } else {
    core::OutputFile out(output, "--output");
    out.stream() << yaml;
    out.close();
  }
  return kExitFits;
}

}  // namespace trainsim::tools
