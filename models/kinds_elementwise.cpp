// Image and element-wise kinds. Notation per sample: a C x H x W input, e activation bytes,
// n elements. None of these layers is split under tensor parallelism. Element-wise FLOPs count
// one per arithmetic operation per element; these layers are memory-bound, so io_bytes (read
// + written by the forward kernel) is what drives their roofline time.
#include <stdexcept>

#include "models/kinds.hpp"
#include "models/kinds_util.hpp"

namespace trainsim::models::kinds {

using core::Bytes;
using detail::bytes;
using detail::prod;
using detail::sum;
using detail::require_positive;

namespace {
void require_image(const ImageShape& s) {
  require_positive(s.channels, "channels");
  require_positive(s.height, "height");
  require_positive(s.width, "width");
}

// floor((x + 2 padding - kernel) / stride) + 1, which must be at least 1.
std::int64_t window_out(std::int64_t x, std::int64_t kernel, std::int64_t stride,
                        std::int64_t padding, const char* what) {
  const std::int64_t padded = sum({x, prod({2, padding})});
  const std::int64_t span = padded - kernel;
  if (span < 0)
    throw std::invalid_argument(std::string("kernel (") + std::to_string(kernel) +
                                ") is larger than the padded input " + what + " (" +
                                std::to_string(padded) + ")");
  return span / stride + 1;
}
}  // namespace

std::pair<std::int64_t, std::int64_t> conv2d_output_hw(const Conv2dSpec& c) {
  require_positive(c.height, "height");
  require_positive(c.width, "width");
  require_positive(c.kernel, "kernel");
  require_positive(c.stride, "stride");
  detail::require_non_negative(c.padding, "padding");
  return {window_out(c.height, c.kernel, c.stride, c.padding, "height"),
          window_out(c.width, c.kernel, c.stride, c.padding, "width")};
}

// conv2d: params = out*(in/groups)*k^2 [+ out bias]. saved = e*in*H*W input (0 when
// save_input is off); output = e*out*H'*W'; flops = 2*out*H'*W'*(in/groups)*k^2;
// io = input + output bytes.
Layer conv2d(std::string name, const Conv2dSpec& c, DType dtype) {
  require_positive(c.in_channels, "in_channels");
  require_positive(c.out_channels, "out_channels");
  require_positive(c.groups, "groups");
  detail::require_divides(c.groups, "groups", c.in_channels, "in_channels");
  detail::require_divides(c.groups, "groups", c.out_channels, "out_channels");
  const auto [oh, ow] = conv2d_output_hw(c);
  const std::int64_t e = dtype_bytes(dtype), k2 = prod({c.kernel, c.kernel});
  const std::int64_t in_per_group = c.in_channels / c.groups;
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::conv2d;
  l.params = sum({prod({c.out_channels, in_per_group, k2}), c.bias ? c.out_channels : 0});
  l.gemm_params = l.params;  // autocast casts a conv's weight (and bias) like a linear's
  l.tensors.push_back({c.kernel, c.kernel, prod({c.out_channels, in_per_group})});
  if (c.bias) l.tensors.push_back({c.out_channels});
  const Bytes input = bytes({e, c.in_channels, c.height, c.width});
  l.saved = c.save_input ? input : Bytes{};
  l.output = bytes({e, c.out_channels, oh, ow});
  l.flops =
      2.0 * double(c.out_channels) * double(oh) * double(ow) * double(in_per_group) * double(k2);
  l.matmul = true;
  l.io_bytes = input + l.output;
  return l;
}

// batchnorm: params = 2C (weight, bias; running mean/var are buffers). saved = e*C*H*W input;
// output = e*C*H*W; flops = 8 per element (as layernorm); io = 2 * e*C*H*W.
Layer batchnorm(std::string name, const ImageShape& in, DType dtype) {
  require_image(in);
  const std::int64_t e = dtype_bytes(dtype), n = prod({in.channels, in.height, in.width});
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::batchnorm;
  l.params = 2 * in.channels;
  l.tensors.push_back({in.channels, 0, 1, 2});
  l.saved = bytes({e, n});
  l.output = bytes({e, n});
  l.flops = 8.0 * double(n);
  l.io_bytes = bytes({2 * e, n});
  return l;
}

std::pair<std::int64_t, std::int64_t> pool_output_hw(const PoolSpec& p) {
  require_image(p.input);
  if (p.mode == PoolMode::adaptive_avg) {
    require_positive(p.output_size, "output_size");
    return {p.output_size, p.output_size};
  }
  require_positive(p.kernel, "kernel");
  detail::require_non_negative(p.stride, "stride");
  detail::require_non_negative(p.padding, "padding");
  const std::int64_t stride = p.stride == 0 ? p.kernel : p.stride;
  return {window_out(p.input.height, p.kernel, stride, p.padding, "height"),
          window_out(p.input.width, p.kernel, stride, p.padding, "width")};
}

// pooling to C x H' x W': output = e*C*H'*W'.
// max: saved = e*C*H*W input + 8*C*H'*W' int64 argmax indices (what PyTorch keeps);
//   flops = C*H'*W'*k^2 comparisons; io = input + output + indices.
// avg: saved = nothing (backward needs only shapes); flops = C*H'*W'*k^2; io = input + output.
// adaptive_avg: saved = nothing; flops = C*H*W additions; io = input + output.
Layer pooling(std::string name, const PoolSpec& p, DType dtype) {
  const auto [oh, ow] = pool_output_hw(p);
  const std::int64_t e = dtype_bytes(dtype);
  const std::int64_t n_in = prod({p.input.channels, p.input.height, p.input.width});
  const std::int64_t n_out = prod({p.input.channels, oh, ow});
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::pooling;
  l.output = bytes({e, n_out});
  l.backward_factor = 1.0;
  l.io_bytes = bytes({e, n_in}) + l.output;
  switch (p.mode) {
    case PoolMode::max:
      l.saved = bytes({e, n_in}) + bytes({8, n_out});
      l.io_bytes += bytes({8, n_out});
      l.flops = double(n_out) * double(p.kernel) * double(p.kernel);
      break;
    case PoolMode::avg:
      l.flops = double(n_out) * double(p.kernel) * double(p.kernel);
      break;
    case PoolMode::adaptive_avg:
      l.flops = double(n_in);
      break;
  }
  return l;
}

// activation over n elements: saved = e*n of the input or output per `save` (automatic: relu
// keeps its output, gelu and silu their input), 0 for none; output = e*n; io = 2e*n;
// flops per element: relu 1, silu 4 (negate, exp, add, divide), gelu 8 (tanh form).
Layer activation(std::string name, std::int64_t n, ActivationFn fn, Save save, DType dtype) {
  require_positive(n, "elements");
  const std::int64_t e = dtype_bytes(dtype);
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::activation;
  l.saved = save == Save::none ? Bytes{} : bytes({e, n});
  l.output = bytes({e, n});
  const double ops = fn == ActivationFn::relu ? 1.0 : fn == ActivationFn::silu ? 4.0 : 8.0;
  l.flops = ops * double(n);
  l.backward_factor = 1.0;
  l.io_bytes = bytes({2 * e, n});
  return l;
}

// dropout over n elements: saved = n (1-byte mask); output = e*n; flops = n;
// io = e*n read + e*n written + n mask written.
Layer dropout(std::string name, std::int64_t n, DType dtype) {
  require_positive(n, "elements");
  const std::int64_t e = dtype_bytes(dtype);
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::dropout;
  l.saved = Bytes{n};
  l.output = bytes({e, n});
  l.flops = double(n);
  l.backward_factor = 1.0;
  l.io_bytes = bytes({2 * e + 1, n});
  return l;
}

// add (residual) of two n-element tensors: saved = nothing (the gradient passes through to
// both inputs); output = e*n; flops = n; io = 3e*n (two reads, one write).
Layer add(std::string name, std::int64_t n, DType dtype) {
  require_positive(n, "elements");
  const std::int64_t e = dtype_bytes(dtype);
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::add;
  l.output = bytes({e, n});
  l.flops = double(n);
  l.backward_factor = 1.0;
  l.io_bytes = bytes({3 * e, n});
  return l;
}

// generic: every number as given; the split parts must not exceed their totals.
Layer generic(std::string name, const GenericSpec& g) {
  detail::require_non_negative(g.params, "params");
  detail::require_non_negative(g.params_split, "params_split");
  detail::require_non_negative(g.saved.value, "saved");
  detail::require_non_negative(g.saved_split.value, "saved_split");
  detail::require_non_negative(g.output.value, "output");
  detail::require_non_negative(g.io_bytes.value, "io_bytes");
  if (g.params_split > g.params) throw std::invalid_argument("params_split must not exceed params");
  if (g.saved_split > g.saved) throw std::invalid_argument("saved_split must not exceed saved");
  if (!(g.flops >= 0)) throw std::invalid_argument("flops must be zero or positive");
  if (!(g.backward_factor >= 0))
    throw std::invalid_argument("backward_factor must be zero or positive");
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::generic;
  l.params = g.params;
  l.params_split = g.params_split;
  l.saved = g.saved;
  l.saved_split = g.saved_split;
  l.output = g.output;
  l.flops = g.flops;
  l.backward_factor = g.backward_factor;
  l.matmul = g.matmul;
  l.io_bytes = g.io_bytes;
  return l;
}

}  // namespace trainsim::models::kinds
