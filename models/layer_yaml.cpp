#include "models/layer_yaml.hpp"

#include <stdexcept>

#include "models/kinds.hpp"

namespace trainsim::models::yamlio {

namespace {

using Keys = std::vector<std::string>;

void only(const MapReader& r, const Keys& kind_keys) {
  Keys all = kCommonLayerKeys;
  all.insert(all.end(), kind_keys.begin(), kind_keys.end());
  r.only(all);
}

// Element count of an element-wise layer: `hidden` (per token) or channels x height x width.
std::int64_t elements(const MapReader& r, const LayerContext& ctx) {
  const bool image = r.has("channels") || r.has("height") || r.has("width");
  if (r.has("hidden") == image)
    r.fail_here(
        "expected either 'hidden' (features per token) or 'channels', 'height' and "
        "'width' (an image tensor), not " +
        std::string(image ? "both" : "neither"));
  if (!image) return core::checked_mul(ctx.tokens, r.positive("hidden"));
  return core::checked_mul(core::checked_mul(r.positive("channels"), r.positive("height")),
                           r.positive("width"));
}

Layer linear(const MapReader& r, std::string name, const LayerContext& c) {
  only(r, {"in", "out", "bias"});
  return kinds::linear(std::move(name),
                       {c.tokens, r.positive("in"), r.positive("out"), r.boolean_or("bias", true)},
                       c.dtype);
}

Layer embedding(const MapReader& r, std::string name, const LayerContext& c) {
  only(r, {"vocab", "hidden", "max_positions", "dropout", "token_types"});
  return kinds::embedding(
      std::move(name),
      {c.tokens, r.positive("vocab"), r.positive("hidden"), r.non_negative_or("max_positions", 0),
       r.boolean_or("dropout", false), r.non_negative_or("token_types", 0)},
      c.dtype);
}

Layer attention(const MapReader& r, std::string name, const LayerContext& c) {
  only(r, {"hidden", "heads", "kv_heads", "bias", "dropout", "head_dim", "out_bias"});
  const std::int64_t heads = r.positive("heads");
  const bool bias = r.boolean_or("bias", true);
  return kinds::attention(std::move(name),
                          {c.tokens, r.positive("hidden"), heads, r.positive_or("kv_heads", heads),
                           bias, r.boolean_or("dropout", false), c.flash,
                           r.positive_or("head_dim", 0), r.boolean_or("out_bias", bias)},
                          c.dtype);
}

Layer mlp(const MapReader& r, std::string name, const LayerContext& c) {
  only(r, {"hidden", "ffn", "activation", "bias", "dropout", "experts", "top_k", "save_input",
           "capacity_factor"});
  const std::string a = r.choice("activation", {"gelu", "swiglu", "geglu"}, "gelu");
  const auto act = a == "gelu"     ? kinds::MlpActivation::gelu
                   : a == "swiglu" ? kinds::MlpActivation::swiglu
                                   : kinds::MlpActivation::geglu;
  const std::int64_t experts = r.positive_or("experts", 1);
  if (experts > 1) r.require("top_k", "experts per token (1..experts)");
  if (experts <= 1 && r.has("capacity_factor"))
    r.fail_at("capacity_factor", "a capacity factor needs experts > 1 (a mixture-of-experts MLP)");
  const double capacity = r.number_or("capacity_factor", 0);
  if (r.has("capacity_factor") && (!(capacity > 0) || capacity > 1e6))
    r.fail_at("capacity_factor", "expected a number > 0 (each expert's buffer over its balanced "
                                 "share of the routed tokens)");
  Layer l = kinds::mlp(std::move(name),
                       {c.tokens, r.positive("hidden"), r.positive("ffn"), act,
                        r.boolean_or("bias", true), r.boolean_or("dropout", false), experts,
                        r.positive_or("top_k", 1), r.boolean_or("save_input", true)},
                       c.dtype);
  l.capacity_factor = capacity;
  return l;
}

Layer loss(const MapReader& r, std::string name, const LayerContext& c) {
  const std::string head = r.choice("head", {"untied", "tied", "none"}, "untied");
  if (head == "none") {
    only(r, {"vocab", "head"});
    return kinds::loss(std::move(name),
                       {c.tokens, 0, r.positive("vocab"), kinds::LossHead::none, false}, c.dtype);
  }
  only(r, {"vocab", "hidden", "head", "head_bias"});
  const auto h = head == "tied" ? kinds::LossHead::tied : kinds::LossHead::untied;
  return kinds::loss(
      std::move(name),
      {c.tokens, r.positive("hidden"), r.positive("vocab"), h, r.boolean_or("head_bias", false)},
      c.dtype);
}

Layer conv2d(const MapReader& r, std::string name, const LayerContext& c) {
  only(r, {"in_channels", "out_channels", "kernel", "stride", "padding", "groups", "bias", "height",
           "width", "save_input"});
  kinds::Conv2dSpec s;
  s.in_channels = r.positive("in_channels");
  s.out_channels = r.positive("out_channels");
  s.kernel = r.positive("kernel");
  s.stride = r.positive_or("stride", 1);
  s.padding = r.non_negative_or("padding", 0);
  s.groups = r.positive_or("groups", 1);
  s.bias = r.boolean_or("bias", true);
  s.height = r.positive("height");
  s.width = r.positive("width");
  s.save_input = r.boolean_or("save_input", true);
  return kinds::conv2d(std::move(name), s, c.dtype);
}

kinds::ImageShape image(const MapReader& r) {
  return {r.positive("channels"), r.positive("height"), r.positive("width")};
}

Layer pooling(const MapReader& r, std::string name, const LayerContext& c) {
  const std::string mode = r.choice("mode", {"max", "avg", "adaptive_avg"});
  kinds::PoolSpec s;
  if (mode == "adaptive_avg") {
    only(r, {"mode", "channels", "height", "width", "output_size"});
    s.mode = kinds::PoolMode::adaptive_avg;
    s.output_size = r.positive_or("output_size", 1);
  } else {
    only(r, {"mode", "channels", "height", "width", "kernel", "stride", "padding"});
    s.mode = mode == "max" ? kinds::PoolMode::max : kinds::PoolMode::avg;
    s.kernel = r.positive("kernel");
    s.stride = r.positive_or("stride", s.kernel);
    s.padding = r.non_negative_or("padding", 0);
  }
  s.input = image(r);
  return kinds::pooling(std::move(name), s, c.dtype);
}

const Keys kSizeKeys{"hidden", "channels", "height", "width"};

Layer activation(const MapReader& r, std::string name, const LayerContext& c) {
  Keys keys = kSizeKeys;
  keys.insert(keys.end(), {"function", "save"});
  only(r, keys);
  const std::string fn = r.choice("function", {"relu", "gelu", "silu"});
  const std::string save = r.choice("save", {"auto", "input", "output", "none"}, "auto");
  const auto f = fn == "relu"   ? kinds::ActivationFn::relu
                 : fn == "gelu" ? kinds::ActivationFn::gelu
                                : kinds::ActivationFn::silu;
  const auto s = save == "auto"     ? kinds::Save::automatic
                 : save == "input"  ? kinds::Save::input
                 : save == "output" ? kinds::Save::output
                                    : kinds::Save::none;
  return kinds::activation(std::move(name), elements(r, c), f, s, c.dtype);
}

Layer generic(const MapReader& r, std::string name) {
  only(r, {"params", "params_split", "saved", "saved_split", "output", "flops", "backward_factor",
           "matmul", "io_bytes"});
  kinds::GenericSpec g;
  r.require("params", "an integer >= 0");
  g.params = r.non_negative_or("params", 0);
  g.params_split = r.non_negative_or("params_split", 0);
  g.saved = r.bytes_or("saved", {});
  g.saved_split = r.bytes_or("saved_split", {});
  g.output = r.bytes_or("output", {});
  g.flops = r.number_or("flops", 0);
  g.backward_factor = r.number_or("backward_factor", 2.0);
  g.matmul = r.boolean_or("matmul", false);
  g.io_bytes = r.bytes_or("io_bytes", {});
  return kinds::generic(std::move(name), g);
}

}  // namespace

Layer parse_layer(const MapReader& r, LayerKind kind, std::string name, const LayerContext& c) {
  try {
    switch (kind) {
      case LayerKind::linear:
        return linear(r, std::move(name), c);
      case LayerKind::embedding:
        return embedding(r, std::move(name), c);
      case LayerKind::layernorm:
      case LayerKind::rmsnorm: {
        only(r, {"hidden", "save_input"});
        const kinds::NormSpec spec{c.tokens, r.positive("hidden"),
                                   r.boolean_or("save_input", true)};
        return kind == LayerKind::layernorm ? kinds::layernorm(std::move(name), spec, c.dtype)
                                            : kinds::rmsnorm(std::move(name), spec, c.dtype);
      }
      case LayerKind::attention:
        return attention(r, std::move(name), c);
      case LayerKind::mlp:
        return mlp(r, std::move(name), c);
      case LayerKind::conv2d:
        return conv2d(r, std::move(name), c);
      case LayerKind::batchnorm:
        only(r, {"channels", "height", "width"});
        return kinds::batchnorm(std::move(name), image(r), c.dtype);
      case LayerKind::pooling:
        return pooling(r, std::move(name), c);
      case LayerKind::activation:
        return activation(r, std::move(name), c);
      case LayerKind::dropout:
        only(r, kSizeKeys);
        return kinds::dropout(std::move(name), elements(r, c), c.dtype);
      case LayerKind::add:
        only(r, kSizeKeys);
        return kinds::add(std::move(name), elements(r, c), c.dtype);
      case LayerKind::loss:
        return loss(r, std::move(name), c);
      case LayerKind::generic:
        return generic(r, std::move(name));
    }
  } catch (const std::invalid_argument& e) {
    // Consistency between dimensions (heads dividing hidden, kernel fitting the input, ...).
    r.fail_here(std::string("invalid ") + std::string(to_string(kind)) + " layer: " + e.what());
  } catch (const core::OverflowError&) {
    r.fail_here("the layer's sizes overflow 64-bit byte counts; check its dimensions");
  }
  r.fail_here("unsupported layer kind");
}

}  // namespace trainsim::models::yamlio
