#include <algorithm>
#include <cstdio>
#include <string>

#include "sim/report/writers.hpp"
#include "sim/scenario/levers_read.hpp"

namespace trainsim::report {

namespace {


std::string gib(core::Bytes b) { return core::format_number("%.2f GiB", core::to_gib(b)); }
std::string both(core::Bytes b) { return core::format_bytes(b); }

std::string grouped(std::int64_t v) {
  std::string s = std::to_string(v), out;
  int n = 0;
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    if (n && n % 3 == 0 && *it != '-') out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++n;
  }
  return out;
}

std::string seconds(double s) {
  if (s >= 1) return core::format_number("%.3f s", s);
  if (s >= 1e-3) return core::format_number("%.2f ms", s * 1e3);
  return core::format_number("%.1f us", s * 1e6);
}

struct Paint {
  bool on;
  std::string red(const std::string& s) const { return on ? "\033[1;31m" + s + "\033[0m" : s; }
  std::string green(const std::string& s) const { return on ? "\033[1;32m" + s + "\033[0m" : s; }
  std::string bold(const std::string& s) const { return on ? "\033[1m" + s + "\033[0m" : s; }
};

// The cures of an activation OOM that the scenario does not use yet.
std::string activation_cures(const scenario::TrainingSpec& t) {
  std::string cures = "lower the micro-batch (with gradient accumulation)";
  if (t.recompute != scenario::Recompute::full)
    cures += t.recompute == scenario::Recompute::none ? ", recompute activations" : ", recompute more";
  if (!t.flash_attention) cures += ", use flash attention";
  return "the model states fit but a micro-batch's activations do not: " + cures + ".";
}

// The first lines: FITS with the peak, or OUT OF MEMORY with where, why and the cure's kind.
void write_verdict(std::ostream& out, const Summary& r, const Paint& paint) {
  if (r.fits) {
    const DeviceSummary* fullest = &r.devices.front();
    for (const auto& d : r.devices)
      if (d.peak > fullest->peak) fullest = &d;
    out << paint.green("FITS") << "  peak " << both(r.peak) << " of " << gib(fullest->capacity)
        << (r.devices.size() > 1 ? " on stage " + std::to_string(fullest->stage) : "") << " ("
        << core::format_number("%.0f%%", 100.0 * static_cast<double>(r.peak.value) /
                             static_cast<double>(fullest->capacity.value))
        << ")\n";
  } else {
    const OomSummary& o = r.ooms.front();
    const core::Bytes free_bytes = o.capacity - o.in_use;
    out << paint.red("OUT OF MEMORY") << " on stage " << o.device << " at " << seconds(o.time_s)
        << ": ";
    if (o.cause == "host_memory")
      out << "host memory ran out: the offloaded states of the fullest node's GPUs need "
          << gib(o.requested) << ", the node has " << gib(o.capacity) << " (cluster.host_memory)\n";
    else if (o.op == "model_states")
      out << "the model states alone (" << gib(r.devices[o.device].model_states.total())
          << " with reserved memory) exceed the device's " << gib(o.capacity) << "\n";
    else
      out << o.op << " of " << (o.layer.empty() ? "the step" : o.layer)
          << (o.microbatch >= 0 ? ", micro-batch " + std::to_string(o.microbatch) : "")
          << " needed " << gib(o.requested) << " of " << o.category << " with "
          << gib(free_bytes.value > 0 ? free_bytes : core::Bytes{}) << " free";
    if (o.op != "model_states" && o.cause != "host_memory" && o.segment.value > 0) {
      const core::Bytes cached = o.in_use_breakdown[hw::MemCategory::allocator_cache];
      out << "\n  the caching allocator asked for a new " << gib(o.segment) << " segment";
      if (cached.value >= core::kMiB)
        out << "; the " << core::format_number("%.0f MiB", static_cast<double>(cached.value) / core::kMiB)
            << " it holds beyond the tensors (rounding, cached blocks too small) could not serve it";
    }
    out << "\n";
    out << "  cause: " << paint.bold(o.cause) << " — "
        << (o.cause == "host_memory"
                ? "each GPU keeps its share of the optimizer states, fp32 gradients (and offloaded "
                  "parameters) in its node's DRAM: offload less (parameters first), shard them "
                  "over more data-parallel ranks (ZeRO), or put fewer GPUs on each node."
            : o.cause == "model_states"
                ? "weights + gradients + optimizer states do not fit even with no activations: "
                  "no batch size fits; split the model (pipeline / tensor) or shard its states "
                  "(ZeRO). Plain data parallelism does not lower per-device memory."
                : activation_cures(r.training))
        << (o.cause == "host_memory" ? "\n  the GPUs' own peak is " : "\n  the step would need ") << both(r.peak)
        << " on its fullest device\n";
  }
}

// The step's time on the device that finishes last, part by part (parts sum to the step).
void write_time_breakdown(std::ostream& out, const TimeBreakdown& b) {
  if (b.parts.empty() || b.step.ns <= 0) return;
  out << "\nTime breakdown (stage " << b.stage << ", the device that finishes last)\n";
  for (const auto& t : b.parts) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-34s %10s %7s\n", t.kind.c_str(), seconds(core::to_seconds(t.time)).c_str(),
                  core::format_number("%.1f%%", 100.0 * static_cast<double>(t.time.ns) /
                                                    static_cast<double>(b.step.ns)).c_str());
    out << line;
  }
}

}  // namespace

void write_text(std::ostream& out, const Summary& r, const TextOptions& opt) {
  const Paint paint{opt.color};
  write_verdict(out, r, paint);
  out << "\n";
  out << "Scenario   " << r.name << (r.file.empty() ? "" : "  (" + r.file + ")") << "\n";
  out << "Model      " << r.model_name << "  " << grouped(r.parameters) << " parameters";
  if (r.training.lora)
    out << ", " << grouped(r.trainable_parameters) << " trained (LoRA rank " << r.training.lora->rank
        << (r.training.lora->quantized() ? ", base " + std::string(scenario::to_string(r.training.lora->base)) : "")
        << ")";
  out << "\n";
  out << "Devices    " << r.devices_total << " x " << device_kinds(r) << "   data " << r.parallel.data
      << " x tensor " << r.parallel.tensor << " x pipeline " << r.parallel.pipeline;
  if (r.parallel.context > 1)
    out << " x context " << r.parallel.context << " (" << scenario::to_string(r.parallel.context_attention)
        << ")";
  if (r.parallel.zero > 0) out << "   ZeRO-" << r.parallel.zero;
  if (r.parallel.pipeline > 1) out << "   schedule " << scenario::to_string(r.parallel.schedule);
  if (r.parallel.pipeline > 1 && r.parallel.pipeline_engine != scenario::PipelineEngine::megatron)
    out << " (" << scenario::to_string(r.parallel.pipeline_engine) << " engine)";
  if (r.parallel.pipeline > 1 && r.parallel.microbatches_per_schedule > 0)
    out << ", schedules of " << r.parallel.microbatches_per_schedule << " micro-batches";
  if (r.parallel.pipeline > 1 && r.parallel.p2p == scenario::P2pMode::sync)
    out << " (synchronous p2p)";
  if (r.parallel.data > 1 && r.parallel.grad_reduce == scenario::GradReduce::after_backward)
    out << "   gradients all-reduced after the backward";
  if (r.parallel.data > 1 && r.parallel.grad_reduce == scenario::GradReduce::after_backward_in_place)
    out << "   gradients reduced in place after the backward";
  out << "\n";
  out << "Training   micro-batch " << r.training.micro_batch << " x accumulation "
      << r.training.gradient_accumulation << " x data " << r.parallel.data << " = global batch "
      << r.training.global_batch;
  if (r.sequence_model) out << ", seq " << r.training.seq_len;
  out << ", " << scenario::to_string(r.training.precision) << ", "
      << scenario::to_string(r.training.optimizer);
  if (r.training.recompute != scenario::Recompute::none)
    out << ", recompute " << scenario::to_string(r.training.recompute);
  if (r.training.flash_attention) out << ", flash attention";
  if (r.training.offload.optimizer_on_cpu())
    out << ", offload optimizer" << (r.training.offload.parameters_on_cpu() ? " + parameters" : "") << " to host";
  if (const auto chunks = scenario::effective_loss_chunks(r.training); chunks > 1)
    out << ", loss in " << chunks << " chunks";
  if (r.training.activation_offload) out << ", activation offload";
  if (r.training.compile) out << ", compiled loss";
  if (r.training.eager_modules) out << ", eager modules";
  if (r.parallel.fsdp.cpu_offload) out << ", FSDP states offloaded to host";
  out << "\n";
  out << "Step       " << seconds(r.step_time_s) << "   " << core::format_number("%.1f", r.samples_per_s)
      << " samples/s";
  if (r.sequence_model) out << "   " << grouped(static_cast<std::int64_t>(r.tokens_per_s)) << " tokens/s";
  out << "   MFU " << core::format_number("%.1f%%", 100 * r.mfu);
  if (r.hfu > r.mfu * 1.0001) out << "   HFU " << core::format_number("%.1f%%", 100 * r.hfu);
  if (r.parallel.pipeline > 1) out << "   bubble " << core::format_number("%.1f%%", 100 * r.bubble_fraction);
  out << "\n";
  if (!r.fits) out << "           (timing assumes the memory were there)\n";

  // Memory table: one column per stage.
  out << "\nMemory at peak, per device" << (r.devices.size() > 1 ? " (one column per pipeline stage)" : "") << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-18s", "");
  out << line;
  for (const auto& d : r.devices) {
    std::snprintf(line, sizeof line, "%14s", ("stage " + std::to_string(d.stage)).c_str());
    out << line;
  }
  out << "\n";
  for (std::size_t c = 0; c < hw::kMemCategories; ++c) {
    std::snprintf(line, sizeof line, "  %-18s", std::string(hw::to_string(static_cast<hw::MemCategory>(c))).c_str());
    out << line;
    for (const auto& d : r.devices) {
      std::snprintf(line, sizeof line, "%14s", gib(d.peak_breakdown.bytes[c]).c_str());
      out << line;
    }
    out << "\n";
  }
  auto row = [&](const char* label, auto get) {
    std::snprintf(line, sizeof line, "  %-18s", label);
    out << line;
    for (const auto& d : r.devices) {
      std::snprintf(line, sizeof line, "%14s", get(d).c_str());
      out << line;
    }
    out << "\n";
  };
  row("peak", [](const DeviceSummary& d) { return gib(d.peak); });
  row("max allocated", [](const DeviceSummary& d) { return gib(d.allocated_peak); });
  row("max reserved", [](const DeviceSummary& d) { return gib(d.reserved_peak); });
  row("capacity", [](const DeviceSummary& d) { return gib(d.capacity); });
  row("model states", [](const DeviceSummary& d) { return gib(d.model_states.total()); });
  const bool offload = r.training.offload.optimizer_on_cpu() ||
                       r.training.offload.parameters_on_cpu() || r.training.activation_offload ||
                       r.parallel.fsdp.cpu_offload;
  if (offload) row("host (offload)", [](const DeviceSummary& d) { return gib(d.host.total()); });
  if (r.optimizer_spilled.value > 0)
    row("paged to host", [](const DeviceSummary& d) { return gib(d.optimizer_spilled); });
  row("devices", [](const DeviceSummary& d) { return std::to_string(d.count); });
  row("fits", [](const DeviceSummary& d) { return std::string(d.fits ? "yes" : "NO"); });
  out << "  (GB = 10^9 bytes: peak " << both(r.peak) << ")\n";
  if (offload)
    out << "  host memory of the fullest node " << both(r.host_per_node) << " of " << gib(r.host_capacity)
        << (r.host_fits ? "" : "  OUT OF HOST MEMORY") << "\n";

  if (!r.comm.empty()) {
    int width = 16;  // the longest kind sets the column
    for (const auto& c : r.comm) width = std::max(width, static_cast<int>(c.kind.size()));
    std::snprintf(line, sizeof line, "\n%-*s %10s %12s\n", width + 2, "Communication", "time", "exposed");
    out << line;
    for (const auto& c : r.comm) {
      std::snprintf(line, sizeof line, "  %-*s %10s %12s\n", width, c.kind.c_str(), seconds(c.time_s).c_str(),
                    seconds(c.exposed_s).c_str());
      out << line;
    }
    for (const auto& c : r.comm)
      if (c.congestion > 1) {
        std::snprintf(line, sizeof line, "  %s: up to %.2fx slower across the oversubscribed pods\n",
                      c.kind.c_str(), c.congestion);
        out << line;
      }
  }
  write_time_breakdown(out, r.time_breakdown);
  if (r.diagnosis) {
    out << "\n";
    write_diagnosis_text(out, *r.diagnosis, opt);
  }
  if (r.ooms.size() > 1 || r.all_ooms) {
    out << "\nOut-of-memory points" << (r.all_ooms ? " (memory unbounded, every point)" : " (first per device)") << "\n";
    for (const auto& o : r.ooms) {
      out << "  stage " << o.device << " at " << seconds(o.time_s) << ": " << o.op;
      if (!o.layer.empty()) out << " of " << o.layer;
      if (o.microbatch >= 0) out << ", micro-batch " << o.microbatch;
      out << " asked " << gib(o.requested) << " with " << gib(o.in_use) << " in use of "
          << gib(o.capacity) << " (" << o.cause << ")\n";
    }
    if (r.ooms_dropped > 0) out << "  ... and " << r.ooms_dropped << " more\n";
  }
}

void write_diagnosis_text(std::ostream& out, const Diagnosis& d, const TextOptions& opt) {
  const Paint paint{opt.color};
  out << paint.bold("Diagnosis: ") << diagnosis_title(d.kind)
      << "\n  " << d.summary << "\n  " << d.data_parallel_note << "\n";
  if (d.remedies.empty()) {
    out << "  No single remedy tried (" << d.tried
        << " simulated) makes it fit; combine them or use larger devices.\n";
    return;
  }
  out << "\nRemedies that fit (each re-simulated; fastest first, " << d.tried << " tried)\n";
  int n = 0;
  for (const auto& r : d.remedies) {
    char line[160];
    std::snprintf(line, sizeof line, "  %d. %-60s step %s  peak %s", ++n, r.description.c_str(),
                  seconds(r.step_time_s).c_str(), gib(r.peak).c_str());
    out << line << "\n     " << r.command << "\n";
  }
}

}  // namespace trainsim::report
