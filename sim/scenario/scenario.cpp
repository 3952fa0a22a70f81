#include "sim/scenario/scenario.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string_view>

#include "models/model_yaml.hpp"
#include "sim/scenario/fsdp_read.hpp"
#include "sim/scenario/power_read.hpp"
#include "sim/scenario/scale_read.hpp"
#include "sim/scenario/levers_read.hpp"
#include "sim/scenario/packed_read.hpp"
#include "sim/scenario/accumulate_read.hpp"
#include "sim/scenario/lora_read.hpp"
#include "sim/scenario/context.hpp"
#include "sim/scenario/grad_reduce_read.hpp"
#include "sim/scenario/p2p_read.hpp"
#include "sim/scenario/overrides.hpp"
#include "sim/scenario/validate.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

std::string_view to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
    case Recompute::selective_op: return "selective-op";
  }
  return "?";
}
std::string_view to_string(Schedule s) {
  switch (s) {
    case Schedule::gpipe: return "gpipe";
    case Schedule::one_f_one_b: return "1f1b";
    case Schedule::interleaved: return "interleaved";
  }
  return "?";
}

std::string_view to_string(PipelineEngine e) {
  switch (e) {
    case PipelineEngine::megatron: return "megatron";
    case PipelineEngine::deepspeed: return "deepspeed";
    case PipelineEngine::pytorch: return "pytorch";
  }
  return "?";
}

std::string_view to_string(BucketBuffers b) {
  switch (b) {
    case BucketBuffers::transient: return "transient";
    case BucketBuffers::in_place: return "in_place";
    case BucketBuffers::persistent: return "persistent";
  }
  return "?";
}

std::string_view to_string(ParallelDim d) {
  switch (d) {
    case ParallelDim::tensor: return "tensor";
    case ParallelDim::pipeline: return "pipeline";
    case ParallelDim::data: return "data";
  }
  return "?";
}

std::string_view to_string(OffloadTarget t) {
  return t == OffloadTarget::cpu ? "cpu" : "none";
}

const hw::DeviceSpec& Scenario::stage_device(std::int64_t stage) const {
  for (const auto& sd : parallel.stage_devices)
    for (auto st : sd.stages)
      if (st == stage) return sd.device;
  return device;
}

StateBytes Scenario::state_bytes() const {
  StateBytes b = state_bytes_per_param(training.precision, training.optimizer);
  if (training.accumulate_grads == AccumulateGrads::fused_fp32) b.gradients = 4;
  return b;
}

bool Scenario::buckets_kept() const {
  return parallel.bucket_buffers != BucketBuffers::transient && (parallel.data == 1 || parallel.zero <= 1) &&
         !training.offload.optimizer_on_cpu();
}

namespace {

// Device files read_device loaded on this thread (a ScenarioMemo keeps no reading that loaded
// one: the file may change between loads, the overrides would not).
thread_local std::uint64_t device_files_read = 0;

// Refuses a device or link figure outside its documented range, at the value written.
void check_figure(const YamlContext& ctx, MapReader& m, const std::string& key, double value,
                  const ranges::FigureRange& range) {
  if (value >= range.min && value <= range.max) return;  // NaN fails both
  const YAML::Node n = m.node(key);
  ctx.fail(n, m.path_of(key),
           std::string("expected a figure ") + range.text + ", got '" +
               (n.IsScalar() ? n.Scalar() : "?") + "'");
}

// `path` names the node in errors: "device", or "parallel.stage_devices[i].device".
hw::DeviceSpec read_device(const YamlContext& ctx, const YAML::Node& node,
                           const std::string& path = "device") {
  if (!node.IsDefined() || node.IsNull()) ctx.fail(node, path, "missing required key 'device'");
  auto preset_named = [&](const YAML::Node& n, const std::string& p) {
    const std::string name = read_string(ctx, n, p);
    auto d = hw::find_device(name);
    if (!d) {
      std::string list;
      for (const auto& x : hw::device_presets()) list += (list.empty() ? "" : ", ") + x.name;
      ctx.fail(n, p, "unknown device preset '" + name + "'; expected one of: " + list);
    }
    return *d;
  };
  if (node.IsScalar()) return preset_named(node, path);
  if (node.IsMap() && node.size() == 1 && node["file"].IsDefined()) {
    // A device file (e.g. written by `trainsim calibrate`), relative to the scenario.
    const std::string rel = read_string(ctx, node["file"], path + ".file");
    std::filesystem::path p(rel);
    if (p.is_relative()) p = std::filesystem::path(ctx.file()).parent_path() / p;
    const YamlContext file_ctx(p.string());
    ++device_files_read;
    const YAML::Node file =
        load_yaml_file(p.string(), ctx.locate(node["file"], path + ".file"), path + ".file");
    return read_device(file_ctx, file, path);
  }
  MapReader m(ctx, node, path);
  auto flops = [&](const char* key) {
    const core::FlopRate r = m.flop_rate(key);
    check_figure(ctx, m, key, r.per_s, ranges::kFlopRate);
    return r;
  };
  auto seconds = [&](const char* key) {
    const core::Duration t = m.duration(key);
    check_figure(ctx, m, key, core::to_seconds(t), ranges::kLatency);
    return t;
  };
  auto fraction = [&](const char* key, double fallback) {
    const double f = m.fraction_or(key, fallback);
    if (m.has(key)) check_figure(ctx, m, key, f, ranges::kEfficiency);
    return f;
  };
  hw::DeviceSpec d;
  const bool has_preset = m.has("preset");
  if (has_preset) {
    d = preset_named(m.node("preset"), m.path_of("preset"));
  } else {
    d.name = "custom";
    d.description = "user-defined device";
    d.source = "scenario file";
    d.memory = m.bytes("memory");
    d.peak_16bit = flops("peak_flops");
    d.memory_bandwidth = m.bandwidth("memory_bandwidth");
    d.peak_fp32 = d.peak_16bit;
    d.kernel_launch = core::Duration{4000};
  }
  d.name = m.string_or("name", d.name);
  if (has_preset) {
    d.memory = m.bytes_or("memory", d.memory);
    if (m.has("peak_flops")) d.peak_16bit = flops("peak_flops");
    if (m.has("memory_bandwidth")) d.memory_bandwidth = m.bandwidth("memory_bandwidth");
  }
  if (m.has("memory"))
    check_figure(ctx, m, "memory", static_cast<double>(d.memory.value), ranges::kMemory);
  if (m.has("memory_bandwidth"))
    check_figure(ctx, m, "memory_bandwidth", d.memory_bandwidth.bytes_per_s,
                 ranges::kMemoryBandwidth);
  if (m.has("peak_fp32_flops")) d.peak_fp32 = flops("peak_fp32_flops");
  if (m.has("peak_tf32_flops")) d.peak_tf32 = flops("peak_tf32_flops");
  d.reserved = m.bytes_or("reserved", d.reserved);
  d.matmul_efficiency = fraction("matmul_efficiency", d.matmul_efficiency);
  d.memory_efficiency = fraction("memory_efficiency", d.memory_efficiency);
  d.fp8_matmul_efficiency = fraction("fp8_matmul_efficiency", d.fp8_matmul_efficiency);
  d.flash_efficiency = fraction("flash_efficiency", d.flash_efficiency);
  d.flash_backward_efficiency = fraction("flash_backward_efficiency", d.flash_backward_efficiency);
  if (m.has("kernel_launch")) d.kernel_launch = seconds("kernel_launch");
  if (m.has("matmul_ramp")) d.matmul_ramp_s = core::to_seconds(seconds("matmul_ramp"));
  if (m.has("host_dispatch")) d.host_dispatch = seconds("host_dispatch");
  if (m.has("sm_count")) d.sm_count = static_cast<int>(m.int_in("sm_count", ranges::kSmCount));
  read_device_power(ctx, m, d);
  m.finish();
  if (d.reserved >= d.memory) {
    // Point at whichever of the two the user wrote (reserved first); else at the device.
    const char* key = m.has("reserved") ? "reserved" : (m.has("memory") ? "memory" : nullptr);
    ctx.fail(key ? m.node(key) : node, key ? m.path_of(key) : path, "reserved bytes (" + core::format_bytes(d.reserved) +
                             ") must be smaller than the memory (" + core::format_bytes(d.memory) + ")");
  }
  return d;
}

TrainingSpec read_training(const YamlContext& ctx, const YAML::Node& node, bool& seq_len_given,
                           YAML::Node& global_batch_node) {
  TrainingSpec t;
  if (!node.IsDefined() || node.IsNull()) ctx.fail(node, "training", "missing required key 'training'");
  MapReader m(ctx, node, "training");
  t.micro_batch = m.int_in("micro_batch", ranges::kMicroBatch);
  t.gradient_accumulation = m.int_in_or("gradient_accumulation", ranges::kGradientAccumulation, 0);
  if (m.has("global_batch")) {
    global_batch_node = m.node("global_batch");
    t.global_batch = m.positive_int("global_batch");
  } else {
    t.global_batch = 0;
  }
  seq_len_given = m.has("seq_len");
  t.seq_len = m.int_in_or("seq_len", ranges::kSeqLen, 0);
  {
    const auto& names = precision_names();
    const std::string prec = m.choice(
        "precision", {"fp32", "fp16", "bf16", "fp16-true", "bf16-true", "amp-fp16", "amp-bf16", "fp8"}, "bf16");
    t.precision = static_cast<Precision>(std::find(names.begin(), names.end(), prec) - names.begin());
  }
  read_optimizer(m, t);
  const auto rc = m.choice("recompute", {"none", "selective", "full", "selective-op"}, "none");
  t.recompute = rc == "none"        ? Recompute::none
                : rc == "selective" ? Recompute::selective
                : rc == "full"      ? Recompute::full
                                    : Recompute::selective_op;
  t.recompute_layers = m.has("recompute_layers") ? m.non_negative_int_or("recompute_layers", 0) : -1;
  t.flash_attention = m.choice("attention", {"standard", "flash"}, "standard") == "flash";
  t.caching_allocator = m.choice("allocator", {"caching", "none"}, "caching") == "caching";
  t.expert_imbalance = read_expert_imbalance(m);
  if (m.has("offload")) {
    // {optimizer: none|cpu, parameters: none|cpu}; the ZeRO stage is checked with the layout.
    YAML::Node off = m.node("offload");
    if (!off.IsMap()) ctx.fail(off, m.path_of("offload"), "expected a mapping {optimizer: none|cpu, parameters: none|cpu}");
    MapReader o(ctx, off, m.path_of("offload"));
    auto target = [&](const char* key) {
      return o.choice(key, {"none", "cpu"}, "none") == "cpu" ? OffloadTarget::cpu : OffloadTarget::none;
    };
    t.offload.optimizer = target("optimizer");
    t.offload.parameters = target("parameters");
    o.finish();
  }
  if (m.has("lora")) t.lora = read_lora(ctx, m.node("lora"), m.path_of("lora"));
  read_levers(m, t);
  read_packed_documents(ctx, m, t);
  read_accumulate(m, t);
  m.finish();
  return t;
}

ParallelSpec read_parallel(const YamlContext& ctx, const YAML::Node& node) {
  ParallelSpec p;
  if (!node.IsDefined() || node.IsNull()) return p;
  MapReader m(ctx, node, "parallel");
  p.data = m.int_in_or("data", ranges::kDegree, 1);
  p.tensor = m.int_in_or("tensor", ranges::kDegree, 1);
  p.pipeline = m.int_in_or("pipeline", ranges::kDegree, 1);
  // Each degree is at most 2^20, so each product below fits in 64 bits.
  if (p.devices() > ranges::kMaxDevices)
    ctx.fail(node, "parallel",
             "data x tensor x pipeline = " + std::to_string(p.devices()) + " devices, above the " +
                 std::to_string(ranges::kMaxDevices) + " trainsim simulates");
  read_context(m, p);
  if (p.devices() > ranges::kMaxDevices)
    ctx.fail(node, "parallel",
             "data x tensor x pipeline x context = " + std::to_string(p.devices()) +
                 " devices, above the " + std::to_string(ranges::kMaxDevices) + " trainsim simulates");
  p.zero = static_cast<int>(m.int_in_or("zero", ranges::kZeroStage, 0));
  const auto s = m.choice("schedule", {"gpipe", "1f1b", "interleaved"}, "1f1b");
  p.schedule = s == "gpipe" ? Schedule::gpipe : (s == "1f1b" ? Schedule::one_f_one_b : Schedule::interleaved);
  p.virtual_stages = m.int_in_or("virtual_stages", ranges::kVirtualStages,
                                 p.schedule == Schedule::interleaved ? 2 : 1);
  if (p.virtual_stages > 1 && p.schedule != Schedule::interleaved)
    ctx.fail(m.node("virtual_stages"), m.path_of("virtual_stages"),
             "virtual_stages > 1 needs schedule: interleaved");
  p.microbatch_group_size = m.int_in_or("microbatch_group_size", ranges::kMicrobatchGroup, 0);
  if (p.microbatch_group_size > 0 && (p.schedule != Schedule::interleaved || p.virtual_stages < 2))
    ctx.fail(m.node("microbatch_group_size"), m.path_of("microbatch_group_size"),
             "microbatch_group_size groups the micro-batches of the interleaved schedule: it "
             "needs schedule: interleaved and virtual_stages >= 2");
  const std::string engine = m.choice("pipeline_engine", {"megatron", "deepspeed", "pytorch"}, "megatron");
  p.microbatches_per_schedule =
      m.int_in_or("microbatches_per_schedule", ranges::kScheduleMicrobatches, 0);
  if (p.microbatches_per_schedule > 0 && engine != "pytorch")
    ctx.fail(m.node("microbatches_per_schedule"), m.path_of("microbatches_per_schedule"),
             "microbatches_per_schedule splits a step into PyTorch pipelining's schedules: it needs "
             "pipeline_engine: pytorch (Megatron-LM and DeepSpeed run one schedule per step)");
  if (engine == "pytorch") {
    p.pipeline_engine = PipelineEngine::pytorch;
    // ScheduleInterleaved1F1B derives its rounds from the micro-batch count; it has no group knob.
    if (p.microbatch_group_size > 0)
      ctx.fail(m.node("microbatch_group_size"), m.path_of("microbatch_group_size"),
               "microbatch_group_size is Megatron-Core's; the pytorch pipeline engine runs "
               "Interleaved1F1B's own rounds of micro-batches / max(1, micro-batches / pipeline)");
  }
  if (engine == "deepspeed") {
    p.pipeline_engine = PipelineEngine::deepspeed;
    // DeepSpeed's PipelineEngine runs its TrainSchedule (1F1B order) and refuses ZeRO-2/3;
    // without pipeline stages DeepSpeed runs its plain engine, which has neither limit.
    if (p.pipeline > 1 && p.schedule != Schedule::one_f_one_b)
      ctx.fail(m.node("pipeline_engine"), m.path_of("pipeline_engine"),
               "the deepspeed pipeline engine runs its own 1F1B schedule: set schedule: 1f1b");
    if (p.pipeline > 1 && p.zero >= 2)
      ctx.fail(m.node("pipeline_engine"), m.path_of("pipeline_engine"),
               "the deepspeed pipeline engine supports zero 0 or 1 (DeepSpeed's PipelineEngine "
               "refuses ZeRO-2 and ZeRO-3)");
  }
  read_p2p(ctx, m, p);
  read_grad_reduce(m, p);
  read_param_gather(m, p);
  p.sequence_parallel = m.bool_or("sequence_parallel", false);
  p.tp_comm_overlap = m.bool_or("tp_comm_overlap", false);
  if (p.tp_comm_overlap && !p.sequence_parallel)  // Megatron-LM's arguments.py asserts the same
    ctx.fail(m.node("tp_comm_overlap"), m.path_of("tp_comm_overlap"),
             "tp_comm_overlap needs sequence_parallel: true (the overlapped collectives are "
             "sequence parallelism's all-gathers and reduce-scatters)");
  p.expert = m.int_in_or("expert", ranges::kDegree, 1);
  p.bucket_size = m.bytes_or("bucket_size", p.bucket_size);
  {
    constexpr BucketBuffers kinds[] = {BucketBuffers::transient, BucketBuffers::in_place, BucketBuffers::persistent};
    const std::string chosen =
        m.choice("bucket_buffers", {to_string(kinds[0]), to_string(kinds[1]), to_string(kinds[2])},
                 std::string(to_string(kinds[0])));
    for (const BucketBuffers b : kinds)
      if (to_string(b) == chosen) p.bucket_buffers = b;
  }
  if (m.has("split_points")) {
    YAML::Node sp = m.node("split_points");
    if (!sp.IsSequence()) ctx.fail(sp, m.path_of("split_points"), "expected a list of layer indices");
    for (std::size_t i = 0; i < sp.size(); ++i)
      p.split_points.push_back(read_int(ctx, sp[i], m.path_of("split_points") + "[" + std::to_string(i) + "]", 1));
  }
  p.first_stage_blocks = m.int_in_or("first_stage_blocks", ranges::kStageBlocks, 0);
  p.last_stage_blocks = m.int_in_or("last_stage_blocks", ranges::kStageBlocks, 0);
  p.embedding_in_split = m.bool_or("embedding_in_split", false);
  p.loss_in_split = m.bool_or("loss_in_split", false);
  if (m.has("stage_devices")) {
    // [{stages: [0, 1], device: h100-80gb}, ...]: each stage index < pipeline, at most once.
    YAML::Node list = m.node("stage_devices");
    const std::string lpath = m.path_of("stage_devices");
    if (!list.IsSequence())
      ctx.fail(list, lpath, "expected a list of {stages: [indices], device: DEVICE} entries");
    std::set<std::int64_t> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string epath = lpath + "[" + std::to_string(i) + "]";
      const YAML::Node entry = list[i];
      if (!entry.IsMap()) ctx.fail(entry, epath, "expected a mapping {stages: [indices], device: DEVICE}");
      MapReader e(ctx, entry, epath);
      if (!e.has("stages")) ctx.fail(entry, epath + ".stages", "missing required key 'stages'");
      if (!e.has("device")) ctx.fail(entry, epath + ".device", "missing required key 'device'");
      StageDevice sd;
      YAML::Node stages = e.node("stages");
      const std::string spath = e.path_of("stages");
      if (!stages.IsSequence() || stages.size() == 0)
        ctx.fail(stages, spath, "expected a non-empty list of pipeline stage indices");
      for (std::size_t k = 0; k < stages.size(); ++k) {
        const std::string kpath = spath + "[" + std::to_string(k) + "]";
        const std::int64_t st = read_int(ctx, stages[k], kpath, 0);
        if (st >= p.pipeline)
          ctx.fail(stages[k], kpath, "stage " + std::to_string(st) + " does not exist: pipeline is " +
                                         std::to_string(p.pipeline) + " (stages 0.." +
                                         std::to_string(p.pipeline - 1) + ")");
        if (!seen.insert(st).second)
          ctx.fail(stages[k], kpath, "stage " + std::to_string(st) + " already has a device in stage_devices");
        sd.stages.push_back(st);
      }
      sd.device = read_device(ctx, e.node("device"), e.path_of("device"));
      e.finish();
      p.stage_devices.push_back(std::move(sd));
    }
  }
  const std::string allreduce = m.choice("allreduce", {"auto", "ring", "tree"}, "auto");
  if (allreduce != "auto")
    p.allreduce = allreduce == "tree" ? cost::CollectiveAlgo::tree : cost::CollectiveAlgo::ring;
  if (m.has("fsdp")) p.fsdp = read_fsdp(ctx, m.node("fsdp"), m.path_of("fsdp"), p);
  if (m.has("zero3")) p.zero3 = read_zero3(ctx, m.node("zero3"), m.path_of("zero3"), p.zero);
  m.finish();
  return p;
}

hw::LinkSpec read_link(const YamlContext& ctx, const YAML::Node& node, const std::string& path,
                       hw::LinkSpec fallback) {
  if (!node.IsDefined() || node.IsNull()) return fallback;
  auto named = [&](const YAML::Node& n, const std::string& p) {
    const std::string name = read_string(ctx, n, p);
    auto l = hw::find_link(name);
    if (!l) {
      std::string list;
      for (const auto& x : hw::link_presets()) list += (list.empty() ? "" : ", ") + x.name;
      ctx.fail(n, p, "unknown link preset '" + name + "'; expected one of: " + list);
    }
    return *l;
  };
  if (node.IsScalar()) return named(node, path);
  MapReader m(ctx, node, path);
  hw::LinkSpec l = m.has("preset") ? named(m.node("preset"), m.path_of("preset")) : fallback;
  if (!m.has("preset")) {
    l.name = "custom";
    l.source = "scenario file";
  }
  if (m.has("bandwidth")) {
    l.bandwidth = m.bandwidth("bandwidth");
    check_figure(ctx, m, "bandwidth", l.bandwidth.bytes_per_s, ranges::kLinkBandwidth);
  }
  if (m.has("latency")) {
    l.latency = m.duration("latency");
    check_figure(ctx, m, "latency", core::to_seconds(l.latency), ranges::kLatency);
  }
  m.finish();
  return l;
}

// Default fabric by device generation (overridden by `cluster:`).
std::pair<std::string, std::string> default_links(const std::string& device) {
  if (device.rfind("v100", 0) == 0) return {"nvlink2", "eth-100g"};  // EDR-era 100 Gb/s fabric
  if (device.rfind("a100", 0) == 0) return {"nvlink3", "ib-hdr"};
  if (device.rfind("h100", 0) == 0 || device.rfind("h200", 0) == 0) return {"nvlink4", "ib-ndr"};
  if (device.rfind("mi300", 0) == 0) return {"pcie5", "ib-ndr"};  // no Infinity Fabric preset yet: a conservative stand-in
  return {"pcie4", "eth-100g"};
}

hw::LinkSpec link_or_first(const std::string& name) {
  if (auto l = hw::find_link(name)) return *l;
  return hw::link_presets().front();
}

ClusterSpec read_cluster(const YamlContext& ctx, const YAML::Node& node, const hw::DeviceSpec& d,
                         std::int64_t devices) {
  ClusterSpec c;
  const auto [intra, inter] = default_links(d.name);
  c.intra_node = link_or_first(intra);
  c.inter_node = link_or_first(inter);
  const hw::HostSpec& host = hw::default_host(d.name);
  c.host_memory = host.memory;
  c.host_memory_bandwidth = host.memory_bandwidth;
  c.pcie = link_or_first(host.pcie);
  if (!node.IsDefined() || node.IsNull()) {
    // No cluster given: the smallest that holds every device, 8 GPUs to a node.
    c.gpus_per_node = devices < 8 ? devices : 8;
    c.nodes = (devices + c.gpus_per_node - 1) / c.gpus_per_node;
    return c;
  }
  MapReader m(ctx, node, "cluster");
  // Absent sizes default as without a cluster section: up to 8 GPUs a node, enough nodes.
  c.gpus_per_node = m.int_in_or("gpus_per_node", ranges::kClusterCount, devices < 8 ? devices : 8);
  c.nodes = m.int_in_or("nodes", ranges::kClusterCount,
                        (devices + c.gpus_per_node - 1) / c.gpus_per_node);
  c.intra_node = read_link(ctx, m.node("intra_node"), m.path_of("intra_node"), c.intra_node);
  c.inter_node = read_link(ctx, m.node("inter_node"), m.path_of("inter_node"), c.inter_node);
  c.pcie = read_link(ctx, m.node("pcie"), m.path_of("pcie"), c.pcie);
  c.host_memory = m.bytes_or("host_memory", c.host_memory);
  if (m.has("host_memory"))
    check_figure(ctx, m, "host_memory", static_cast<double>(c.host_memory.value), ranges::kMemory);
  if (m.has("host_memory_bandwidth")) {
    c.host_memory_bandwidth = m.bandwidth("host_memory_bandwidth");
    check_figure(ctx, m, "host_memory_bandwidth", c.host_memory_bandwidth.bytes_per_s,
                 ranges::kLinkBandwidth);
  }
  if (m.has("placement")) {
    // A permutation of tensor, pipeline, data: rank order, fastest-varying first.
    YAML::Node order = m.node("placement");
    const std::string ppath = m.path_of("placement");
    const char* expected = "expected a list ordering tensor, pipeline and data (e.g. [tensor, pipeline, data])";
    if (!order.IsSequence()) ctx.fail(order, ppath, expected);
    std::vector<ParallelDim> dims;
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::string ipath = ppath + "[" + std::to_string(i) + "]";
      const std::string name = read_string(ctx, order[i], ipath);
      ParallelDim d;
      if (name == "tensor") d = ParallelDim::tensor;
      else if (name == "pipeline") d = ParallelDim::pipeline;
      else if (name == "data") d = ParallelDim::data;
      else ctx.fail(order[i], ipath, "unknown parallel dimension '" + name + "'; expected one of: tensor, pipeline, data");
      if (std::find(dims.begin(), dims.end(), d) != dims.end())
        ctx.fail(order[i], ipath, "'" + name + "' appears twice; each of tensor, pipeline, data must appear once");
      dims.push_back(d);
    }
    for (ParallelDim d : {ParallelDim::tensor, ParallelDim::pipeline, ParallelDim::data})
      if (std::find(dims.begin(), dims.end(), d) == dims.end())
        ctx.fail(order, ppath, "missing '" + std::string(to_string(d)) +
                                   "'; each of tensor, pipeline, data must appear once");
    std::copy(dims.begin(), dims.end(), c.placement.begin());
  }
  if (m.has("jitter")) c.jitter = read_jitter(ctx, m.node("jitter"), m.path_of("jitter"));
  read_pods(ctx, m, c);
  c.collective_sms = m.int_in_or("collective_sms", ranges::kSmCount, 0);
  m.finish();
  return c;
}

}  // namespace

Scenario load_scenario(const std::string& path, const std::vector<std::string>& sets) {
  return load_scenario_tree(load_yaml_file(path), path, sets);
}

namespace {

// The cache key of a preset model (a name, or a map with `preset` and no file to read); empty
// when the model must be built.
bool preset_model(const YAML::Node& node) {
  return node.IsScalar() || (node.IsMap() && node["preset"] && !node["file"] && !node["hf_config"]);
}
// A preset model's key: its node as YAML text, the path and the build options.
std::string model_key(const std::string& node_text, const std::string& path,
                      const models::BuildOptions& opts) {
  return node_text + "\n" + path + "\n" + std::to_string(opts.seq_len) + " " +
         std::to_string(static_cast<int>(opts.activation_dtype)) + (opts.autocast ? "a" : "") +
         (opts.fp8_gemm_inputs ? "8" : "") + " " +
         (opts.flash_attention ? "1" : "0");
}
std::string model_key(const YAML::Node& node, const std::string& path, const models::BuildOptions& opts,
                      const std::string& node_text) {
  if (!preset_model(node)) return {};
  return model_key(node_text.empty() ? YAML::Dump(node) : node_text, path, opts);
}

// Each rank's layers see seq_len / context tokens (context parallelism splits the sequence).
models::BuildOptions build_options(const TrainingSpec& t, const ParallelSpec& p) {
  models::BuildOptions opts;
  opts.seq_len = std::max<std::int64_t>(p.tokens_per_rank(t.seq_len), 1);
  opts.activation_dtype = activation_dtype(t.precision);
  opts.autocast = autocast(t.precision);
  opts.fp8_gemm_inputs = t.precision == Precision::fp8;
  opts.flash_attention = t.flash_attention;
  return opts;
}

// Loading's steps once the sections are read and the model is in: the sequence length a
// sequence model needs, the batch arithmetic and the layout's checks. The nodes only locate
// errors (ScenarioMemo::load passes empty ones and loads the slow way when one is raised).
void complete(const YamlContext& ctx, Scenario& s, const ScenarioMemo::Training& read,
              const YAML::Node& global_batch_node, const LayoutNodes& nodes) {
  const YAML::Node& training_map = nodes.training;  // const: lookups must not insert keys
  if (s.model.sequence_model && !read.seq_len_given)
    ctx.fail(training_map, "training.seq_len",
             "missing required key 'seq_len' (model '" + s.model.name + "' is a sequence model)");
  if (!s.model.sequence_model) s.training.seq_len = 0;
  if (s.training.precision == Precision::fp8) {
    // fp8 GEMMs need FP8 tensor cores (Hopper, Ada, CDNA3) on every device of the job.
    std::vector<const hw::DeviceSpec*> devices{&s.device};
    for (const auto& sd : s.parallel.stage_devices) devices.push_back(&sd.device);
    for (const hw::DeviceSpec* d : devices)
      if (d->peak_fp8.per_s <= 0)
        ctx.fail(training_map["precision"], "training.precision",
                 "fp8 needs FP8 tensor cores, and device '" + d->name +
                     "' has none (FP8 GEMMs came with Hopper, Ada and CDNA3); use bf16 or fp16");
  }

  // Batch arithmetic: global = micro x accumulation x data; give any two.
  auto& t = s.training;
  auto batch_mul = [&](std::int64_t a, std::int64_t b) -> std::int64_t {
    try {
      return core::checked_mul(a, b);
    } catch (const core::OverflowError&) {
      ctx.fail(training_map["micro_batch"], "training.micro_batch",
               "micro_batch x gradient_accumulation x data must fit in 64 bits");
    }
  };
  const std::int64_t per_step = batch_mul(t.micro_batch, s.parallel.data);
  if (t.global_batch > 0) {
    if (t.global_batch % per_step != 0)
      ctx.fail(global_batch_node, "training.global_batch",
               "global_batch " + std::to_string(t.global_batch) +
                   " is not divisible by data x micro_batch = " + std::to_string(per_step));
    const std::int64_t acc = t.global_batch / per_step;
    if (t.gradient_accumulation > 0 && t.gradient_accumulation != acc)
      ctx.fail(global_batch_node, "training.global_batch",
               "global_batch must equal micro_batch x gradient_accumulation x data = " +
                   std::to_string(batch_mul(per_step, t.gradient_accumulation)));
    t.gradient_accumulation = acc;
  } else {
    if (t.gradient_accumulation == 0) t.gradient_accumulation = 1;
    t.global_batch = batch_mul(per_step, t.gradient_accumulation);
  }
  s.limits.ops_key = read.ops_key;
  s.limits.ops_at = read.ops_at;
  validate_layout(ctx, s, nodes);
  validate_context(ctx, s, nodes);
}

}  // namespace

std::optional<models::Model> ModelCache::take(const std::string& key) {
  for (auto it = held.begin(); it != held.end(); ++it) {
    if (it->key != key) continue;
    std::optional<models::Model> m(std::move(it->model));
    held.erase(it);
    return m;
  }
  return std::nullopt;
}

core::ConfigError Limits::refusal(const std::string& what, const std::string& note) const {
  return core::ConfigError(ops_at, ops_key, what + "; raise it with limits: {max_ops: N} if you mean it" + note);
}

void ModelCache::give_back(models::Model&& m) {
  if (last_key.empty()) return;
  if (held.size() == kCapacity) held.erase(held.begin());
  held.push_back({std::move(last_key), std::move(m)});
  last_key.clear();
}

Scenario load_scenario_tree(YAML::Node root, const std::string& path,
                            const std::vector<std::string>& sets, ModelCache* cache,
                            ScenarioMemo* memo) {
  const std::uint64_t files_before = device_files_read;
  YamlContext ctx(path);
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  apply_overrides(root, sets, ctx);
  MapReader top(ctx, root, "");

  Scenario s;
  s.file = path;
  s.name = top.string_or("name", std::filesystem::path(path).stem().string());
  // Missing sections are reported at the top-level mapping (an absent node has no place).
  for (const char* key : {"device", "training"}) top.require(key);
  s.device = read_device(ctx, top.node("device"));
  ScenarioMemo::Training read;
  YAML::Node training_node = top.node("training");
  YAML::Node global_batch_node;
  s.training = read_training(ctx, training_node, read.seq_len_given, global_batch_node);
  YAML::Node parallel_node = top.node("parallel");
  s.parallel = read_parallel(ctx, parallel_node);
  YAML::Node cluster_node = top.node("cluster");
  s.cluster = read_cluster(ctx, cluster_node, s.device, s.parallel.devices());

  if (top.has("limits")) {
    MapReader lim(ctx, top.node("limits"), "limits");
    s.limits.max_ops = lim.int_in_or("max_ops", ranges::kMaxOps, kDefaultMaxOps);
    s.limits.max_layers = lim.int_in_or("max_layers", ranges::kMaxLayers, models::kDefaultMaxLayers);
    lim.finish();
  }
  top.require("model");
  YAML::Node model_node = top.node("model");
  top.finish();

  models::BuildOptions opts = build_options(s.training, s.parallel);
  opts.max_layers = s.limits.max_layers;
  const std::string base_dir = std::filesystem::path(path).parent_path().string();
  try {
    const std::string key = cache ? model_key(model_node, path, opts, cache->node_text) : std::string();
    std::optional<models::Model> kept;
    if (!key.empty()) kept = cache->take(key);
    s.model = kept ? std::move(*kept) : models::build_model(model_node, path, "model", opts, base_dir);
    // A model kept from a point with a higher limit is refused as building it would have been.
    if (static_cast<std::int64_t>(s.model.order.size()) > s.limits.max_layers)
      ctx.fail(model_node, "model",
               "the model holds " + std::to_string(s.model.order.size()) +
                   " layers, more than limits.max_layers = " + std::to_string(s.limits.max_layers) +
                   "; raise it with limits: {max_layers: N} if you mean it");
    if (cache) cache->last_key = key;
  } catch (const core::ConfigError& e) {
    // models/ knows only the file; a value that came from --set is located in its argument.
    if (e.where().file == path) {
      const int column = e.where().line > 0 ? e.where().column - 1 : -1;
      if (auto at = ctx.override_location(e.key_path(), column))
        throw core::ConfigError(*at, e.key_path(), e.detail());
    }
    throw;
  }

  const YAML::Node& training_map = training_node;  // const: lookups must not insert keys
  auto given = [&](const char* key) { return training_map.IsMap() && training_map[key].IsDefined(); };
  // A step with too many ops is refused where its micro-batch count was written.
  const char* counted = given("global_batch")            ? "global_batch"
                        : given("gradient_accumulation") ? "gradient_accumulation"
                                                         : nullptr;
  read.ops_key = counted ? std::string("training.") + counted : std::string("training");
  read.ops_at = ctx.locate(counted ? training_map[counted] : training_node, read.ops_key);
  std::optional<ScenarioMemo::Reading> reading;
  if (memo) {
    read.spec = s.training;
    reading = ScenarioMemo::Reading{s.name,
                                    s.device,
                                    read,
                                    s.parallel,
                                    {s.cluster, false},
                                    s.limits.max_ops,
                                    s.limits.max_layers,
                                    preset_model(model_node)};
  }
  LayoutNodes nodes{root, training_node, parallel_node, cluster_node,
                    cluster_node.IsDefined() && !cluster_node.IsNull()};
  try {
    complete(ctx, s, read, global_batch_node, nodes);
  } catch (const core::ConfigError&) {
    // The model serves the next point (a sweep's invalid points would build it again).
    if (cache) cache->give_back(std::move(s.model));
    throw;
  }
  if (reading && device_files_read == files_before) {
    reading->cluster.given = nodes.cluster_given;
    memo->remember(sets, *reading);
  }
  return s;
}

bool ScenarioMemo::section_keys(const std::vector<std::string>& sets,
                                std::array<std::string, 6>& keys) {
  static constexpr std::array<std::string_view, 6> kSections{"name",     "device",  "training",
                                                             "parallel", "cluster", "limits"};
  for (const std::string& set : sets) {
    const std::size_t eq = set.find('=');
    if (eq == std::string::npos) return false;
    const std::string_view path(set.data(), eq);
    const std::string_view top = path.substr(0, path.find('.'));
    const auto* at = std::find(kSections.begin(), kSections.end(), top);
    if (at == kSections.end()) return false;
    // Each override with its length first: the joined keys cannot run two lists together.
    std::string& key = keys[static_cast<std::size_t>(at - kSections.begin())];
    key += std::to_string(set.size());
    key += ':';
    key += set;
  }
  return true;
}

std::string ScenarioMemo::cluster_key(const std::array<std::string, 6>& keys,
                                      std::int64_t devices) {
  return keys[4] + "|" + keys[1] + "|" + std::to_string(devices);
}

void ScenarioMemo::remember(const std::vector<std::string>& sets, const Reading& r) {
  std::array<std::string, 6> keys;
  if (!section_keys(sets, keys)) return;
  names_.keep(keys[0], r.name);
  devices_.keep(keys[1], r.device);
  trainings_.keep(keys[2], r.training);
  parallels_.keep(keys[3], r.parallel);
  clusters_.keep(cluster_key(keys, r.parallel.devices()), r.cluster);
  limits_.keep(keys[5], {r.max_ops, r.max_layers});
  model_preset_ = r.model_preset;
}

std::optional<Scenario> ScenarioMemo::load(const std::string& path,
                                           const std::vector<std::string>& sets,
                                           ModelCache* cache) {
  if (!cache || cache->node_text.empty() || !model_preset_.value_or(false)) return std::nullopt;
  std::array<std::string, 6> keys;
  if (!section_keys(sets, keys)) return std::nullopt;
  const std::string* name = names_.find(keys[0]);
  const hw::DeviceSpec* device = devices_.find(keys[1]);
  const Training* training = trainings_.find(keys[2]);
  const ParallelSpec* parallel = parallels_.find(keys[3]);
  const auto* limits = limits_.find(keys[5]);
  if (!name || !device || !training || !parallel || !limits) return std::nullopt;
  const Cluster* cluster = clusters_.find(cluster_key(keys, parallel->devices()));
  if (!cluster) return std::nullopt;
  Scenario s;
  s.file = path;
  s.name = *name;
  s.device = *device;
  s.training = training->spec;
  s.parallel = *parallel;
  s.cluster = cluster->spec;
  s.limits.max_ops = limits->first;
  s.limits.max_layers = limits->second;
  const std::string key = model_key(cache->node_text, path, build_options(s.training, s.parallel));
  std::optional<models::Model> kept = cache->take(key);
  if (!kept) return std::nullopt;
  if (static_cast<std::int64_t>(kept->order.size()) > s.limits.max_layers) {
    cache->last_key = key;
    cache->give_back(std::move(*kept));  // the slow way refuses it, located
    return std::nullopt;
  }
  s.model = std::move(*kept);
  cache->last_key = key;
  try {
    const YamlContext ctx(path);
    const YAML::Node none(YAML::NodeType::Map);
    complete(ctx, s, *training, none, LayoutNodes{none, none, none, none, cluster->given});
  } catch (...) {
    // The slow way locates the error; the model goes back for it.
    cache->give_back(std::move(s.model));
    return std::nullopt;
  }
  return s;
}

}  // namespace trainsim::scenario
