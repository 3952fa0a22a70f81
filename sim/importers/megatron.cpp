// Megatron-LM arguments (megatron/training/arguments.py and TransformerConfig): a file of
// `--flag [value]` tokens as a launch script passes them to pretrain_gpt.py. Accepted syntax:
// whitespace-separated tokens, `--flag=value`, '...' and "..." quoting, `#` comments, and a
// backslash ending a line (continuation). Shell expansion ($VAR, `...`) and shell operators
// are errors: the file must hold the values themselves. Words before the first option (the
// launcher and script, e.g. `torchrun ... pretrain_gpt.py`) are ignored and listed.
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include "sim/importers/import.hpp"

namespace trainsim::importers {

namespace {

struct Token {
  std::string text;
  core::SourceLocation at;
};

// Splits `text` into shell words, tracking each word's line and column.
std::vector<Token> tokenize(const std::string& text, const std::string& file) {
  std::vector<Token> out;
  int line = 1, col = 1;
  std::size_t i = 0;
  auto advance = [&] {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    ++i;
  };
  auto fail = [&](int l, int c, const std::string& what) -> void {
    throw core::ConfigError({file, l, c}, "", what);
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance();
      continue;
    }
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') advance();
      continue;
    }
    if (c == '\\') {  // a continuation: backslash, optional blanks, end of line
      std::size_t j = i + 1;
      while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r')) ++j;
      if (j >= text.size() || text[j] == '\n') {
        while (i < j) advance();
        continue;
      }
    }
    Token t{"", {file, line, col}};
    while (i < text.size()) {
      const char ch = text[i];
      if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n') break;
      if (ch == '\'' || ch == '"') {
        const int ql = line, qc = col;
        advance();
        while (i < text.size() && text[i] != ch) {
          if (ch == '"' && (text[i] == '$' || text[i] == '`'))
            fail(line, col, "shell expansion '" + std::string(1, text[i]) +
                                "' inside double quotes is not expanded: write the value itself");
          t.text += text[i];
          advance();
        }
        if (i >= text.size()) fail(ql, qc, std::string("unterminated ") + ch + " quote");
        advance();
        continue;
      }
      if (ch == '$' || ch == '`') {
        std::size_t j = i + 1;
        while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) ||
                                   text[j] == '_' || text[j] == '{' || text[j] == '}'))
          ++j;
        fail(line, col, "shell variable '" + text.substr(i, j - i) +
                            "' is not expanded: write its value in the file");
      }
      if (ch == ';' || ch == '|' || ch == '&' || ch == '<' || ch == '>' || ch == '(' || ch == ')')
        fail(line, col, std::string("shell syntax '") + ch +
                            "' is not accepted: the file holds Megatron-LM arguments only");
      if (ch == '\\') {
        advance();
        if (i >= text.size()) break;
      }
      t.text += text[i];
      advance();
    }
    out.push_back(std::move(t));
  }
  return out;
}

bool is_option(const std::string& s) { return s.size() > 2 && s[0] == '-' && s[1] == '-'; }

struct Arg {
  std::string name;  // with the leading "--"
  core::SourceLocation at;
  std::vector<Token> values;
};

enum class Kind { flag, integer, number, word };

// The options this importer reads; everything else is listed as ignored.
const std::map<std::string, Kind>& known() {
  static const std::map<std::string, Kind> k = {
      {"--num-layers", Kind::integer}, {"--hidden-size", Kind::integer},
      {"--num-attention-heads", Kind::integer}, {"--ffn-hidden-size", Kind::integer},
      {"--seq-length", Kind::integer}, {"--max-position-embeddings", Kind::integer},
      {"--micro-batch-size", Kind::integer}, {"--global-batch-size", Kind::integer},
      {"--tensor-model-parallel-size", Kind::integer},
      {"--pipeline-model-parallel-size", Kind::integer},
      {"--num-layers-per-virtual-pipeline-stage", Kind::integer},
      {"--num-virtual-stages-per-pipeline-rank", Kind::integer},
      {"--microbatch-group-size-per-virtual-pipeline-stage", Kind::integer},
      {"--decoder-first-pipeline-num-layers", Kind::integer},
      {"--decoder-last-pipeline-num-layers", Kind::integer},
      {"--account-for-embedding-in-pipeline-split", Kind::flag},
      {"--account-for-loss-in-pipeline-split", Kind::flag},
      {"--context-parallel-size", Kind::integer}, {"--expert-model-parallel-size", Kind::integer},
      {"--num-experts", Kind::integer}, {"--sequence-parallel", Kind::flag},
      {"--tp-comm-overlap", Kind::flag}, {"--overlap-param-gather", Kind::flag},
      {"--overlap-grad-reduce", Kind::flag},
      {"--recompute-granularity", Kind::word}, {"--recompute-method", Kind::word},
      {"--recompute-num-layers", Kind::integer}, {"--recompute-activations", Kind::flag},
      {"--checkpoint-activations", Kind::flag}, {"--use-distributed-optimizer", Kind::flag},
      {"--bf16", Kind::flag}, {"--fp16", Kind::flag}, {"--fp8-format", Kind::word},
      {"--accumulate-allreduce-grads-in-fp32", Kind::flag}, {"--grad-reduce-in-bf16", Kind::flag},
      {"--use-flash-attn", Kind::flag}, {"--attention-backend", Kind::word},
      {"--swiglu", Kind::flag}, {"--group-query-attention", Kind::flag},
      {"--num-query-groups", Kind::integer}, {"--kv-channels", Kind::integer},
      {"--untie-embeddings-and-output-weights", Kind::flag}, {"--disable-bias-linear", Kind::flag},
      {"--add-qkv-bias", Kind::flag}, {"--normalization", Kind::word},
      {"--position-embedding-type", Kind::word}, {"--use-rotary-position-embeddings", Kind::flag},
      {"--hidden-dropout", Kind::number}, {"--attention-dropout", Kind::number},
      {"--vocab-size", Kind::integer}, {"--make-vocab-size-divisible-by", Kind::integer},
      {"--tokenizer-type", Kind::word}, {"--optimizer", Kind::word}, {"--sgd-momentum", Kind::number},
      {"--deepspeed", Kind::flag}, {"--no-pipeline-parallel", Kind::flag},
      {"--cp-comm-type", Kind::word}, {"--moe-router-topk", Kind::integer},
      {"--moe-ffn-hidden-size", Kind::integer}, {"--moe-layer-freq", Kind::integer},
      {"--moe-shared-expert-intermediate-size", Kind::integer},
      {"--moe-expert-capacity-factor", Kind::number},
  };
  return k;
}

// The parsed arguments: the last occurrence of each known option wins (as with argparse).
class Args {
 public:
  Args(const std::vector<Token>& tokens, Draft& d) {
    std::size_t i = 0;
    for (; i < tokens.size() && !is_option(tokens[i].text); ++i) d.ignore(tokens[i].text, tokens[i].at);
    while (i < tokens.size()) {
      Arg a{tokens[i].text, tokens[i].at, {}};
      if (const auto eq = a.name.find('='); eq != std::string::npos) {
        core::SourceLocation vat = a.at;
        vat.column += static_cast<int>(eq) + 1;
        a.values.push_back({a.name.substr(eq + 1), vat});
        a.name.resize(eq);
      }
      for (++i; i < tokens.size() && !is_option(tokens[i].text); ++i) a.values.push_back(tokens[i]);
      const auto k = known().find(a.name);
      if (k == known().end()) {
        d.ignore(a.name, a.at);
        continue;
      }
      if (k->second == Kind::flag && !a.values.empty())
        throw core::ConfigError(a.values[0].at, a.name,
                                "takes no value, got '" + a.values[0].text + "'");
      if (k->second != Kind::flag && a.values.size() != 1)
        throw core::ConfigError(a.values.empty() ? a.at : a.values[1].at, a.name,
                                a.values.empty() ? "expected a value" : "expected one value, got " +
                                                       std::to_string(a.values.size()));
      args_[a.name] = std::move(a);
    }
  }

  bool has(const std::string& name) const { return args_.count(name) > 0; }
  const Arg& arg(const std::string& name) const { return args_.at(name); }

  // Every count Megatron takes (layers, sizes, batches, degrees) is within 2^30.
  std::optional<std::int64_t> integer(const std::string& name, std::int64_t min = 1) const {
    constexpr std::int64_t max = std::int64_t{1} << 30;
    if (!has(name)) return std::nullopt;
    const Token& t = arg(name).values[0];
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc{} || end != t.text.data() + t.text.size() || v < min || v > max)
      throw core::ConfigError(t.at, name, "expected an integer in " + std::to_string(min) + ".." +
                                              std::to_string(max) + ", got '" + t.text + "'");
    return v;
  }
  std::optional<double> number(const std::string& name) const {
    if (!has(name)) return std::nullopt;
    const Token& t = arg(name).values[0];
    char* end = nullptr;
    const double v = std::strtod(t.text.c_str(), &end);
    if (t.text.empty() || *end != '\0' || !std::isfinite(v) || v < 0)
      throw core::ConfigError(t.at, name, "expected a non-negative number, got '" + t.text + "'");
    return v;
  }
  std::optional<std::string> word(const std::string& name,
                                  const std::vector<std::string>& allowed) const {
    if (!has(name)) return std::nullopt;
    const Token& t = arg(name).values[0];
    for (const auto& a : allowed)
      if (t.text == a) return a;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw core::ConfigError(t.at, name, "expected one of " + list + ", got '" + t.text + "'");
  }
  std::int64_t required(const std::string& name, const std::string& file) const {
    if (auto v = integer(name)) return *v;
    throw core::ConfigError({file, 1, 1}, name, "missing (required to build the model)");
  }
  const core::SourceLocation& at(const std::string& name) const { return arg(name).at; }

 private:
  std::map<std::string, Arg> args_;
};

// Megatron-Core's MoE (--num-experts): every block's MLP routed over the experts, top-k
// (--moe-router-topk, 2), dropless unless --moe-expert-capacity-factor. Experts of another
// width, shared experts and dense blocks between MoE ones have no preset here.
std::string experts_yaml(const Args& a, std::int64_t ffn, bool llama) {
  if (!a.has("--num-experts")) {
    for (const char* o : {"--moe-router-topk", "--moe-ffn-hidden-size", "--moe-expert-capacity-factor"})
      if (a.has(o)) throw core::ConfigError(a.at(o), o, "given without --num-experts");
    return "";
  }
  if (!llama) unsupported(a.at("--num-experts"), "--num-experts", "mixture of experts without --swiglu");
  if (auto f = a.integer("--moe-ffn-hidden-size"); f && *f != ffn)
    unsupported(a.at("--moe-ffn-hidden-size"), "--moe-ffn-hidden-size", "experts narrower or wider than --ffn-hidden-size");
  if (a.integer("--moe-layer-freq").value_or(1) != 1)
    unsupported(a.at("--moe-layer-freq"), "--moe-layer-freq", "dense blocks between MoE blocks");
  if (a.has("--moe-shared-expert-intermediate-size"))
    unsupported(a.at("--moe-shared-expert-intermediate-size"), "--moe-shared-expert-intermediate-size",
                "a shared expert");
  const std::int64_t experts = *a.integer("--num-experts");
  const std::int64_t top_k = a.integer("--moe-router-topk").value_or(2);
  if (top_k > experts)
    throw core::ConfigError(a.at("--moe-router-topk"), "--moe-router-topk", "above --num-experts");
  std::string m = ", experts: " + std::to_string(experts) + ", top_k: " + std::to_string(top_k);
  if (a.number("--moe-expert-capacity-factor")) m += ", capacity_factor: " + a.arg("--moe-expert-capacity-factor").values[0].text;
  return m;
}

// The model: Megatron's GPT defaults (LayerNorm, GeLU, biases, learned positions, tied
// embeddings, dropout 0.1) are the gpt3 preset's architecture; Llama-style arguments (SwiGLU,
// RMSNorm, rotary, untied, no biases, no dropout) the llama2-7b preset's. A mix of the two has
// no preset and is refused at the first option that departs from the family.
std::string model_yaml(const Args& a, const std::string& file, std::int64_t tensor, Draft& d) {
  const std::int64_t layers = a.required("--num-layers", file);
  const std::int64_t hidden = a.required("--hidden-size", file);
  const std::int64_t heads = a.required("--num-attention-heads", file);
  const bool llama = a.has("--swiglu");
  const std::string family = llama ? "with --swiglu (the llama2-7b preset's architecture)"
                                   : "without --swiglu (the gpt3 preset's architecture)";
  auto depart = [&](const std::string& option, const std::string& what) {
    if (!a.has(option))  // the option's default departs from the family: nothing to point at
      throw core::ConfigError({file, 1, 1}, option,
                              what + " (the default) " + family + " is not supported by trainsim yet: give " +
                                  option + " explicitly");
    unsupported(a.at(option), option, what + " " + family);
  };
  const std::string norm = a.word("--normalization", {"LayerNorm", "RMSNorm"}).value_or("LayerNorm");
  if ((norm == "RMSNorm") != llama) depart("--normalization", "--normalization " + norm);
  const std::string pos =
      a.word("--position-embedding-type", {"learned_absolute", "rope", "yarn", "mrope", "relative", "none"})
          .value_or(a.has("--use-rotary-position-embeddings") ? "rope" : "learned_absolute");
  if ((pos == "learned_absolute") == llama) {
    if (a.has("--position-embedding-type")) depart("--position-embedding-type", "position embedding " + pos);
    if (llama) throw core::ConfigError({file, 1, 1}, "--position-embedding-type",
                                       "learned_absolute (the default) " + family + " is not supported by "
                                       "trainsim yet: give --position-embedding-type rope");
    depart("--use-rotary-position-embeddings", "rotary positions");
  }
  for (const char* flag : {"--untie-embeddings-and-output-weights", "--disable-bias-linear"})
    if (a.has(flag) != llama) {
      if (a.has(flag)) depart(flag, flag);
      throw core::ConfigError({file, 1, 1}, flag, std::string("missing: its absence ") + family +
                                                      " is not supported by trainsim yet");
    }
  if (a.has("--add-qkv-bias")) unsupported(a.at("--add-qkv-bias"), "--add-qkv-bias", "QKV biases alone");
  for (const char* drop : {"--hidden-dropout", "--attention-dropout"}) {
    const double p = a.number(drop).value_or(0.1);
    if ((p > 0) == llama) {
      if (a.has(drop)) depart(drop, std::string(drop) + " " + a.arg(drop).values[0].text);
      throw core::ConfigError({file, 1, 1}, drop, "missing: the default 0.1 " + family +
                                                      " is not supported by trainsim yet: give " + drop + " 0");
    }
  }
  if (auto kv = a.integer("--kv-channels"); kv && *kv * heads != hidden)
    unsupported(a.at("--kv-channels"), "--kv-channels", "a head size other than hidden / heads");

  // Vocabulary: --vocab-size, or the GPT-2 BPE tokenizer's 50257; padded as Megatron pads it
  // (calculate_padded_vocab_size: up to a multiple of make-vocab-size-divisible-by x tensor).
  std::int64_t vocab = 0;
  const std::string tokenizer = a.has("--tokenizer-type") ? a.arg("--tokenizer-type").values[0].text : "";
  if (auto v = a.integer("--vocab-size")) {
    vocab = *v;
  } else if (tokenizer == "GPT2BPETokenizer" || (tokenizer.empty() && a.has("--vocab-file"))) {
    vocab = 50257;  // GPT-2's BPE vocabulary (older Megatron-LM's default tokenizer)
    d.notes.push_back("vocabulary 50257 of the GPT-2 BPE tokenizer");
  } else {
    throw core::ConfigError(a.has("--tokenizer-type") ? a.at("--tokenizer-type") : core::SourceLocation{file, 1, 1},
                            "--vocab-size", "missing: the vocabulary of tokenizer '" +
                                                (tokenizer.empty() ? std::string("(none)") : tokenizer) +
                                                "' is not known here: give --vocab-size");
  }
  const std::int64_t multiple = a.integer("--make-vocab-size-divisible-by").value_or(128) * tensor;
  const std::int64_t padded = (vocab + multiple - 1) / multiple * multiple;
  if (vocab != padded) d.notes.push_back("vocabulary " + std::to_string(vocab) + " padded to " +
                                         std::to_string(padded) + " as Megatron-LM pads it");

  std::string m = std::string("{preset: ") + (llama ? "llama2-7b" : "gpt3") +
                  ", layers: " + std::to_string(layers) + ", hidden: " + std::to_string(hidden) +
                  ", heads: " + std::to_string(heads);
  if (a.has("--num-query-groups") || a.has("--group-query-attention")) {
    if (!a.has("--group-query-attention") || !a.has("--num-query-groups"))
      throw core::ConfigError(a.at(a.has("--num-query-groups") ? "--num-query-groups" : "--group-query-attention"),
                              a.has("--num-query-groups") ? "--num-query-groups" : "--group-query-attention",
                              "Megatron-LM uses --num-query-groups only with --group-query-attention");
    m += ", kv_heads: " + std::to_string(*a.integer("--num-query-groups"));
  } else if (llama) {
    m += ", kv_heads: " + std::to_string(heads);
  }
  std::optional<std::int64_t> ffn = a.integer("--ffn-hidden-size");
  if (!ffn && llama) ffn = (4 * hidden * 2 / 3) / 64 * 64;  // Megatron's SwiGLU default
  if (ffn) m += ", ffn: " + std::to_string(*ffn);
  m += experts_yaml(a, ffn.value_or(4 * hidden), llama);
  m += ", vocab: " + std::to_string(padded);
  const std::int64_t seq = a.integer("--seq-length").value_or(0);
  if (auto mp = a.integer("--max-position-embeddings").value_or(seq)) m += ", max_positions: " + std::to_string(mp);
  return m + ", name: " + quote(d.name) + "}";
}

// --bf16 / --fp16 / neither; --fp8-format (Transformer Engine's FP8 linears) over --bf16.
std::string precision(const Args& a) {
  if (a.has("--fp8-format")) {
    a.word("--fp8-format", {"e4m3", "hybrid"});
    if (!a.has("--bf16") && !a.has("--fp16"))
      throw core::ConfigError(a.at("--fp8-format"), "--fp8-format", "needs --bf16 (or --fp16) beside it");
    return "fp8";
  }
  return a.has("--bf16") ? "bf16" : a.has("--fp16") ? "fp16" : "fp32";
}

// --context-parallel-size with --cp-comm-type p2p (Megatron-Core's default: a ring passing K
// and V) or all_gather; the expert-parallel degree within the data ranks.
void map_context_expert(const Args& a, std::int64_t context, std::int64_t data, Draft& d) {
  if (context > 1) {
    Draft::set(d.parallel, "context", std::to_string(context));
    const std::string type = a.word("--cp-comm-type", {"p2p", "all_gather", "a2a", "a2a+p2p"}).value_or("p2p");
    if (type == "a2a" || type == "a2a+p2p")
      unsupported(a.at("--cp-comm-type"), "--cp-comm-type", "context parallelism by all-to-all (" + type + ")");
    if (type == "all_gather") Draft::set(d.parallel, "context_attention", "allgather");
  }
  const std::int64_t expert = a.integer("--expert-model-parallel-size").value_or(1);
  if (expert == 1) return;
  if (!a.has("--num-experts"))
    throw core::ConfigError(a.at("--expert-model-parallel-size"), "--expert-model-parallel-size",
                            "above 1 without --num-experts: the model has no experts");
  if ((data * context) % expert != 0)
    throw core::ConfigError(a.at("--expert-model-parallel-size"), "--expert-model-parallel-size",
                            "must divide the data x context ranks " + std::to_string(data * context));
  Draft::set(d.parallel, "expert", std::to_string(expert));
}

// Megatron-Core's DDP overlaps the gradient reduction with the backward only under
// --overlap-grad-reduce (off by default); without it each model chunk's gradient buffer is
// reduced in place once the schedule returned. Under --deepspeed DeepSpeed's engine reduces.
void map_grad_reduce(const Args& a, std::int64_t data, Draft& d) {
  if (a.has("--overlap-grad-reduce") || a.has("--deepspeed") || data == 1) return;
  if (a.integer("--expert-model-parallel-size").value_or(1) > 1) {
    d.notes.push_back("no --overlap-grad-reduce: the reduction after the backward is not modelled beside "
                      "expert parallelism; imported as overlapped");
    return;
  }
  Draft::set(d.parallel, "grad_reduce", "after_backward_in_place");
}

// Megatron-Core's uneven pipeline split (transformer_block.py get_num_layers_to_build): the
// first / last stage's layers, or the embedding and loss counted as layers. The loader checks
// the numbers against the pipeline and the model as Megatron-Core does. True with first / last.
bool map_uneven_split(const Args& a, Draft& d) {
  bool uneven = false;
  if (auto f = a.integer("--decoder-first-pipeline-num-layers")) {
    Draft::set(d.parallel, "first_stage_blocks", std::to_string(*f));
    uneven = true;
  }
  if (auto l = a.integer("--decoder-last-pipeline-num-layers")) {
    Draft::set(d.parallel, "last_stage_blocks", std::to_string(*l));
    uneven = true;
  }
  if (a.has("--account-for-embedding-in-pipeline-split")) Draft::set(d.parallel, "embedding_in_split", "true");
  if (a.has("--account-for-loss-in-pipeline-split")) Draft::set(d.parallel, "loss_in_split", "true");
  return uneven;
}

}  // namespace

Draft import_megatron(const std::string& text, const std::string& path, const ImportOptions& o) {
  Draft d = Draft::of("megatron", path);
  if (o.model)
    throw core::ConfigError({"trainsim import", 0, 0}, "--model",
                            "not used with megatron: the arguments describe the model");
  const Args a(tokenize(text, path), d);
  const std::int64_t tensor = a.integer("--tensor-model-parallel-size").value_or(1);
  const std::int64_t pipeline = a.integer("--pipeline-model-parallel-size").value_or(1);
  d.model = model_yaml(a, path, tensor, d);

  // Training.
  if (a.has("--bf16") && a.has("--fp16"))
    throw core::ConfigError(a.at("--fp16"), "--fp16", "given with --bf16: choose one");
  const std::int64_t micro = a.integer("--micro-batch-size").value_or(1);
  if (!a.has("--micro-batch-size")) d.notes.push_back("no --micro-batch-size: 1 (Megatron-LM's default)");
  Draft::set(d.training, "micro_batch", std::to_string(micro));
  if (auto g = a.integer("--global-batch-size")) Draft::set(d.training, "global_batch", std::to_string(*g));
  if (auto s = a.integer("--seq-length")) Draft::set(d.training, "seq_len", std::to_string(*s));
  const std::string prec = precision(a);
  Draft::set(d.training, "precision", prec);
  // Megatron-LM's arguments.py forces accumulate_allreduce_grads_in_fp32 under --bf16 unless
  // --grad-reduce-in-bf16 (2025), and the flag asks for it under --fp16: the weight-gradient GEMM
  // accumulates into an fp32 main_grad that is reduced in fp32. Under --deepspeed, DeepSpeed's
  // engine owns the gradients instead.
  if (!a.has("--deepspeed") && prec != "fp32" && !a.has("--grad-reduce-in-bf16") &&
      (a.has("--bf16") || a.has("--accumulate-allreduce-grads-in-fp32")))
    Draft::set(d.training, "accumulate_grads", "fused-fp32");
  const std::string opt = a.word("--optimizer", {"adam", "sgd"}).value_or("adam");
  // Megatron's adam decouples weight decay (AdamW); its sgd has momentum 0.9 by default.
  Draft::set(d.training, "optimizer",
             opt == "adam" ? "adamw" : a.number("--sgd-momentum").value_or(0.9) > 0 ? "momentum" : "sgd");
  std::string recompute = "none";
  if (a.has("--recompute-activations")) recompute = "selective";
  if (a.has("--checkpoint-activations")) recompute = "full";
  if (auto g = a.word("--recompute-granularity", {"full", "selective"})) recompute = *g;
  if (recompute != "none") Draft::set(d.training, "recompute", recompute);
  if (recompute == "full" && a.word("--recompute-method", {"uniform", "block"}).value_or("uniform") == "block") {
    if (auto n = a.integer("--recompute-num-layers", 0)) Draft::set(d.training, "recompute_layers", std::to_string(*n));
  } else if (recompute == "full" && a.integer("--recompute-num-layers").value_or(1) > 1) {
    d.notes.push_back("--recompute-method uniform with --recompute-num-layers above 1 is modelled as "
                      "every block recomputed from its own input");
  }
  const std::string backend = a.word("--attention-backend", {"flash", "fused", "unfused", "local", "auto"}).value_or("");
  if (a.has("--use-flash-attn") || backend == "flash") Draft::set(d.training, "attention", "flash");

  // Parallelism: the data degree is what --gpus leaves after tensor x pipeline x context.
  const std::int64_t context = a.integer("--context-parallel-size").value_or(1);
  const std::int64_t data = data_degree(o, tensor * pipeline * context, d);
  Draft::set(d.parallel, "data", std::to_string(data));
  Draft::set(d.parallel, "tensor", std::to_string(tensor));
  Draft::set(d.parallel, "pipeline", std::to_string(pipeline));
  map_context_expert(a, context, data, d);
  if (a.has("--use-distributed-optimizer")) Draft::set(d.parallel, "zero", "1");
  // Megatron-LM's arguments.py asserts the distributed optimizer and --overlap-grad-reduce beside it.
  if (a.has("--overlap-param-gather") && !a.has("--use-distributed-optimizer"))
    throw core::ConfigError(a.at("--overlap-param-gather"), "--overlap-param-gather",
                            "needs --use-distributed-optimizer (it overlaps that optimizer's weight all-gather)");
  if (a.has("--overlap-param-gather") && !a.has("--overlap-grad-reduce"))
    throw core::ConfigError(a.at("--overlap-param-gather"), "--overlap-param-gather",
                            "needs --overlap-grad-reduce beside it, as Megatron-LM's arguments.py asserts");
  if (a.has("--overlap-param-gather")) Draft::set(d.parallel, "param_gather", "overlapped");
  map_grad_reduce(a, data, d);
  const bool uneven = map_uneven_split(a, d);
  std::int64_t virtual_stages = a.integer("--num-virtual-stages-per-pipeline-rank").value_or(1);
  if (auto per = a.integer("--num-layers-per-virtual-pipeline-stage")) {
    // arguments.py: the embedding and the loss count as layers here too; with uneven first or
    // last stages the virtual degree must be given as --num-virtual-stages-per-pipeline-rank.
    if (uneven)
      throw core::ConfigError(a.at("--num-layers-per-virtual-pipeline-stage"),
                              "--num-layers-per-virtual-pipeline-stage",
                              "with --decoder-first/last-pipeline-num-layers give "
                              "--num-virtual-stages-per-pipeline-rank, as Megatron-LM's arguments.py asks");
    const std::int64_t layers = *a.integer("--num-layers") +
                                (a.has("--account-for-embedding-in-pipeline-split") ? 1 : 0) +
                                (a.has("--account-for-loss-in-pipeline-split") ? 1 : 0);
    if (layers % (pipeline * *per) != 0)
      throw core::ConfigError(a.at("--num-layers-per-virtual-pipeline-stage"),
                              "--num-layers-per-virtual-pipeline-stage",
                              "must divide --num-layers / --pipeline-model-parallel-size");
    virtual_stages = layers / (pipeline * *per);
  }
  if (virtual_stages > 1 && pipeline == 1) {
    const char* opt = a.has("--num-layers-per-virtual-pipeline-stage") ? "--num-layers-per-virtual-pipeline-stage"
                                                                        : "--num-virtual-stages-per-pipeline-rank";
    throw core::ConfigError(a.at(opt), opt, "virtual pipeline stages need --pipeline-model-parallel-size above 1");
  }
  if (pipeline > 1) Draft::set(d.parallel, "schedule", virtual_stages > 1 ? "interleaved" : "1f1b");
  if (virtual_stages > 1) Draft::set(d.parallel, "virtual_stages", std::to_string(virtual_stages));
  // Megatron-Core's group of micro-batches per chunk (default: the pipeline size); the loader
  // checks it against the pipeline and the micro-batches as schedules.py does.
  if (auto group = a.integer("--microbatch-group-size-per-virtual-pipeline-stage")) {
    if (virtual_stages < 2)
      throw core::ConfigError(a.at("--microbatch-group-size-per-virtual-pipeline-stage"),
                              "--microbatch-group-size-per-virtual-pipeline-stage",
                              "groups the micro-batches of virtual pipeline stages: give "
                              "--num-layers-per-virtual-pipeline-stage or "
                              "--num-virtual-stages-per-pipeline-rank");
    Draft::set(d.parallel, "microbatch_group_size", std::to_string(*group));
  }
  // Megatron-DeepSpeed with --deepspeed builds its pipelined model for DeepSpeed's engine
  // (pretrain_gpt.py's GPTModelPipe) unless --no-pipeline-parallel; that engine has no
  // interleaved schedule and reduces gradients in flattened buckets.
  const bool ds_engine = a.has("--deepspeed") && pipeline > 1 && !a.has("--no-pipeline-parallel");
  if (ds_engine && virtual_stages > 1)
    throw core::ConfigError(a.at("--deepspeed"), "--deepspeed",
                            "DeepSpeed's pipeline engine has no interleaved schedule: drop the "
                            "virtual pipeline stages or add --no-pipeline-parallel");
  if (ds_engine) Draft::set(d.parallel, "pipeline_engine", "deepspeed");
  if (a.has("--sequence-parallel")) Draft::set(d.parallel, "sequence_parallel", "true");
  // Megatron-LM asserts --sequence-parallel beside it; the loader refuses it without, too.
  if (a.has("--tp-comm-overlap")) Draft::set(d.parallel, "tp_comm_overlap", "true");
  // Megatron-LM reduces gradients in place in its contiguous gradient buffer.
  if (!ds_engine) Draft::set(d.parallel, "bucket_buffers", "in_place");
  apply_common(o, data * tensor * pipeline, d);
  return d;
}

}  // namespace trainsim::importers
