#include "sim/scenario/fsdp_read.hpp"

namespace trainsim::scenario {

namespace {

Precision dtype(const std::string& name) {
  return name == "fp32" ? Precision::fp32 : (name == "fp16" ? Precision::fp16 : Precision::bf16);
}

}  // namespace

FsdpSpec read_fsdp(const YamlContext& ctx, const YAML::Node& node, const std::string& path,
                   const ParallelSpec& p) {
  FsdpSpec f;
  if (node.IsScalar()) {
    const std::string v = node.Scalar();
    const std::optional<bool> on = boolean_word(v);
    if (!on)
      ctx.fail(node, path,
               "expected true, false or a mapping {reshard_after_forward, param_dtype, "
               "reduce_dtype, shard_size, offload, separate_outer_layers, gradient_sync, "
               "flat_parameter, unshard}, got '" + v + "'");
    f.enabled = *on;
  } else if (node.IsMap()) {
    f.enabled = true;
    MapReader m(ctx, node, path);
    f.reshard_after_forward = m.bool_or("reshard_after_forward", true);
    if (m.has("param_dtype"))
      f.param_dtype = dtype(m.choice("param_dtype", {"bf16", "fp16", "fp32"}, "bf16"));
    f.reduce_dtype = dtype(m.choice("reduce_dtype", {"fp32", "bf16", "fp16"}, "fp32"));
    if (m.has("shard_size")) {
      f.shard_size = m.int_in("shard_size", ranges::kDegree);
      if (p.data % f.shard_size != 0)
        ctx.fail(m.node("shard_size"), m.path_of("shard_size"),
                 "shard_size " + std::to_string(f.shard_size) + " must divide parallel.data (" +
                     std::to_string(p.data) + ")");
    }
    f.cpu_offload = m.choice("offload", {"none", "cpu"}, "none") == "cpu";
    f.separate_outer_layers = m.bool_or("separate_outer_layers", false);
    f.sync_last_microbatch =
        m.choice("gradient_sync", {"every-micro-batch", "last-micro-batch"},
                 "every-micro-batch") == "last-micro-batch";
    f.flat_parameter = m.bool_or("flat_parameter", false);
    f.unshard_copy = m.choice("unshard", {"copy", "view"}, f.flat_parameter ? "view" : "copy") == "copy";
    if (f.unshard_copy && f.flat_parameter)
      ctx.fail(m.node("unshard"), m.path_of("unshard"),
               "expected view with flat_parameter: true (FSDP1's FlatParameter is a view of its "
               "gather's output), got copy");
    m.finish();
  } else {
    ctx.fail(node, path,
             "expected true, false or a mapping {reshard_after_forward, param_dtype, "
             "reduce_dtype, shard_size, offload, separate_outer_layers, gradient_sync, "
             "flat_parameter, unshard}");
  }
  if (!f.enabled) return f;
  if (p.zero > 0)
    ctx.fail(node, path,
             "FSDP shards the model states itself: set parallel.zero: 0 (got zero " +
                 std::to_string(p.zero) + "), or drop parallel.fsdp for DeepSpeed's ZeRO");
  return f;
}

}  // namespace trainsim::scenario
