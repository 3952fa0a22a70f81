#include "sim/report/json_writer.hpp"
#include "sim/report/writers.hpp"
#include "sim/scenario/levers_read.hpp"

namespace trainsim::report {

namespace {
void breakdown(JsonWriter& j, const hw::MemBreakdown& b) {
  j.begin_object();
  for (std::size_t c = 0; c < hw::kMemCategories; ++c)
    j.field(hw::to_string(static_cast<hw::MemCategory>(c)), b.bytes[c].value);
  j.end_object();
}
// The scenario's training settings as the report restates them.
void training_json(JsonWriter& j, const scenario::TrainingSpec& t, bool sequence_model) {
  j.key("training").begin_object();
  j.field("micro_batch", t.micro_batch);
  j.field("gradient_accumulation", t.gradient_accumulation);
  j.field("global_batch", t.global_batch);
  if (sequence_model) j.field("seq_len", t.seq_len);
  j.field("precision", scenario::to_string(t.precision));
  j.field("optimizer", scenario::to_string(t.optimizer));
  j.field("recompute", scenario::to_string(t.recompute));
  j.field("attention", t.flash_attention ? "flash" : "standard");
  j.field("allocator", t.caching_allocator ? "caching" : "none");
  j.key("offload").begin_object();
  j.field("optimizer", scenario::to_string(t.offload.optimizer));
  j.field("parameters", scenario::to_string(t.offload.parameters));
  j.end_object();
  j.field("loss_chunks", scenario::effective_loss_chunks(t));
  j.field("activation_offload", t.activation_offload);
  j.field("compile", t.compile);
  j.field("modules", !t.eager_modules ? "fused" : t.norm_upcast ? "eager" : "eager-norm-in-dtype");
  if (const auto& lora = t.lora) {
    j.key("lora").begin_object();
    j.field("rank", lora->rank);
    j.field("alpha", lora->alpha);
    j.field("dropout", lora->dropout);
    j.key("targets").begin_array();
    for (std::size_t k = 0; k + 1 < models::kLinearRoles; ++k)
      if (lora->targets[k]) j.value(models::to_string(static_cast<models::LinearRole>(k)));
    j.end_array();
    j.field("base", scenario::to_string(lora->base));
    if (lora->quantized())
      j.field("quantizer", lora->runs_on() == scenario::Quantizer::bitsandbytes ? "bitsandbytes" : "torchao");
    j.field("layout", lora->layout == scenario::LoraLayout::fused_qkv ? "fused-qkv" : "separate");
    j.end_object();
  }
  // training.packed_documents as given (absent when each sequence is one document).
  if (const auto& pd = t.packed_documents; pd.enabled()) {
    j.key("packed_documents").begin_object();
    if (pd.length > 0) j.field("length", pd.length);
    if (!pd.lengths.empty()) {
      j.key("lengths").begin_array();
      for (const std::int64_t d : pd.lengths) j.value(d);
      j.end_array();
    }
    j.end_object();
  }
  j.end_object();
}

void parallel_json(JsonWriter& j, const scenario::ParallelSpec& p) {
  j.key("parallel").begin_object();
  j.field("data", p.data);
  j.field("tensor", p.tensor);
  j.field("pipeline", p.pipeline);
  j.field("zero", p.zero);
  j.field("schedule", scenario::to_string(p.schedule));
  if (p.pipeline_engine != scenario::PipelineEngine::megatron)
    j.field("pipeline_engine", scenario::to_string(p.pipeline_engine));
  if (p.p2p != scenario::P2pMode::async)
    j.field("p2p", scenario::to_string(p.p2p));
  // absent when overlapped (earlier reports unchanged)
  if (p.grad_reduce != scenario::GradReduce::overlapped)
    j.field("grad_reduce", scenario::to_string(p.grad_reduce));
  // absent when after_step (earlier reports unchanged)
  if (p.param_gather != scenario::ParamGather::after_step)
    j.field("param_gather", scenario::to_string(p.param_gather));
  j.field("virtual_stages", p.virtual_stages);
  // absent unless set (earlier reports unchanged)
  if (p.microbatch_group_size > 0) j.field("microbatch_group_size", p.microbatch_group_size);
  if (p.microbatches_per_schedule > 0) j.field("microbatches_per_schedule", p.microbatches_per_schedule);
  j.field("sequence_parallel", p.sequence_parallel);
  // absent when off (earlier reports unchanged)
  if (p.tp_comm_overlap) j.field("tp_comm_overlap", true);
  j.field("allreduce", !p.allreduce                                ? "auto"
                       : *p.allreduce == cost::CollectiveAlgo::tree ? "tree"
                                                                    : "ring");
  j.field("bucket_size_bytes", p.bucket_size.value);
  j.field("bucket_buffers", scenario::to_string(p.bucket_buffers));
  if (p.context > 1) {  // absent without context parallelism (earlier reports unchanged)
    j.field("context", p.context);
    j.field("context_attention", scenario::to_string(p.context_attention));
  }
  j.end_object();
}

void devices_json(JsonWriter& j, const std::vector<DeviceSummary>& devices) {
  j.key("devices").begin_array();
  for (const auto& d : devices) {
    j.begin_object();
    j.field("id", d.id);
    j.field("stage", d.stage);
    j.field("count", d.count);
    j.field("device", d.device);
    j.field("layers", d.layers);
    j.field("parameters", d.parameters);
    j.field("fits", d.fits);
    j.field("capacity_bytes", d.capacity.value);
    j.field("peak_bytes", d.peak.value);
    j.field("allocated_peak_bytes", d.allocated_peak.value);
    j.field("reserved_peak_bytes", d.reserved_peak.value);
    j.field("optimizer_spilled_bytes", d.optimizer_spilled.value);
    j.key("peak_breakdown");
    breakdown(j, d.peak_breakdown);
    j.field("model_state_bytes", d.model_states.total().value);
    j.field("compute_busy_s", d.compute_busy_s);
    j.field("contention_s", d.contention_s);
    j.field("host_bytes", d.host.total().value);
    j.key("host_breakdown");
    breakdown(j, d.host);
    j.end_object();
  }
  j.end_array();
}

void oom_json(JsonWriter& j, const std::vector<OomSummary>& ooms) {
  j.key("oom").begin_array();
  for (const auto& o : ooms) {
    j.begin_object();
    j.field("device", o.device);
    j.field("time_s", o.time_s);
    j.field("op", o.op);
    if (o.layer.empty()) j.key("layer").null(); else j.field("layer", o.layer);
    if (o.microbatch < 0) j.key("microbatch").null(); else j.field("microbatch", o.microbatch);
    j.field("category", o.category);
    j.field("requested_bytes", o.requested.value);
    j.field("in_use_bytes", o.in_use.value);
    j.key("in_use_breakdown");
    breakdown(j, o.in_use_breakdown);
    j.field("capacity_bytes", o.capacity.value);
    j.field("segment_bytes", o.segment.value);
    j.field("cause", o.cause);
    j.end_object();
  }
  j.end_array();
}

void time_breakdown_json(JsonWriter& j, const TimeBreakdown& tb) {
  j.key("time_breakdown").begin_object();
  j.field("stage", static_cast<std::int64_t>(tb.stage));
  j.field("step_ns", tb.step.ns);
  j.key("parts").begin_array();
  for (const auto& t : tb.parts) {
    j.begin_object();
    j.field("kind", t.kind);
    j.field("time_s", core::to_seconds(t.time));
    j.field("time_ns", t.time.ns);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

}  // namespace

void write_json(std::ostream& out, const Summary& r, bool pretty) {
  JsonWriter j(out, pretty);
  j.begin_object();
  j.field("name", r.name);
  j.field("fits", r.fits);
  j.field("step_time_s", r.step_time_s);
  j.field("samples_per_s", r.samples_per_s);
  if (r.sequence_model) j.field("tokens_per_s", r.tokens_per_s);
  j.field("mfu", r.mfu);
  j.field("hfu", r.hfu);
  j.field("peak_bytes", r.peak.value);
  j.field("allocated_peak_bytes", r.allocated_peak.value);
  j.field("reserved_peak_bytes", r.reserved_peak.value);
  j.field("optimizer_spilled_bytes", r.optimizer_spilled.value);
  j.field("devices_total", r.devices_total);
  j.field("bubble_fraction", r.bubble_fraction);
  j.field("host_bytes_per_node", r.host_per_node.value);
  j.field("host_capacity_bytes", r.host_capacity.value);
  j.field("host_fits", r.host_fits);
  j.key("model").begin_object();
  j.field("name", r.model_name);
  j.field("parameters", r.parameters);
  j.field("trainable_parameters", r.trainable_parameters);
  j.end_object();
  training_json(j, r.training, r.sequence_model);
  parallel_json(j, r.parallel);
  devices_json(j, r.devices);
  oom_json(j, r.ooms);
  if (r.ooms_dropped > 0) j.field("oom_points_not_listed", r.ooms_dropped);
  j.key("comm").begin_object();
  for (const auto& c : r.comm) {
    j.key(c.kind).begin_object();
    j.field("time_s", c.time_s);
    j.field("exposed_s", c.exposed_s);
    if (c.congestion > 1) j.field("congestion", c.congestion);  // only across oversubscribed pods
    j.end_object();
  }
  j.end_object();
  time_breakdown_json(j, r.time_breakdown);
  if (r.diagnosis) write_diagnosis_json(j, *r.diagnosis);
  j.field("events", static_cast<std::int64_t>(r.events));
  j.end_object();
}

void write_diagnosis_json(JsonWriter& j, const Diagnosis& d) {
  j.key("diagnosis").begin_object();
  j.field("kind", d.kind);
  j.field("summary", d.summary);
  j.field("data_parallel_note", d.data_parallel_note);
  j.field("device", d.device);
  j.field("model_state_bytes", d.model_state_bytes.value);
  j.field("capacity_bytes", d.capacity.value);
  j.field("peak_bytes", d.peak.value);
  j.field("remedies_tried", d.tried);
  j.key("remedies").begin_array();
  for (const auto& r : d.remedies) {
    j.begin_object();
    j.field("description", r.description);
    j.key("set").begin_object();
    for (const auto& [k, v] : r.set) {
      // Numbers as numbers, everything else as strings, so the values read as typed.
      const bool numeric = !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
      if (numeric) j.field(k, static_cast<std::int64_t>(std::stoll(v)));
      else j.field(k, v);
    }
    j.end_object();
    j.field("command", r.command);
    j.field("fits", r.fits);
    j.field("step_time_s", r.step_time_s);
    j.field("peak_bytes", r.peak.value);
    j.field("devices_total", r.devices_total);
    j.field("changes_workload", r.changes_workload);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

void write_diagnose_json(std::ostream& out, const Summary& r) {
  JsonWriter j(out);
  j.begin_object();
  j.field("name", r.name);
  j.field("fits", r.fits);
  if (r.diagnosis) write_diagnosis_json(j, *r.diagnosis);
  j.end_object();
}

}  // namespace trainsim::report
