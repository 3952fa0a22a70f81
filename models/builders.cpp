#include "models/builders.hpp"

#include <stdexcept>

namespace trainsim::models {

namespace {

void require_positive(std::int64_t v, const char* what) {
  if (v <= 0)
    throw std::invalid_argument(std::string(what) + " must be a positive integer, got " +
                                std::to_string(v));
}

Vertex add_after(Model& m, Layer layer, std::initializer_list<Vertex> inputs) {
  const Vertex v = add_layer(m, std::move(layer));
  for (Vertex in : inputs) add_edge(m, in, v);
  return v;
}

Layer in_block(Layer l, int block) {
  l.block = block;
  return l;
}

}  // namespace

Model build_transformer(const TransformerConfig& c, const BuildOptions& opts) {
  require_positive(c.layers, "layers");
  require_positive(c.hidden, "hidden");
  require_positive(c.heads, "heads");
  require_positive(c.vocab, "vocab");
  require_positive(opts.seq_len, "seq_len");
  if (c.kv_heads < 0 || c.ffn < 0) throw std::invalid_argument("kv_heads and ffn must be >= 0");
  if (c.learned_positions) {
    require_positive(c.max_positions, "max_positions");
    if (opts.seq_len > c.max_positions)
      throw std::invalid_argument("seq_len (" + std::to_string(opts.seq_len) +
                                  ") exceeds max_positions (" + std::to_string(c.max_positions) +
                                  ") of the learned position embeddings");
  }
  const DType dt = opts.activation_dtype;
  const std::int64_t s = opts.seq_len, h = c.hidden;
  const std::int64_t ffn = c.ffn == 0 ? 4 * h : c.ffn;

  Model m;
  m.name = c.name;
  m.sequence_model = true;
  m.seq_len = s;
  m.num_blocks = c.layers;
  m.hidden = h;

  auto norm = [&](std::string name) {
    const kinds::NormSpec spec{s, h};
    return c.norm == NormKind::layernorm ? kinds::layernorm(std::move(name), spec, dt)
                                         : kinds::rmsnorm(std::move(name), spec, dt);
  };

  Vertex x = add_layer(
      m, kinds::embedding(
             "embed", {s, c.vocab, h, c.learned_positions ? c.max_positions : 0, c.dropout}, dt));
  for (int i = 0; i < c.layers; ++i) {
    const std::string p = "block." + std::to_string(i) + ".";
    const Vertex ln1 = add_after(m, in_block(norm(p + "ln1"), i), {x});
    const kinds::AttentionSpec att{
        s, h, c.heads, c.kv_heads, c.bias, c.dropout, opts.flash_attention};
    const Vertex attn = add_after(m, in_block(kinds::attention(p + "attn", att, dt), i), {ln1});
    const Vertex add1 = add_after(m, in_block(kinds::add(p + "add1", s * h, dt), i), {attn, x});
    const Vertex ln2 = add_after(m, in_block(norm(p + "ln2"), i), {add1});
    const kinds::MlpSpec mlp{s, h, ffn, c.mlp, c.bias, c.dropout};
    const Vertex ff = add_after(m, in_block(kinds::mlp(p + "mlp", mlp, dt), i), {ln2});
    x = add_after(m, in_block(kinds::add(p + "add2", s * h, dt), i), {ff, add1});
  }
  const Vertex ln_f = add_after(m, norm("ln_f"), {x});
  const kinds::LossSpec loss{s, h, c.vocab,
                             c.tied_embeddings ? kinds::LossHead::tied : kinds::LossHead::untied};
  add_after(m, kinds::loss("loss", loss, dt), {ln_f});
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

Model build_resnet(const ResNetConfig& c, const BuildOptions& opts) {
  if (c.blocks.empty()) throw std::invalid_argument("blocks must list at least one stage");
  for (int b : c.blocks) require_positive(b, "blocks per stage");
  require_positive(c.classes, "classes");
  require_positive(c.image_size, "image_size");
  require_positive(c.base_width, "base_width");
  const DType dt = opts.activation_dtype;
  using kinds::ImageShape;
  using kinds::Save;

  Model m;
  m.name = c.name;
  m.sequence_model = false;

  // Stem: 7x7/2 conv, BN, ReLU (kept by the max pool as its input), 3x3/2 max pool.
  kinds::Conv2dSpec stem{3, c.base_width, 7, 2, 3, 1, false, c.image_size, c.image_size, true};
  auto [hw, w2] = kinds::conv2d_output_hw(stem);
  (void)w2;  // square images
  std::int64_t ch = c.base_width;
  Vertex x = add_layer(m, kinds::conv2d("conv1", stem, dt));
  x = add_after(m, kinds::batchnorm("bn1", {ch, hw, hw}, dt), {x});
  x = add_after(
      m, kinds::activation("relu", ch * hw * hw, kinds::ActivationFn::relu, Save::none, dt), {x});
  const kinds::PoolSpec pool{kinds::PoolMode::max, {ch, hw, hw}, 3, 2, 1, 1};
  hw = kinds::pool_output_hw(pool).first;
  x = add_after(m, kinds::pooling("maxpool", pool, dt), {x});

  int block = 0;
  const int total_blocks = [&] {
    int n = 0;
    for (int b : c.blocks) n += b;
    return n;
  }();
  for (std::size_t stage = 0; stage < c.blocks.size(); ++stage) {
    const std::int64_t width = c.base_width << stage, out_ch = 4 * width;
    for (int i = 0; i < c.blocks[stage]; ++i, ++block) {
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(i) + ".";
      const std::int64_t stride = (i == 0 && stage > 0) ? 2 : 1;
      const Vertex in = x;
      const std::int64_t in_hw = hw;
      auto conv = [&](const std::string& n, std::int64_t cin, std::int64_t cout, std::int64_t k,
                      std::int64_t st, std::int64_t pad, std::int64_t size, bool save) {
        const kinds::Conv2dSpec cs{cin, cout, k, st, pad, 1, false, size, size, save};
        return std::pair{in_block(kinds::conv2d(p + n, cs, dt), block),
                         kinds::conv2d_output_hw(cs).first};
      };
      auto bn = [&](const std::string& n, std::int64_t chans, std::int64_t size) {
        return in_block(kinds::batchnorm(p + n, ImageShape{chans, size, size}, dt), block);
      };
      auto relu = [&](const std::string& n, std::int64_t elems, Save save) {
        return in_block(kinds::activation(p + n, elems, kinds::ActivationFn::relu, save, dt),
                        block);
      };
      auto [c1, s1] = conv("conv1", ch, width, 1, 1, 0, in_hw, true);
      Vertex y = add_after(m, std::move(c1), {in});
      y = add_after(m, bn("bn1", width, s1), {y});
      y = add_after(m, relu("relu1", width * s1 * s1, Save::none), {y});
      auto [c2, s2] = conv("conv2", width, width, 3, stride, 1, s1, true);
      y = add_after(m, std::move(c2), {y});
      y = add_after(m, bn("bn2", width, s2), {y});
      y = add_after(m, relu("relu2", width * s2 * s2, Save::none), {y});
      auto [c3, s3] = conv("conv3", width, out_ch, 1, 1, 0, s2, true);
      y = add_after(m, std::move(c3), {y});
      y = add_after(m, bn("bn3", out_ch, s3), {y});
      Vertex shortcut = in;
      if (i == 0) {  // projection shortcut: channels (and, past stage 1, size) change
        auto [ds, sd] = conv("downsample.conv", ch, out_ch, 1, stride, 0, in_hw, false);
        shortcut = add_after(m, std::move(ds), {in});
        shortcut = add_after(m, bn("downsample.bn", out_ch, sd), {shortcut});
      }
      const std::int64_t n_out = out_ch * s3 * s3;
      y = add_after(m, in_block(kinds::add(p + "add", n_out, dt), block), {y, shortcut});
      // The next block's conv1 keeps this ReLU's output; after the last block nothing does.
      x = add_after(m, relu("relu3", n_out, block + 1 == total_blocks ? Save::output : Save::none),
                    {y});
      ch = out_ch;
      hw = s3;
    }
  }
  const kinds::PoolSpec gap{kinds::PoolMode::adaptive_avg, {ch, hw, hw}, 0, 0, 0, 1};
  x = add_after(m, kinds::pooling("avgpool", gap, dt), {x});
  x = add_after(m, kinds::linear("fc", {1, ch, c.classes, true}, dt), {x});
  add_after(m, kinds::loss("loss", {1, 0, c.classes, kinds::LossHead::none}, dt), {x});
  m.num_blocks = total_blocks;
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
  chain(kinds::loss("loss", {1, 0, c.classes, kinds::LossHead::none}, dt));
  finalize(m);
  return m;
}

}  // namespace trainsim::models
