// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434, section 2.1; DeepSeek-V3,
// arXiv:2412.19437, section 2.1.1), as Hugging Face's DeepseekV3Attention builds it. Notation
// per sample: s tokens, h hidden, a heads, r_q = q_rank, r_kv = kv_rank, d_n = nope_dim,
// d_r = rope_dim, d_v = v_dim, d_qk = d_n + d_r, e activation bytes.
//
// params, replicated: h*r_q q_a + r_q q_a norm (or nothing with r_q = 0), h*(r_kv + d_r) kv_a,
//   r_kv kv_a norm; split: r_q*a*d_qk q_b (or h*a*d_qk q with r_q = 0), r_kv*a*(d_n + d_v)
//   kv_b, a*d_v*h o.
// saved, replicated: e*s*h input of q_a and kv_a, [2*e*s*r_q q_a output and q_b input],
//   2*e*s*r_kv kv_a norm input and kv_b input; split: Q and K e*s*a*d_qk each, V e*s*a*d_v,
//   o input e*s*a*d_v, and the core: flash 4*a*s fp32 log-sum-exp; standard e*a*s^2 softmax.
// flops = 2*s*(every projection's weights) + 2*s^2*a*d_qk (QK^T) + 2*s^2*a*d_v (attn x V).
// io: each projection reads its input and writes its output, each norm reads and writes its
//   width; the core as in attention() with Q, K of width a*d_qk and V, output of width a*d_v.
// output = e*s*h; one all-reduce forward and one backward under tensor parallelism.
#include "models/kinds.hpp"
#include "models/kinds_util.hpp"

namespace trainsim::models::kinds {

using core::Bytes;
using detail::bytes;
using detail::prod;
using detail::require_positive;
using detail::sum;

Layer mla_attention(std::string name, const MlaSpec& spec, DType dtype) {
  require_positive(spec.tokens, "tokens");
  require_positive(spec.hidden, "hidden");
  require_positive(spec.heads, "heads");
  detail::require_non_negative(spec.q_rank, "q_lora_rank");
  require_positive(spec.kv_rank, "kv_lora_rank");
  require_positive(spec.nope_dim, "qk_nope_head_dim");
  require_positive(spec.rope_dim, "qk_rope_head_dim");
  require_positive(spec.v_dim, "v_head_dim");
  const std::int64_t e = dtype_bytes(dtype), s = spec.tokens, h = spec.hidden, a = spec.heads;
  const std::int64_t rq = spec.q_rank, rkv = spec.kv_rank, dr = spec.rope_dim;
  const std::int64_t qk = prod({a, sum({spec.nope_dim, dr})});  // Q (and K) width
  const std::int64_t v = prod({a, spec.v_dim});                  // V and o-input width
  const std::int64_t ass = prod({a, s, s});

  const std::int64_t down = sum({rq > 0 ? prod({h, rq}) : 0, rq, prod({h, sum({rkv, dr})}), rkv});
  const std::int64_t up = sum({rq > 0 ? prod({rq, qk}) : prod({h, qk}),
                               prod({rkv, sum({prod({a, spec.nope_dim}), v})}), prod({v, h})});
  // GEMM weights only (the norms are element-wise)
  const std::int64_t gemm = sum({down, up, -rq, -rkv});
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::attention;
  l.params_split = up;
  l.params = sum({down, up});
  if (rq > 0) l.tensors.insert(l.tensors.end(), {{rq, h}, {rq}, {qk, rq}});  // q_a, its norm, q_b
  else l.tensors.push_back({qk, h});                                         // q
  l.tensors.insert(l.tensors.end(), {{sum({rkv, dr}), h}, {rkv},            // kv_a, its norm
                                     {sum({prod({a, spec.nope_dim}), v}), rkv}, {h, v}});  // kv_b, o

  const Bytes replicated = bytes({e, s, sum({h, prod({2, rq}), prod({2, rkv})})});
  const Bytes core = spec.flash ? bytes({4, a, s}) : bytes({e, ass});
  l.saved_split = bytes({e, s, sum({prod({2, qk}), prod({2, v})})}) + core;
  l.saved_attention_core = spec.flash ? Bytes{} : core;
  l.saved = replicated + l.saved_split;
  l.output = bytes({e, s, h});
  const double S = double(s);
  l.attention_core_flops = 2.0 * S * S * double(qk + v);
  l.flops = 2.0 * S * double(gemm) + l.attention_core_flops;
  l.matmul = true;

  Bytes io = bytes({e, s, sum({h, rq > 0 ? rq : qk})});         // q_a (or q)
  if (rq > 0) io += bytes({e, s, sum({prod({2, rq}), rq, qk})});  // q_a norm, q_b
  io += bytes({e, s, sum({h, rkv, dr})});                       // kv_a
  io += bytes({e, s, sum({prod({3, rkv}), prod({a, spec.nope_dim}), v})});  // norm, kv_b
  if (spec.flash) {
    io += bytes({e, s, sum({prod({2, qk}), prod({2, v})})}) + bytes({4, a, s});
  } else {
    io += bytes({e, s, prod({2, qk})}) + bytes({e, ass});  // scores
    io += bytes({2 * e, ass});                             // softmax
    io += bytes({e, ass}) + bytes({e, s, prod({2, v})});   // attn x V
  }
  io += bytes({e, s, sum({v, h})});  // o
  l.io_bytes = io;

  l.tp_allreduce_forward = 1;
  l.tp_allreduce_backward = 1;
  l.tp_allreduce_bytes = l.output;
  l.heads = a;
  l.kv_heads = a;
  return l;
}

}  // namespace trainsim::models::kinds
