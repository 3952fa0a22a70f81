// Hugging Face config.json families. Each family reads the fields its transformers class
// reads and fills in that class's defaults for the ones a file may leave out; anything that
// does not change parameters, FLOPs or activation memory (rope settings, eps, token ids) is
// ignored. A JSON null counts as absent (gpt2's "n_inner": null means 4h).
#include "models/hf_config.hpp"

#include <charconv>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <vector>

#include "sim/core/error.hpp"

namespace trainsim::models {

namespace {

constexpr const char* kTypes =
    "llama, mistral, mixtral, qwen2, qwen2_moe, qwen3_moe, olmoe, deepseek_v3, gemma, gpt2, gpt_neox, phi, "
    "falcon, bert";

// Typed, located reads of the top-level JSON object.
class JsonReader {
 public:
  JsonReader(const YAML::Node& root, const std::string& file, const std::string& key_path)
      : root_(root), file_(file), key_path_(key_path) {
    if (!root_.IsMap()) fail(root_, "expected a JSON object at the top of the file");
  }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& detail) const {
    const YAML::Mark m = at.Mark();
    const bool known = !m.is_null() && m.line >= 0;
    throw core::ConfigError({file_, known ? m.line + 1 : 0, known ? m.column + 1 : 0}, key_path_,
                            detail);
  }

  // The value of `key`, or an undefined node when absent or null.
  YAML::Node get(const char* key) const {
    const YAML::Node n = root_[key];
    return n.IsDefined() && !n.IsNull() ? n : YAML::Node(YAML::NodeType::Undefined);
  }
  bool has(const char* key) const { return get(key).IsDefined(); }

  std::string string(const char* key) const {
    const YAML::Node n = get(key);
    if (!n.IsDefined()) missing(key);
    if (!n.IsScalar() || n.Tag() != "!")
      fail(n, quoted(key) + ": expected a string, got " + describe(n));
    return n.Scalar();
  }

  std::int64_t positive(const char* key) const {
    const YAML::Node n = get(key);
    if (!n.IsDefined()) missing(key);
    std::int64_t v = 0;
    const std::string& s = n.IsScalar() ? n.Scalar() : std::string();
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (!n.IsScalar() || n.Tag() == "!" || ec != std::errc{} || end != s.data() + s.size() ||
        v <= 0)
      fail(n, quoted(key) + ": expected a positive integer, got " + describe(n));
    return v;
  }
  std::int64_t positive_or(const char* key, std::int64_t fallback) const {
    return has(key) ? positive(key) : fallback;
  }
  // Zero or a positive integer; `fallback` when absent.
  std::int64_t non_negative_or(const char* key, std::int64_t fallback) const {
    const YAML::Node n = get(key);
    if (!n.IsDefined()) return fallback;
    if (n.IsScalar() && n.Tag() != "!" && n.Scalar() == "0") return 0;
    return positive(key);
  }
  // An array of layer indices in [0, layers); empty when absent.
  std::vector<int> indices_or_empty(const char* key, int layers) const {
    const YAML::Node n = get(key);
    std::vector<int> out;
    if (!n.IsDefined()) return out;
    if (!n.IsSequence()) fail(n, quoted(key) + ": expected an array of layer indices, got " +
                                     describe(n));
    for (const YAML::Node& item : n) {
      std::int64_t v = -1;
      const std::string& s = item.IsScalar() ? item.Scalar() : std::string();
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (!item.IsScalar() || item.Tag() == "!" || ec != std::errc{} ||
          end != s.data() + s.size() || v < 0 || v >= layers)
        fail(item, quoted(key) + ": expected layer indices from 0 to " +
                       std::to_string(layers - 1) + ", got " + describe(item));
      out.push_back(static_cast<int>(v));
    }
    return out;
  }
  // Present with a JSON null (DeepSeek's "q_lora_rank": null means a full-rank projection).
  bool is_null(const char* key) const {
    const YAML::Node n = root_[key];
    return n.IsDefined() && n.IsNull();
  }

  bool boolean_or(const char* key, bool fallback) const {
    const YAML::Node n = get(key);
    if (!n.IsDefined()) return fallback;
    if (n.IsScalar() && n.Tag() != "!" && (n.Scalar() == "true" || n.Scalar() == "false"))
      return n.Scalar() == "true";
    fail(n, quoted(key) + ": expected true or false, got " + describe(n));
  }

  // A probability in [0, 1].
  double probability_or(const char* key, double fallback) const {
    const YAML::Node n = get(key);
    if (!n.IsDefined()) return fallback;
    double v = -1;
    if (n.IsScalar() && n.Tag() != "!") {
      const std::string& s = n.Scalar();
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc{} || end != s.data() + s.size()) v = -1;
    }
    if (!(v >= 0 && v <= 1))
      fail(n, quoted(key) + ": expected a number from 0 to 1, got " + describe(n));
    return v;
  }
  // True when any of the dropout probabilities (each with the family's default) is positive.
  bool any_dropout(std::initializer_list<std::pair<const char*, double>> keys) const {
    bool any = false;
    for (const auto& [key, fallback] : keys) any = probability_or(key, fallback) > 0 || any;
    return any;
  }

  [[noreturn]] void missing(const char* key) const {
    fail(root_, "missing " + quoted(key) +
                    (model_type.empty() ? "" : " (required for model_type '" + model_type + "')"));
  }

  std::string model_type;

 private:
  static std::string quoted(const char* key) {
    std::string q(1, '\'');
    q.append(key).push_back('\'');
    return q;
  }
  static std::string describe(const YAML::Node& n) {
    if (n.IsMap()) return "an object";
    if (n.IsSequence()) return "an array";
    if (n.IsScalar()) return n.Tag() == "!" ? "the string \"" + n.Scalar() + "\"" : n.Scalar();
    return "nothing";
  }

  const YAML::Node& root_;
  const std::string& file_;
  const std::string& key_path_;
};

// Llama-style decoders (llama, mistral, mixtral, qwen2, gemma): RMSNorm, gated MLP, rotary.
TransformerConfig llama_like(const JsonReader& j, bool tied_default) {
  TransformerConfig c;
  c.hidden = j.positive("hidden_size");
  c.layers = static_cast<int>(j.positive("num_hidden_layers"));
  c.heads = j.positive("num_attention_heads");
  c.kv_heads = j.positive_or("num_key_value_heads", c.heads);
  c.ffn = j.positive("intermediate_size");
  c.vocab = j.positive("vocab_size");
  c.max_positions = j.positive_or("max_position_embeddings", 2048);
  c.head_dim = j.positive_or("head_dim", 0);
  c.mlp = kinds::MlpActivation::swiglu;
  c.norm = NormKind::rmsnorm;
  c.learned_positions = false;
  c.tied_embeddings = j.boolean_or("tie_word_embeddings", tied_default);
  c.dropout = j.any_dropout({{"attention_dropout", 0.0}});
  c.bias = false;
  c.qkv_bias = c.out_bias = j.boolean_or("attention_bias", false);
  c.mlp_bias = j.boolean_or("mlp_bias", false);
  return c;
}

// Qwen2MoeDecoderLayer's and Qwen3MoeDecoderLayer's rule: block i is sparse unless listed in
// mlp_only_layers or (i + 1) is not a multiple of decoder_sparse_step.
void qwen_dense_blocks(const JsonReader& j, TransformerConfig& c) {
  const std::int64_t step = j.positive_or("decoder_sparse_step", 1);
  c.dense_blocks.assign(static_cast<std::size_t>(c.layers), false);
  for (int i = 0; i < c.layers; ++i) c.dense_blocks[std::size_t(i)] = (i + 1) % step != 0;
  for (int i : j.indices_or_empty("mlp_only_layers", c.layers)) c.dense_blocks[std::size_t(i)] = true;
}

// The mixture-of-experts families that are not Llama with experts: qwen2_moe (routed experts,
// a gated shared expert, dense layers by decoder_sparse_step / mlp_only_layers), qwen3_moe
// (the same without the shared expert, with QK norms), olmoe (QK norms) and deepseek_v3 (MLA attention, shared experts, the first layers dense). Returns false
// for any other model_type.
bool moe_family(const JsonReader& j, const YAML::Node& root, const std::string& type,
                TransformerConfig& c) {
  if (type == "qwen2_moe") {
    c = llama_like(j, false);
    c.qkv_bias = true;  // biases on q, k and v only, as Qwen2
    c.out_bias = c.mlp_bias = false;
    c.experts = j.positive_or("num_experts", 60);
    c.top_k = j.positive_or("num_experts_per_tok", 4);
    c.expert_ffn = j.positive_or("moe_intermediate_size", 1408);
    c.shared_expert_ffn = j.positive_or("shared_expert_intermediate_size", 5632);
    c.shared_expert_gate = true;
    qwen_dense_blocks(j, c);
  } else if (type == "qwen3_moe") {
    // Qwen3MoeDecoderLayer (transformers 4.51): Qwen2-MoE's routing without the shared expert
    // and without attention biases, RMSNorm on each head's queries and keys; the norms are
    // OLMoE's (weights over the whole projections: a few thousand weights more per block).
    c = llama_like(j, false);
    c.experts = j.positive_or("num_experts", 128);
    c.top_k = j.positive_or("num_experts_per_tok", 8);
    c.expert_ffn = j.positive_or("moe_intermediate_size", 768);
    c.qk_norm = true;
    qwen_dense_blocks(j, c);
  } else if (type == "olmoe") {
    c = llama_like(j, false);
    c.experts = j.positive_or("num_experts", 64);
    c.top_k = j.positive_or("num_experts_per_tok", 8);
    c.qk_norm = true;
  } else if (type == "deepseek_v3") {
    c = llama_like(j, false);
    if (j.boolean_or("attention_bias", false))
      j.fail(root["attention_bias"], "'attention_bias': true is not supported (DeepSeek-V3 has false)");
    c.qkv_bias = c.out_bias = false;
    c.kv_heads = 0;  // MLA: every head has its own keys and values
    c.experts = j.positive_or("n_routed_experts", 256);
    c.top_k = j.positive_or("num_experts_per_tok", 8);
    c.expert_ffn = j.positive_or("moe_intermediate_size", 2048);
    c.shared_expert_ffn = core::checked_mul(j.non_negative_or("n_shared_experts", 1), c.expert_ffn);
    c.expert_bias = true;
    const std::int64_t dense = j.non_negative_or("first_k_dense_replace", 3);
    c.dense_blocks.assign(static_cast<std::size_t>(c.layers), false);
    for (int i = 0; i < c.layers && i < dense; ++i) c.dense_blocks[std::size_t(i)] = true;
    kinds::MlaSpec mla;
    mla.q_rank = j.is_null("q_lora_rank") ? 0 : j.positive_or("q_lora_rank", 1536);
    mla.kv_rank = j.positive_or("kv_lora_rank", 512);
    mla.nope_dim = j.positive_or("qk_nope_head_dim", 128);
    mla.rope_dim = j.positive_or("qk_rope_head_dim", 64);
    mla.v_dim = j.positive_or("v_head_dim", 128);
    c.mla = mla;
  } else {
    return false;
  }
  if (c.top_k > c.experts)
    j.fail(root, "num_experts_per_tok (" + std::to_string(c.top_k) +
                     ") must be at most the number of experts (" + std::to_string(c.experts) + ")");
  return true;
}

}  // namespace

std::string hf_model_types() {
  return kTypes;
}

// BertForSequenceClassification (the `architectures` transformers writes when it saves such a
// model) replaces the pre-training heads by a classifier over the pooled first token: its
// classes are num_labels, else the entries of id2label, else PretrainedConfig's default 2.
// Any other architecture keeps the tied language-model head. 0: no classifier.
static std::int64_t bert_sequence_classes(const JsonReader& j) {
  const YAML::Node archs = j.get("architectures");
  if (!archs.IsDefined()) return 0;
  if (!archs.IsSequence()) j.fail(archs, "'architectures': expected a list of class names");
  bool classifier = false;
  for (const auto& a : archs) {
    if (!a.IsScalar()) j.fail(a, "'architectures': expected a list of class names");
    classifier = classifier || a.Scalar() == "BertForSequenceClassification";
  }
  if (!classifier) return 0;
  if (j.has("num_labels")) return j.positive("num_labels");
  const YAML::Node labels = j.get("id2label");
  if (labels.IsDefined()) {
    if (!labels.IsMap() || labels.size() == 0)
      j.fail(labels, "'id2label': expected a non-empty object of class names");
    return static_cast<std::int64_t>(labels.size());
  }
  return 2;
}

TransformerConfig hf_transformer_config(const YAML::Node& root, const std::string& file,
                                        const std::string& key_path) {
  JsonReader j(root, file, key_path);
  const std::string type = j.string("model_type");
  j.model_type = type;
  TransformerConfig c;
  if (type == "llama" || type == "mistral" || type == "mixtral") {
    c = llama_like(j, false);
    if (type == "mixtral") {
      c.experts = j.positive_or("num_local_experts", 8);
      c.top_k = j.positive_or("num_experts_per_tok", 2);
    }
  } else if (moe_family(j, root, type, c)) {
    // qwen2_moe, qwen3_moe, olmoe, deepseek_v3
  } else if (type == "qwen2") {
    c = llama_like(j, false);
    c.qkv_bias = true;  // Qwen2 has biases on q, k and v only
    c.out_bias = c.mlp_bias = false;
  } else if (type == "gemma") {
    c = llama_like(j, true);
    c.head_dim = j.positive_or("head_dim", 256);
    c.mlp = kinds::MlpActivation::geglu;
  } else if (type == "gpt2") {
    c.hidden = j.positive("n_embd");
    c.layers = static_cast<int>(j.positive("n_layer"));
    c.heads = j.positive("n_head");
    c.ffn = j.positive_or("n_inner", 0);
    c.vocab = j.positive("vocab_size");
    c.max_positions = j.positive_or("n_positions", 1024);
    c.tied_embeddings = j.boolean_or("tie_word_embeddings", true);
    c.dropout = j.any_dropout({{"resid_pdrop", 0.1}, {"embd_pdrop", 0.1}, {"attn_pdrop", 0.1}});
  } else if (type == "gpt_neox") {
    c.hidden = j.positive("hidden_size");
    c.layers = static_cast<int>(j.positive("num_hidden_layers"));
    c.heads = j.positive("num_attention_heads");
    c.ffn = j.positive("intermediate_size");
    c.vocab = j.positive("vocab_size");
    c.max_positions = j.positive_or("max_position_embeddings", 2048);
    c.learned_positions = false;  // rotary on rotary_pct of each head: no parameters
    c.qkv_bias = c.out_bias = j.boolean_or("attention_bias", true);  // the MLP always has biases
    c.layout = j.boolean_or("use_parallel_residual", true) ? BlockLayout::parallel
                                                           : BlockLayout::sequential;
    c.tied_embeddings = j.boolean_or("tie_word_embeddings", false);
    c.dropout = j.any_dropout({{"attention_dropout", 0.0}, {"hidden_dropout", 0.0}});
  } else if (type == "phi") {
    c.hidden = j.positive("hidden_size");
    c.layers = static_cast<int>(j.positive("num_hidden_layers"));
    c.heads = j.positive("num_attention_heads");
    c.kv_heads = j.positive_or("num_key_value_heads", c.heads);
    c.ffn = j.positive("intermediate_size");
    c.vocab = j.positive("vocab_size");
    c.max_positions = j.positive_or("max_position_embeddings", 2048);
    c.learned_positions = false;  // partial rotary: no parameters
    c.layout = BlockLayout::parallel_shared_norm;
    if (j.boolean_or("qk_layernorm", false))
      j.fail(root["qk_layernorm"], "'qk_layernorm': true is not supported (phi-2 has false)");
    c.tied_embeddings = j.boolean_or("tie_word_embeddings", false);
    c.head_bias = !c.tied_embeddings;  // PhiForCausalLM's lm_head has a bias
    c.dropout =
        j.any_dropout({{"resid_pdrop", 0.0}, {"embd_pdrop", 0.0}, {"attention_dropout", 0.0}});
  } else if (type == "falcon") {
    c.hidden = j.positive("hidden_size");
    c.layers = static_cast<int>(j.positive("num_hidden_layers"));
    c.heads = j.positive("num_attention_heads");
    c.vocab = j.positive("vocab_size");
    c.ffn = j.positive_or("ffn_hidden_size", 4 * c.hidden);
    c.max_positions = j.positive_or("max_position_embeddings", 2048);
    c.learned_positions = false;  // rotary or ALiBi: no parameters
    const bool new_arch = j.boolean_or("new_decoder_architecture", false);
    if (new_arch)
      c.kv_heads = j.positive_or("num_kv_heads", c.heads);
    else
      c.kv_heads = j.boolean_or("multi_query", true) ? 1 : c.heads;
    c.head_dim = c.hidden / c.heads;
    c.bias = j.boolean_or("bias", false);
    // new_decoder_architecture: ln_attn and ln_mlp; else one norm, parallel or not.
    const bool parallel = new_arch || j.boolean_or("parallel_attn", true);
    c.layout = new_arch   ? BlockLayout::parallel
               : parallel ? BlockLayout::parallel_shared_norm
                          : BlockLayout::sequential;
    c.tied_embeddings = j.boolean_or("tie_word_embeddings", true);
    c.dropout = j.any_dropout({{"attention_dropout", 0.0}, {"hidden_dropout", 0.0}});
  } else if (type == "bert") {
    c.hidden = j.positive("hidden_size");
    c.layers = static_cast<int>(j.positive("num_hidden_layers"));
    c.heads = j.positive("num_attention_heads");
    c.ffn = j.positive("intermediate_size");
    c.vocab = j.positive("vocab_size");
    c.max_positions = j.positive_or("max_position_embeddings", 512);
    c.token_types = j.positive_or("type_vocab_size", 2);
    c.layout = BlockLayout::post_norm;
    c.pooler = true;
    c.causal = false;
    c.tied_embeddings = j.boolean_or("tie_word_embeddings", true);
    c.dropout =
        j.any_dropout({{"hidden_dropout_prob", 0.1}, {"attention_probs_dropout_prob", 0.1}});
    c.classes = bert_sequence_classes(j);
  } else {
    j.fail(root["model_type"], "unknown model_type '" + type + "'; supported: " + kTypes);
  }
  if (c.layers > 100'000)
    j.fail(root, "num_hidden_layers must be at most 100000, got " + std::to_string(c.layers));
  return c;
}

}  // namespace trainsim::models
