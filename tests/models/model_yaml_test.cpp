// Model YAML: the scenario `model:` forms, and located errors (line, column, key path).
#include <catch2/catch.hpp>

#include <optional>

#include "models/model_yaml.hpp"
#include "models/presets.hpp"
#include "sim/core/error.hpp"

using namespace trainsim;
using namespace trainsim::models;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;
const BuildOptions kOpts{128, DType::bf16, false};

// Builds `model:` of a scenario-like document.
Model build(const std::string& doc) {
  const YAML::Node root = YAML::Load(doc);
  return build_model(root["model"], "scenario.yaml", "model", kOpts, kRoot);
}

std::optional<core::ConfigError> error_of(const std::string& doc) {
  try {
    build(doc);
  } catch (const core::ConfigError& e) {
    return e;
  }
  return std::nullopt;
}

// Asserts the error's place, key path and that its message says `says`.
void check_error(const std::string& doc, int line, int column, const std::string& key_path,
                 const std::string& says) {
  const auto e = error_of(doc);
  REQUIRE(e);
  INFO(e->what());
  CHECK(e->where().file == "scenario.yaml");
  CHECK(e->where().line == line);
  CHECK(e->where().column == column);
  CHECK(e->key_path() == key_path);
  const std::string what = e->what();
  CHECK_THAT(what, Catch::Contains(says));
  CHECK_THAT(what, Catch::Contains("scenario.yaml:" + std::to_string(line) + ":" +
                                   std::to_string(column) + ": " + key_path));
}

// A small valid graph; tests break one thing at a time.
const std::string kTiny = R"(model:
  name: tiny
  layers:
    - {name: embed, kind: embedding, vocab: 1000, hidden: 64, max_positions: 128}
    - name: block
      repeat: 2
      layers:
        - {name: ln1, kind: layernorm, hidden: 64}
        - {name: attn, kind: attention, hidden: 64, heads: 4}
        - {name: add1, kind: add, hidden: 64, inputs: [attn, input]}
    - {name: ln_f, kind: layernorm, hidden: 64}
    - {name: loss, kind: loss, vocab: 1000, hidden: 64, head: tied}
)";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("an inline layer graph builds with groups, block inputs and default inputs", "[yaml]") {
  const Model m = build(kTiny);
  CHECK(m.name == "tiny");
  CHECK(m.num_blocks == 2);
  CHECK(m.hidden == 64);
  CHECK(m.seq_len == 128);
  CHECK(boost::num_vertices(m.graph) == 1 + 2 * 3 + 2);
  const Vertex add1 = *find_layer(m, "block.1.add1");
  CHECK(m.graph[add1].block == 1);
  std::vector<std::string> inputs;
  for (auto e : boost::make_iterator_range(boost::in_edges(add1, m.graph)))
    inputs.push_back(m.graph[boost::source(e, m.graph)].name);
  CHECK(inputs == std::vector<std::string>{"block.1.attn", "block.0.add1"});
  // Default input of the first layer of a copy is the copy's input.
  const Vertex ln1 = *find_layer(m, "block.0.ln1");
  REQUIRE(boost::in_degree(ln1, m.graph) == 1);
  CHECK(m.graph[boost::source(*boost::in_edges(ln1, m.graph).first, m.graph)].name == "embed");
  const std::int64_t h = 64;
  CHECK(m.parameters() == 1000 * h + 128 * h + 2 * (2 * h + 4 * h * h + 4 * h) + 2 * h);
}

TEST_CASE("the model forms: preset name, preset with overrides, file, inline", "[yaml]") {
  CHECK(build("model: gpt2").parameters() == 124'439'808);
  // GPT-2 small widened and deepened to GPT-2 large's shape has GPT-2 large's count.
  const Model large =
      build("model: {preset: gpt2, layers: 36, hidden: 1280, heads: 20, name: big}");
  CHECK(large.parameters() == 774'030'080);
  CHECK(large.name == "big");
  CHECK(build("model: {file: models/presets/gpt2.yaml}").parameters() == 124'439'808);
  CHECK(build("model: {preset: resnet50, name: r}").name == "r");
  // Llama 2 70B from the 7B preset (GQA with 8 KV heads): HF's 68,976,648,192 parameters.
  CHECK(build("model: {preset: llama2-7b, layers: 80, hidden: 8192, heads: 64, kv_heads: 8, "
              "ffn: 28672}")
            .parameters() == 68'976'648'192);
  CHECK(build("model: {preset: llama2-7b, layers: 2}").parameters() ==
        2 * 32000 * 4096 + 2 * (2 * 4096 + 4 * 4096 * 4096 + 3 * 4096 * 11008) + 4096);
}

TEST_CASE("located errors: keys", "[yaml][errors]") {
  // 1. Unknown key (a typo) at the key itself.
  check_error(replace(kTiny, "heads: 4", "head: 4"), 9, 53, "model.layers[1].layers[1].head",
              "unknown key 'head'");
  // 2. Missing required key at the layer map.
  check_error(replace(kTiny, ", heads: 4", ""), 9, 11, "model.layers[1].layers[1]",
              "missing required key 'heads'");
  // 3. Wrong type.
  check_error(replace(kTiny, "vocab: 1000, hidden: 64, max", "vocab: lots, hidden: 64, max"), 4, 45,
              "model.layers[0].vocab", "expected a positive integer, got 'lots'");
  // 4. Zero size.
  check_error(replace(kTiny, "heads: 4", "heads: 0"), 9, 60, "model.layers[1].layers[1].heads",
              "expected a positive integer, got '0'");
  // 5. Negative size.
  check_error(replace(kTiny, "repeat: 2", "repeat: -2"), 6, 15, "model.layers[1].repeat",
              "expected a positive integer, got '-2'");
  // 6. Not an integer.
  check_error(replace(kTiny, "max_positions: 128", "max_positions: 12.5"), 4, 78,
              "model.layers[0].max_positions", "expected an integer >= 0, got '12.5'");
  // 7. Wrong boolean.
  check_error(replace(kTiny, "heads: 4", "heads: 4, bias: maybe"), 9, 69,
              "model.layers[1].layers[1].bias", "expected true or false, got 'maybe'");
}

TEST_CASE("located errors: kinds, names and inputs", "[yaml][errors]") {
  // 8. Unknown kind.
  check_error(replace(kTiny, "kind: attention", "kind: transformer"), 9, 30,
              "model.layers[1].layers[1].kind", "unknown layer kind 'transformer'");
  // 9. Unknown input name.
  check_error(replace(kTiny, "inputs: [attn, input]", "inputs: [atn, input]"), 10, 56,
              "model.layers[1].layers[2].inputs[0]", "unknown input 'atn'");
  // 10. Duplicate names in one list.
  check_error(replace(kTiny, "{name: ln_f,", "{name: embed,"), 11, 14, "model.layers[2].name",
              "duplicate name 'embed'");
  // 11. A cycle through explicit inputs.
  check_error(replace(kTiny, "{name: ln_f, kind: layernorm, hidden: 64}",
                      "{name: ln_f, kind: layernorm, hidden: 64, inputs: [loss]}"),
              11, 57, "model.layers[2].inputs", "must not form a cycle");
  // 12. Dimensions that do not fit together (heads must divide hidden).
  check_error(replace(kTiny, "heads: 4", "heads: 5"), 9, 11, "model.layers[1].layers[1]",
              "heads (5) must divide hidden (64)");
  // 13. `inputs` not a list.
  check_error(replace(kTiny, "inputs: [attn, input]", "inputs: attn"), 10, 55,
              "model.layers[1].layers[2].inputs", "expected a list of layer names");
  // 14. Groups do not nest.
  check_error(replace(kTiny, "{name: ln1, kind: layernorm, hidden: 64}",
                      "{name: inner, layers: [{name: x, kind: add, hidden: 64}]}"),
              8, 11, "model.layers[1].layers[0]", "groups cannot be nested");
  // 15. An element-wise layer needs exactly one size form.
  check_error(replace(kTiny, "{name: add1, kind: add, hidden: 64,",
                      "{name: add1, kind: add, hidden: 64, channels: 3,"),
              10, 11, "model.layers[1].layers[2]", "not both");
}

TEST_CASE("located errors: model forms", "[yaml][errors]") {
  // 16. Unknown preset, listing the known ones.
  check_error("model: gpt5\n", 1, 8, "model", "known presets: gpt2, gpt2-medium");
  // 17. Overrides a preset does not take.
  check_error("model:\n  preset: resnet50\n  hidden: 12\n", 3, 3, "model.hidden",
              "expected one of: preset, name");
  // 18. An override that breaks the model.
  check_error("model: {preset: gpt2, heads: 7}\n", 1, 8, "model", "heads (7) must divide hidden");
  // 19. A model file that does not exist, located at the `file` value.
  check_error("model:\n  file: no/such/model.yaml\n", 2, 9, "model.file",
              "no/such/model.yaml' does not exist");
  // 20. None of the forms.
  check_error("model: {layer: []}\n", 1, 8, "model", "expected one of the keys");
  check_error("model: [gpt2]\n", 1, 8, "model", "expected a preset name");
}

TEST_CASE("load_model_file names a missing file and locates errors in the file", "[yaml][errors]") {
  try {
    load_model_file("/nonexistent/model.yaml", kOpts);
    FAIL("no error");
  } catch (const core::ConfigError& e) {
    CHECK(e.where().file == "/nonexistent/model.yaml");
    CHECK_THAT(std::string(e.what()), Catch::Contains("/nonexistent/model.yaml"));
  }
  // A model file's own errors carry its path and a key path from its root.
  const std::string file = kRoot + "/models/presets/gpt2.yaml";
  const Model m = load_model_file(file, kOpts);
  CHECK(m.parameters() == 124'439'808);
  CHECK_THROWS_AS(load_model_file(file, {2048, DType::bf16, false}), core::ConfigError);
  try {
    load_model_file(file, {2048, DType::bf16, false});
  } catch (const core::ConfigError& e) {
    CHECK(e.where().file == file);
    CHECK(e.where().line == 5);
    CHECK(e.key_path() == "layers[0]");
    CHECK_THAT(std::string(e.what()), Catch::Contains("exceeds max_positions (1024)"));
  }
}

TEST_CASE("the layer cap counts the whole model, before building past it",
          "[yaml][errors][limits]") {
  // kTiny holds embed + 2 copies x 3 layers + ln_f + loss = 9 layers.
  auto build_with = [](const std::string& doc, std::int64_t max_layers) {
    BuildOptions opts = kOpts;
    opts.max_layers = max_layers;
    return build_model(YAML::Load(doc)["model"], "scenario.yaml", "model", opts, kRoot);
  };
  auto message = [&](const std::string& doc, std::int64_t max_layers) -> std::string {
    try {
      build_with(doc, max_layers);
    } catch (const core::ConfigError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(build_with(kTiny, 9).order.size() == 9);
  // The group passes the cap: refused at its repeat, with the count it would reach.
  CHECK_THAT(
      message(kTiny, 6),
      Catch::StartsWith("scenario.yaml:6:15: model.layers[1].repeat: the model, with this "
                        "group's 2 copies of 3 layers, would hold 7 layers in all, more than "
                        "limits.max_layers = 6; raise it with limits: {max_layers: N}"));
  // A plain layer after the group passes it: refused at that layer.
  CHECK_THAT(
      message(kTiny, 8),
      Catch::StartsWith("scenario.yaml:12:7: model.layers[3]: the model would hold 9 layers"));
  // A preset's blocks are counted before the blocks are built.
  CHECK_THAT(message("model: {preset: gpt2, layers: 2000000000}", 25'000),
             Catch::Contains("model.layers: this model's 2000000000 blocks of 6 layers would hold "
                             "12000000003 layers in all, more than limits.max_layers = 25000"));
  CHECK(build_with("model: {preset: gpt2, layers: 100}", 603).order.size() == 603);
  CHECK_THAT(message("model: {preset: gpt2, layers: 100}", 602),
             Catch::Contains("would hold 603 layers"));
}
