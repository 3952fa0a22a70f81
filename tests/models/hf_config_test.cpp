// Hugging Face config.json import: exact published counts for every shipped config, the
// family-specific structure, and located errors (file:line:column in the JSON file).
#include <catch2/catch.hpp>

#include <optional>

#include "hf_files.hpp"

using namespace trainsim;
using namespace trainsim::models;
using namespace trainsim::test;

namespace {

const std::string kLlama = R"({
  "model_type": "llama",
  "hidden_size": 256,
  "intermediate_size": 512,
  "num_attention_heads": 4,
  "num_hidden_layers": 2,
  "vocab_size": 1000
}
)";

}  // namespace

TEST_CASE("shipped HF configs give the published parameter counts", "[hf][oracle]") {
  CHECK(hf("Llama-2-7b-hf").parameters() == 6'738'415'616);
  CHECK(hf("Meta-Llama-3-8B").parameters() == 8'030'261'248);
  // Code Llama 34B (fms-fsdp's "34b"): 48 x 692,076,544 per block (4 x 8,192^2 less GQA-8's
  // 2 x 8,192 x 7,168, 3 x 8,192 x 22,016, two norms) + 2 x 32,000 x 8,192 + the final norm.
  CHECK(hf("CodeLlama-34b-hf").parameters() == 33'743'970'304);
  // Llama 3.2 3B, tied head: 128,256 x 3,072 embedding + 28 x 100,669,440 per block + 3,072 norm.
  CHECK(hf("Llama-3.2-3B").parameters() == 3'212'749'824);
  CHECK(hf("Mistral-7B-v0.1").parameters() == 7'241'732'096);
  CHECK(hf("Mixtral-8x7B-v0.1").parameters() == 46'702'792'704);
  CHECK(hf("Qwen2-7B").parameters() == 7'615'616'512);
  CHECK(hf("gemma-2b").parameters() == 2'506'172'416);
  CHECK(hf("gpt2").parameters() == 124'439'808);
  CHECK(hf("pythia-1b").parameters() == 1'011'781'632);
  CHECK(hf("phi-2").parameters() == 2'779'683'840);
  CHECK(hf("falcon-7b").parameters() == 6'921'720'704);
  CHECK(hf("bert-base-uncased").parameters() == 109'482'240);
  CHECK(hf("bert-large-uncased").parameters() == 335'141'888);
}

TEST_CASE("an HF model is named after its folder unless given a name", "[hf]") {
  CHECK(hf("gpt2").name == "gpt2");
  CHECK(build("model: {hf_config: models/hf/gpt2/config.json, name: mine}").name == "mine");
}

TEST_CASE("HF families wire their blocks and biases as published", "[hf]") {
  // Pythia (gpt_neox): parallel residual with two norms; ln2 reads the x that ln1 keeps.
  const Model neox = hf("pythia-1b");
  CHECK(layer(neox, "block.0.ln2").saved.value == 0);
  CHECK(layer(neox, "block.0.ln1").saved.value == 2 * 128 * 2048);
  // phi-2: one shared norm; the MLP does not keep the tensor the attention keeps.
  const Model phi = hf("phi-2");
  CHECK_FALSE(find_layer(phi, "block.0.ln2"));
  CHECK(layer(phi, "loss").params == 51200 * 2560 + 51200);  // untied head with bias
  // Falcon-7B: multi-query attention, 71 heads of 64, no biases.
  const Model falcon = hf("falcon-7b");  // keep the model alive: layer() returns a reference
  const Layer& fa = layer(falcon, "block.0.attn");
  CHECK(fa.kv_heads == 1);
  CHECK(fa.params == 4544 * (4544 + 2 * 64) + 4544 * 4544);
  // Qwen2: biases on q, k, v only.
  const Model qwen = hf("Qwen2-7B");
  const Layer& qa = layer(qwen, "block.0.attn");
  CHECK(qa.params == 3584 * (3584 + 2 * 512) + (3584 + 2 * 512) + 3584 * 3584);
  // Gemma: head_dim 256, one KV head, tied head, GeGLU.
  const Model gemma = hf("gemma-2b");
  CHECK(layer(gemma, "block.0.attn").params == 2048 * (2048 + 2 * 256) + 2048 * 2048);
  CHECK(layer(gemma, "loss").params == 0);
  // GPT-2: n_inner null means 4h; learned positions bound seq_len.
  CHECK(layer(hf("gpt2"), "block.0.mlp").params == 2 * 768 * 3072 + 3072 + 768);
}

TEST_CASE("HF configs build the same graphs as the matching presets", "[hf]") {
  const BuildOptions opts{256, DType::bf16, false};
  for (const char* pair : {"llama2-7b Llama-2-7b-hf", "gpt2 gpt2", "bert-base bert-base-uncased"}) {
    const std::string s = pair;
    const auto space = s.find(' ');
    const Model a = build("model: " + s.substr(0, space), opts);
    const Model b = hf(s.substr(space + 1), opts);
    INFO(s);
    CHECK(a.parameters() == b.parameters());
    CHECK(saved_per_sample(a) == saved_per_sample(b));
    CHECK(a.forward_flops_per_sample() == b.forward_flops_per_sample());
    CHECK(boost::num_edges(a.graph) == boost::num_edges(b.graph));
  }
}

TEST_CASE("HF config JSON parses compactly and minimally", "[hf]") {
  const std::string path = write_json(
      R"({"model_type":"llama","hidden_size":256,"intermediate_size":512,)"
      R"("num_attention_heads":4,"num_hidden_layers":2,"vocab_size":1000,"rope_scaling":null})");
  const Model m = build("model: {hf_config: " + path + "}");
  CHECK(m.parameters() == 2 * (2 * 256 + 4 * 256 * 256 + 3 * 256 * 512) + 256 + 2 * 1000 * 256);
}

TEST_CASE("HF config errors are located in the JSON file", "[hf][errors]") {
  // Unknown model_type, at its value.
  auto e = error_of(R"({
  "model_type": "t5",
  "hidden_size": 512
})");
  CHECK(e.where().line == 2);
  CHECK(e.where().column == 17);
  CHECK_THAT(e.what(), Catch::Contains("unknown model_type 't5'; supported: llama"));
  // A missing required field, at the object, naming the field.
  const std::string no_heads = [] {
    std::string s = kLlama;
    s.erase(s.find("  \"num_attention_heads\": 4,\n"), 28);
    return s;
  }();
  e = error_of(no_heads);
  CHECK(e.where().line == 1);
  CHECK(e.where().column == 1);
  CHECK_THAT(e.what(),
             Catch::Contains("model.hf_config: missing 'num_attention_heads' (required for "
                             "model_type 'llama')"));
  // Missing model_type.
  CHECK_THAT(error_of("{\"hidden_size\": 4}").what(), Catch::Contains("missing 'model_type'"));
  // Malformed JSON (a missing comma), at the parser's line:column.
  e = error_of("{\n  \"model_type\": \"llama\"\n  \"hidden_size\": 256\n}\n");
  CHECK(e.where().line == 3);
  CHECK(e.where().column > 0);
  CHECK_THAT(e.what(), Catch::Contains("not valid JSON"));
  // Wrong types, at the value.
  std::string s = kLlama;
  s.replace(s.find("256"), 3, "\"256\"");
  e = error_of(s);
  CHECK(e.where().line == 3);
  CHECK(e.where().column == 18);
  CHECK_THAT(e.what(), Catch::Contains("'hidden_size': expected a positive integer, got the "
                                       "string \"256\""));
  s = kLlama;
  s.replace(s.find("\"vocab_size\": 1000"), 18, "\"vocab_size\": 1000, \"tie_word_embeddings\": 1");
  CHECK_THAT(error_of(s).what(), Catch::Contains("'tie_word_embeddings': expected true or false"));
  s = kLlama;
  s.replace(s.find("4,"), 2, "0,");
  CHECK_THAT(error_of(s).what(), Catch::Contains("'num_attention_heads': expected a positive"));
  CHECK_THAT(error_of("[1, 2]").what(), Catch::Contains("expected a JSON object"));
  // A key twice: JSON parsers keep the last, yaml-cpp the first; both lines are named.
  s = kLlama;
  s.replace(s.find("  \"vocab_size\""), 0, "  \"hidden_size\": 512,\n");
  e = error_of(s);
  CHECK(e.where().line == 7);
  CHECK(e.where().column == 3);
  CHECK_THAT(e.what(), Catch::Contains("model.hf_config: duplicate key 'hidden_size' (first at "
                                       "line 3, column 3)"));
  // Bytes that are not UTF-8 text, named at the scenario's key (the file is named in the text).
  const std::string latin1 = write_json("{\"model_type\": \"caf\xE9\"}");
  try {
    build("model: {hf_config: " + latin1 + "}");
    FAIL("no error for a Latin-1 config.json");
  } catch (const core::ConfigError& x) {
    CHECK(x.where().file == "scenario.yaml");
    CHECK_THAT(x.what(), Catch::Contains("is not UTF-8 text: byte 20 is 0xE9 (line 1, column 20)"));
  }
}

TEST_CASE("HF import errors in the scenario are located there", "[hf][errors]") {
  auto scenario_error = [](const std::string& doc, BuildOptions opts) {
    try {
      build(doc, opts);
    } catch (const core::ConfigError& e) {
      CHECK(e.where().file == "scenario.yaml");
      return std::optional<core::ConfigError>(e);
    }
    return std::optional<core::ConfigError>();
  };
  const BuildOptions opts{128, DType::bf16, false};
  auto e = scenario_error("model:\n  hf_config: no/such/config.json\n", opts);
  REQUIRE(e);
  CHECK(e->where().line == 2);
  CHECK(e->where().column == 14);
  CHECK_THAT(e->what(), Catch::Contains("no/such/config.json' does not exist"));
  // A directory (the fuzzer's `hf_config: ..`): once an uncaught std::ios_base::failure.
  e = scenario_error("model:\n  hf_config: ..\n", opts);
  REQUIRE(e);
  CHECK(e->where().line == 2);
  CHECK(e->where().column == 14);
  CHECK(e->key_path() == "model.hf_config");
  CHECK_THAT(e->what(), Catch::Contains("is a directory"));
  e = scenario_error("model: {hf_config: models/hf/gpt2}\n", opts);
  REQUIRE(e);
  CHECK_THAT(e->what(), Catch::Contains("models/hf/gpt2' is a directory"));
  e = scenario_error("model: {hf_config: models/hf/gpt2/config.json}\n",
                     {2048, DType::bf16, false});
  REQUIRE(e);
  CHECK_THAT(e->what(), Catch::Contains("exceeds max_positions (1024)"));
  e = scenario_error("model: {hf_config: models/hf/gpt2/config.json, layers: 3}\n", opts);
  REQUIRE(e);
  CHECK(e->key_path() == "model.layers");
}

TEST_CASE("BertForSequenceClassification has a classifier instead of the MLM head", "[hf]") {
  // transformers' BertModel for bert-large-uncased has 335,141,888 parameters (the test above);
  // BertForSequenceClassification adds classifier = nn.Linear(1024, num_labels = 2):
  // 1024 x 2 + 2 = 2,050, so 335,143,938 (what model.num_parameters() prints).
  const Model cls = hf("bert-large-uncased-cls");
  CHECK(cls.parameters() == 335'143'938);
  CHECK(layer(cls, "classifier").params == 2'050);
  // No tokens x vocab logits: the loss works on one row of 2 classes per sample, while the MLM
  // head's loss keeps the 128 x 30,522 logits of every sample.
  const Model mlm = hf("bert-large-uncased");
  CHECK(layer(cls, "loss").saved.value < layer(mlm, "loss").saved.value / 1000);

  // num_labels, else id2label's entries, else PretrainedConfig's 2.
  const std::string base = R"({"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 1,
    "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 100,
    "architectures": ["BertForSequenceClassification"])";
  auto classifier_params = [&](const std::string& extra) {
    const Model m = build("model: {hf_config: " + write_json(base + extra + "}") + "}");
    return layer(m, "classifier").params;
  };
  CHECK(classifier_params(R"(, "num_labels": 5)") == 64 * 5 + 5);
  CHECK(classifier_params(R"(, "id2label": {"0": "a", "1": "b", "2": "c"})") == 64 * 3 + 3);
  CHECK(classifier_params("") == 64 * 2 + 2);
  CHECK(std::string(error_of(base + R"(, "num_labels": 0})").what()).find("num_labels") !=
        std::string::npos);
}

TEST_CASE("Llama-3.2-3B counts as transformers reports it", "[hf]") {
  // Tied embeddings: 128,256 x 3,072 = 394,002,432; per layer q and o 3,072^2 each, k and v
  // 3,072 x 1,024 each, the MLP 3 x 3,072 x 8,192, two norms of 3,072: 100,669,440; x 28 layers,
  // plus the final norm: 3,212,749,824.
  CHECK(hf("Llama-3.2-3B").parameters() == 3'212'749'824);
}
