#include "models/builders.hpp"

#include <stdexcept>

#include "models/builders_util.hpp"

namespace trainsim::models {

using detail::add_after;
using detail::in_block;
using detail::require_positive;

namespace {

// The attention and MLP of one block over `tokens` tokens.
kinds::AttentionSpec attention_spec(const TransformerConfig& c, std::int64_t tokens, bool flash) {
  kinds::AttentionSpec a{tokens,
                         c.hidden,
                         c.heads,
                         c.kv_heads,
                         c.qkv_bias.value_or(c.bias),
                         c.dropout,
                         flash,
                         c.head_dim,
                         c.out_bias.value_or(c.bias),
                         c.qk_norm};
  a.causal = c.causal;
  return a;
}
// The MLP of block `block`: mixture of experts unless the model is dense or the block is one
// of its dense blocks.
kinds::MlpSpec mlp_spec(const TransformerConfig& c, std::int64_t tokens, bool save_input,
                        int block) {
  const std::int64_t ffn = c.ffn == 0 ? 4 * c.hidden : c.ffn;
  const bool dense = c.experts <= 1 || (static_cast<std::size_t>(block) < c.dense_blocks.size() &&
                                        c.dense_blocks[static_cast<std::size_t>(block)]);
  kinds::MlpSpec m{tokens,    c.hidden, ffn, c.mlp, c.mlp_bias.value_or(c.bias), c.dropout,
                   dense ? 0 : c.experts, dense ? 0 : c.top_k, save_input};
  if (!dense) {
    if (c.expert_ffn > 0) m.ffn = c.expert_ffn;
    m.shared_ffn = c.shared_expert_ffn;
    m.shared_gate = c.shared_expert_gate;
    m.expert_bias = c.expert_bias;
  }
  return m;
}

}  // namespace

namespace detail {

// Appends c.layers blocks after `x` (see BlockLayout); returns the last block's output.
Vertex add_blocks(Model& m, Vertex x, const TransformerConfig& c, std::int64_t tokens,
                  const BuildOptions& opts) {
  const DType dt = opts.activation_dtype, dt32 = opts.fp32_ops_dtype();
  const std::int64_t sh = tokens * c.hidden;
  auto norm = [&](std::string name, int block, bool save_input = true) {
    const kinds::NormSpec spec{tokens, c.hidden, save_input};
    return in_block(c.norm == NormKind::layernorm ? kinds::layernorm(std::move(name), spec, dt32)
                                                  : kinds::rmsnorm(std::move(name), spec, dt32),
                    block);
  };
  kinds::AttentionSpec att = attention_spec(c, tokens, opts.flash_attention);
  att.softmax_fp32 = opts.autocast;
  att.gemm_input_bytes = opts.gemm_input_bytes();
  std::optional<kinds::MlaSpec> mla = c.mla;
  if (mla) {
    mla->tokens = tokens;
    mla->hidden = c.hidden;
    mla->heads = c.heads;
    mla->flash = opts.flash_attention;
  }
  for (int i = 0; i < c.layers; ++i) {
    const std::string p = "block." + std::to_string(i) + ".";
    auto attn = [&](Vertex in) {
      Layer l = mla ? kinds::mla_attention(p + "attn", *mla, dt)
                    : kinds::attention(p + "attn", att, dt);
      return add_after(m, in_block(std::move(l), i), {in});
    };
    auto mlp = [&](Vertex in, bool save_input) {
      kinds::MlpSpec spec = mlp_spec(c, tokens, save_input, i);
      spec.gemm_input_bytes = opts.gemm_input_bytes();
      return add_after(m, in_block(kinds::mlp(p + "mlp", spec, dt), i), {in});
    };
    auto add = [&](const char* name, Vertex a, Vertex b) {
      return add_after(m, in_block(kinds::add(p + name, sh, dt32), i), {a, b});
    };
    switch (c.layout) {
      case BlockLayout::sequential: {
        const Vertex add1 = add("add1", attn(add_after(m, norm(p + "ln1", i), {x})), x);
        x = add("add2", mlp(add_after(m, norm(p + "ln2", i), {add1}), true), add1);
        break;
      }
      case BlockLayout::parallel:
      case BlockLayout::parallel_shared_norm: {
        // The second norm reads the same x as ln1, which ln1 already keeps; with one shared
        // norm the MLP reads the tensor the attention already keeps.
        const bool shared = c.layout == BlockLayout::parallel_shared_norm;
        const Vertex ln1 = add_after(m, norm(p + "ln1", i), {x});
        const Vertex a = attn(ln1);
        const Vertex f =
            shared ? mlp(ln1, false) : mlp(add_after(m, norm(p + "ln2", i, false), {x}), true);
        x = add("add2", add("add1", a, f), x);
        break;
      }
      case BlockLayout::post_norm: {
        const Vertex ln1 = add_after(m, norm(p + "ln1", i), {add("add1", attn(x), x)});
        x = add_after(m, norm(p + "ln2", i), {add("add2", mlp(ln1, true), ln1)});
        break;
      }
    }
  }
  return x;
}

}  // namespace detail

Model build_transformer(const TransformerConfig& c, const BuildOptions& opts) {
  require_positive(c.layers, "layers");
  require_positive(c.hidden, "hidden");
  require_positive(c.heads, "heads");
  require_positive(c.vocab, "vocab");
  require_positive(opts.seq_len, "seq_len");
  if (c.kv_heads < 0 || c.ffn < 0 || c.head_dim < 0 || c.token_types < 0 || c.experts < 0 ||
      c.expert_ffn < 0 || c.shared_expert_ffn < 0)
    throw std::invalid_argument(
        "kv_heads, ffn, head_dim, token_types, experts, expert_ffn and shared_expert_ffn must be "
        ">= 0");
  if (c.learned_positions) {
    require_positive(c.max_positions, "max_positions");
    if (opts.seq_len > c.max_positions)
      throw std::invalid_argument("seq_len (" + std::to_string(opts.seq_len) +
                                  ") exceeds max_positions (" + std::to_string(c.max_positions) +
                                  ") of the learned position embeddings");
  }
  // Under autocast the embeddings, norms and residual adds run in fp32 (dt32).
  const DType dt = opts.activation_dtype, dt32 = opts.fp32_ops_dtype();
  const std::int64_t s = opts.seq_len, h = c.hidden;

  Model m;
  m.name = c.name;
  m.sequence_model = true;
  m.seq_len = s;
  m.num_blocks = c.layers;
  m.hidden = h;
  reserve_layers(m, static_cast<std::size_t>(c.layers) * 16 + 16);  // a block has at most 16 layers

  auto norm = [&](std::string name) {
    const kinds::NormSpec spec{s, h, true};
    return c.norm == NormKind::layernorm ? kinds::layernorm(std::move(name), spec, dt32)
                                         : kinds::rmsnorm(std::move(name), spec, dt32);
  };
  const kinds::EmbeddingSpec emb{
      s, c.vocab, h, c.learned_positions ? c.max_positions : 0, c.dropout, c.token_types};
  Vertex x = add_layer(m, kinds::embedding("embed", emb, dt32));
  const bool post = c.layout == BlockLayout::post_norm;
  if (post) x = add_after(m, norm("embed_ln"), {x});
  x = detail::add_blocks(m, x, c, s, opts);
  if (!post) x = add_after(m, norm("ln_f"), {x});
  const kinds::LossSpec loss{s, h, c.vocab,
                             c.tied_embeddings ? kinds::LossHead::tied : kinds::LossHead::untied,
                             c.head_bias};
  if (c.classes > 0) {
    // BertForSequenceClassification: pooler (dense + tanh on the first token), dropout and
    // classifier on that one token per sample, cross-entropy over the classes; no LM head, so
    // no tokens x vocab logits. The pooled dropout (h elements per sample) is not modelled.
    if (!c.pooler) throw std::invalid_argument("a sequence classifier needs the pooler");
    const std::int64_t gemm_in = opts.gemm_input_bytes();
    const Vertex pool = add_after(m, kinds::linear("pooler", {1, h, h, true, gemm_in}, dt), {x});
    const Vertex cls =
        add_after(m, kinds::linear("classifier", {1, h, c.classes, true, gemm_in}, dt), {pool});
    add_after(m, kinds::loss("loss", {1, 0, c.classes, kinds::LossHead::none, false}, dt), {cls});
  } else if (c.pooler) {
    // The pooler reads the first token; its output feeds the (next-sentence) loss.
    const Vertex pool = add_after(m, kinds::linear("pooler", {1, h, h, true, opts.gemm_input_bytes()}, dt), {x});
    add_after(m, kinds::loss("loss", loss, dt), {x, pool});
  } else {
    add_after(m, kinds::loss("loss", loss, dt), {x});
  }
  finalize(m);
  return m;
}

TransformerConfig gpt3_config(std::string name, int layers, std::int64_t hidden, std::int64_t heads,
                              std::int64_t context, std::int64_t vocab) {
  TransformerConfig c;
  c.name = std::move(name);
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.ffn = 0;  // 4 * hidden, and still 4 * hidden when a preset's hidden is overridden
  c.vocab = vocab;
  c.max_positions = context;
  return c;  // the remaining defaults (LayerNorm, GeLU, bias, tied, learned, dropout) are GPT's
}

Model build_vit(const VitConfig& v, const BuildOptions& opts) {
  require_positive(v.layers, "layers");
  require_positive(v.hidden, "hidden");
  require_positive(v.patch, "patch");
  require_positive(v.image_size, "image_size");
  require_positive(v.classes, "classes");
  if (v.image_size % v.patch != 0)
    throw std::invalid_argument("patch (" + std::to_string(v.patch) + ") must divide image_size (" +
                                std::to_string(v.image_size) + ")");
  const DType dt = opts.activation_dtype;
  const std::int64_t e = dtype_bytes(dt), h = v.hidden, grid = v.image_size / v.patch;
  const std::int64_t tokens = grid * grid + 1;  // patches and the class token

  Model m;
  m.name = v.name;
  m.sequence_model = false;
  m.num_blocks = v.layers;
  m.hidden = h;
  const kinds::Conv2dSpec patch{3, h,    v.patch,      v.patch,      0,
                                1, true, v.image_size, v.image_size, true};
  Vertex x = add_layer(m, kinds::conv2d("patch_embed", patch, dt));
  // Class token (h) and learned positions (T*h), replicated: one add over T*h elements.
  Layer cls;
  cls.name = "cls_pos";
  cls.kind = LayerKind::embedding;
  cls.params = (tokens + 1) * h;
  cls.tensors = {{1, h}, {tokens, h}};  // the class token and the position table
  cls.output = core::Bytes{e * tokens * h};
  cls.flops = double(tokens * h);
  cls.backward_factor = 1.0;
  cls.io_bytes = core::Bytes{3 * e * tokens * h};
  x = add_after(m, std::move(cls), {x});

  TransformerConfig blocks;
  blocks.layers = v.layers;
  blocks.hidden = h;
  blocks.heads = v.heads;
  blocks.ffn = v.ffn;
  blocks.dropout = false;
  blocks.causal = false;  // every patch attends to every patch
  x = detail::add_blocks(m, x, blocks, tokens, opts);
  x = add_after(m, kinds::layernorm("ln_f", {tokens, h, true}, dt), {x});
  x = add_after(m, kinds::linear("head", {1, h, v.classes, true}, dt), {x});
  add_after(m, kinds::loss("loss", {1, 0, v.classes, kinds::LossHead::none, false}, dt), {x});
  finalize(m);
  return m;
}

Model build_mlp(const MlpConfig& c, const BuildOptions& opts) {
  require_positive(c.input, "input");
  require_positive(c.classes, "classes");
  const DType dt = opts.activation_dtype;
  Model m;
  m.name = c.name;
  m.sequence_model = false;
  std::int64_t width = c.input;
  std::optional<Vertex> x;
  auto chain = [&](Layer l) {
    const Vertex v = add_layer(m, std::move(l));
    if (x) add_edge(m, *x, v);
    x = v;
  };
  for (std::size_t i = 0; i < c.hidden.size(); ++i) {
    require_positive(c.hidden[i], "hidden width");
    const std::string n = std::to_string(i);
    chain(kinds::linear("fc" + n, {1, width, c.hidden[i], true}, dt));
    // The next linear keeps this ReLU's output as its input: counted there.
    chain(kinds::activation("relu" + n, c.hidden[i], kinds::ActivationFn::relu, kinds::Save::none,
                            dt));
    width = c.hidden[i];
  }
  chain(kinds::linear("fc" + std::to_string(c.hidden.size()), {1, width, c.classes, true}, dt));
  chain(kinds::loss("loss", {1, 0, c.classes, kinds::LossHead::none, false}, dt));
  finalize(m);
  return m;
}

}  // namespace trainsim::models
