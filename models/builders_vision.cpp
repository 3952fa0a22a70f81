// Image builders: ResNet and VGG (ViT is in builders.cpp with the transformer blocks it uses).
#include <optional>
#include <stdexcept>

#include "models/builders.hpp"
#include "models/builders_util.hpp"

namespace trainsim::models {

using detail::add_after;
using detail::in_block;
using detail::require_positive;

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
  add_after(m, kinds::loss("loss", {1, 0, c.classes, kinds::LossHead::none, false}, dt), {x});
  m.num_blocks = total_blocks;
  finalize(m);
  return m;
}

Model build_vgg(const VggConfig& c, const BuildOptions& opts) {
  if (c.features.empty()) throw std::invalid_argument("features must list at least one conv");
  require_positive(c.classes, "classes");
  require_positive(c.image_size, "image_size");
  const DType dt = opts.activation_dtype;
  using kinds::Save;
  Model m;
  m.name = c.name;
  m.sequence_model = false;
  std::optional<Vertex> x;
  auto chain = [&](Layer l) {
    const Vertex v = add_layer(m, std::move(l));
    if (x) add_edge(m, *x, v);
    x = v;
  };
  std::int64_t ch = 3, hw = c.image_size;
  int conv = 0, pool = 0;
  for (std::int64_t width : c.features) {
    if (width == 0) {
      const kinds::PoolSpec ps{kinds::PoolMode::max, {ch, hw, hw}, 2, 2, 0, 1};
      chain(kinds::pooling("pool" + std::to_string(++pool), ps, dt));
      hw = kinds::pool_output_hw(ps).first;
      continue;
    }
    require_positive(width, "conv width");
    const std::string n = std::to_string(++conv);
    const kinds::Conv2dSpec cs{ch, width, 3, 1, 1, 1, true, hw, hw, true};
    chain(kinds::conv2d("conv" + n, cs, dt));
    // In place: the next conv or max pool keeps this output as its input.
    chain(
        kinds::activation("relu" + n, width * hw * hw, kinds::ActivationFn::relu, Save::none, dt));
    ch = width;
  }
  const kinds::PoolSpec gap{kinds::PoolMode::adaptive_avg, {ch, hw, hw}, 0, 0, 0, 7};
  chain(kinds::pooling("avgpool", gap, dt));
  std::int64_t in = ch * 7 * 7;
  for (int i = 6; i <= 7; ++i) {
    const std::string n = std::to_string(i);
    chain(kinds::linear("fc" + n, {1, in, 4096, true}, dt));
    // The ReLU keeps its output; the dropout after it makes a new tensor for the next fc.
    chain(kinds::activation("fc" + n + "_relu", 4096, kinds::ActivationFn::relu, Save::automatic,
                            dt));
    chain(kinds::dropout("fc" + n + "_dropout", 4096, dt));
    in = 4096;
  }
  chain(kinds::linear("fc8", {1, in, c.classes, true}, dt));
  chain(kinds::loss("loss", {1, 0, c.classes, kinds::LossHead::none, false}, dt));
  // No repeated blocks: the layers differ in size (num_blocks stays 0, as for the MLP).
  finalize(m);
  return m;
}

}  // namespace trainsim::models
