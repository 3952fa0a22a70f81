// Presets: published parameter counts, and the shipped YAML files building the same graphs.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include "models/model_yaml.hpp"
#include "models/presets.hpp"

using namespace trainsim;
using namespace trainsim::models;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;

Model preset(const char* name, BuildOptions opts = {}) {
  const Preset* p = find_preset(name);
  REQUIRE(p);
  return build_preset(*p, opts);
}

struct Totals {
  std::int64_t params = 0, params_split = 0, saved = 0, saved_split = 0, core = 0, output = 0;
  double flops = 0;
  std::size_t layers = 0;
  bool operator==(const Totals&) const = default;
};

Totals totals(const Model& m) {
  Totals t;
  for (auto v : boost::make_iterator_range(boost::vertices(m.graph))) {
    const Layer& l = m.graph[v];
    t.params += l.params;
    t.params_split += l.params_split;
    t.saved += l.saved.value;
    t.saved_split += l.saved_split.value;
    t.core += l.saved_attention_core.value;
    t.output += l.output.value;
    t.flops += l.flops;
    ++t.layers;
  }
  return t;
}

}  // namespace

TEST_CASE("presets have their published parameter counts", "[presets][oracle]") {
  // HF transformers / torchvision counts (tied GPT-2 head counted once).
  CHECK(preset("gpt2").parameters() == 124'439'808);
  CHECK(preset("gpt2-medium").parameters() == 354'823'168);
  CHECK(preset("gpt2-large").parameters() == 774'030'080);
  CHECK(preset("gpt2-xl").parameters() == 1'557'611'200);
  CHECK(preset("llama2-7b").parameters() == 6'738'415'616);
  CHECK(preset("resnet50").parameters() == 25'557'032);
  CHECK(preset("mlp").parameters() == 1'863'690);
  // GPT-3 175B: 12*L*h^2 + 13*L*h + (V + P)*h + 2h.
  const std::int64_t L = 96, h = 12288;
  CHECK(preset("gpt3", {2048}).parameters() ==
        12 * L * h * h + 13 * L * h + (50257 + 2048) * h + 2 * h);
}

TEST_CASE("preset shapes", "[presets]") {
  const Model r = preset("resnet50");
  CHECK_FALSE(r.sequence_model);
  CHECK(r.num_blocks == 16);
  const Model g = preset("gpt2", {512});
  CHECK(g.sequence_model);
  CHECK(g.seq_len == 512);
  CHECK(g.num_blocks == 12);
  CHECK(g.hidden == 768);
  std::set<std::string> names;
  for (const auto& p : presets()) {
    CHECK_FALSE(p.description.empty());
    CHECK(names.insert(p.name).second);
  }
  CHECK(find_preset("gpt-2") == nullptr);
  CHECK_THAT(preset_names(), Catch::Contains("llama2-7b"));
}

TEST_CASE("each preset's YAML file builds the same graph as the builtin", "[presets][yaml]") {
  // ViT has no file: the layer-graph format has no token count for image models.
  const std::set<std::string> no_file{"vit-b16", "vit-l16"};
  for (const auto& p : presets()) {
    if (no_file.count(p.name)) continue;
    // 512: within every preset's context (BERT's learned positions).
    for (const BuildOptions opts :
         {BuildOptions{512, DType::bf16, false}, BuildOptions{512, DType::fp32, true}}) {
      INFO(p.name << (opts.flash_attention ? " (fp32, flash)" : " (bf16)"));
      const std::string file = kRoot + "/models/presets/" + p.name + ".yaml";
      REQUIRE(std::filesystem::exists(file));
      const Model builtin = build_preset(p, opts);
      const Model yaml = load_model_file(file, opts);
      CHECK(yaml.name == builtin.name);
      CHECK(yaml.parameters() == builtin.parameters());
      CHECK(saved_per_sample(yaml) == saved_per_sample(builtin));
      CHECK(totals(yaml) == totals(builtin));
      CHECK(yaml.num_blocks == builtin.num_blocks);
      CHECK(yaml.sequence_model == builtin.sequence_model);
      CHECK(yaml.hidden == builtin.hidden);
      CHECK(boost::num_edges(yaml.graph) == boost::num_edges(builtin.graph));
    }
  }
}

TEST_CASE("every model YAML file under models/ loads", "[presets][yaml]") {
  int loaded = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kRoot + "/models")) {
    if (entry.path().extension() != ".yaml") continue;
    INFO(entry.path().string());
    const Model m = load_model_file(entry.path().string(), {512, DType::bf16, false});
    CHECK(m.parameters() > 0);
    CHECK(m.order.size() == boost::num_vertices(m.graph));
    ++loaded;
  }
  CHECK(loaded >= 37);
}
