#include "sim/report/trace.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "sim/report/json_writer.hpp"

namespace trainsim::report {

using parallel::Op;
using parallel::OpKind;
using parallel::Program;
using parallel::StreamKind;

namespace {

std::string layer_name(const scenario::Scenario& s, std::int32_t layer) {
  if (layer < 0 || static_cast<std::size_t>(layer) >= s.model.order.size()) return "";
  return s.model.graph[s.model.order[layer]].name;
}

std::string num(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string quoted(std::string_view s) {
  std::string q(1, '"');
  q += json_escape(s);
  q += '"';
  return q;
}

// One event per line, comma-separated.
struct Events {
  std::ostream& os;
  bool first = true;
  std::ostream& next() {
    os << (first ? "\n" : ",\n");
    first = false;
    return os;
  }
};

void metadata(Events& ev, const char* what, int pid, int tid, const std::string& value) {
  ev.next() << "{\"name\":\"" << what << "\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid
            << ",\"args\":{"
            << (std::string_view(what).ends_with("sort_index") ? "\"sort_index\":" : "\"name\":")
            << value << "}}";
}

// Lane of each p2p op: transfers overlap freely, and a trace viewer wants the slices of one
// thread nested, so each goes to the first lane that is free when it starts.
std::vector<int> p2p_lanes(const Program& P, const exec::DeviceTimeline& d, int& lanes) {
  std::vector<int> lane(P.ops.size(), 0);
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < P.ops.size(); ++i)
    if (P.ops[i].stream == StreamKind::p2p) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return d.start[a] < d.start[b]; });
  std::vector<core::TimePoint> busy_until;
  for (std::size_t i : order) {
    std::size_t l = 0;
    while (l < busy_until.size() && d.start[i] < busy_until[l]) ++l;
    if (l == busy_until.size()) busy_until.push_back({});
    busy_until[l] = d.finish[i];
    lane[i] = static_cast<int>(l);
  }
  lanes = static_cast<int>(busy_until.size());
  return lane;
}

void op_event(Events& ev, const scenario::Scenario& s, const Program& P, std::size_t i,
              const exec::DeviceTimeline& d, int pid, int tid) {
  const Op& op = P.ops[i];
  std::ostream& out = ev.os;
  std::int64_t alloc = 0, freed = 0;
  for (auto e = op.alloc_begin; e < op.alloc_end; ++e) alloc += P.effects[e].bytes.value;
  for (auto e = op.free_begin; e < op.free_end; ++e) freed += P.effects[e].bytes.value;
  ev.next() << "{\"name\":" << quoted(trace_op_name(s, op)) << ",\"cat\":\""
            << parallel::to_string(op.kind) << "\",\"ph\":\"X\",\"pid\":" << pid
            << ",\"tid\":" << tid << ",\"ts\":" << trace_us(d.start[i].ns)
            << ",\"dur\":" << trace_us((d.finish[i] - d.start[i]).ns) << ",\"args\":{\"op\":" << i;
  // Layer, micro-batch and purpose are in the name; zero byte counts are left out (big runs
  // have a few hundred thousand events).
  if (alloc) out << ",\"alloc_bytes\":" << alloc;
  if (freed) out << ",\"free_bytes\":" << freed;
  if (op.stream == StreamKind::compute && op.purpose == parallel::CommPurpose::none)
    out << ",\"flops\":" << num(op.work.flops)
        << ",\"memory_traffic_bytes\":" << op.work.bytes.value;
  else if (op.kind == OpKind::cpu_optimizer)
    out << ",\"host_memory_traffic_bytes\":" << op.work.bytes.value;
  else
    out << ",\"comm_bytes\":" << op.comm.bytes.value << ",\"ranks\":" << op.comm.ranks
        << ",\"inter_node\":" << (op.comm.inter_node ? "true" : "false");
  out << "}}";
}

void counter(Events& ev, int pid, const MemorySample& m) {
  std::ostream& out = ev.os;
  ev.next() << "{\"name\":\"memory\",\"ph\":\"C\",\"pid\":" << pid
            << ",\"ts\":" << trace_us(m.time.ns) << ",\"args\":{";
  for (std::size_t c = 0; c < hw::kMemCategories; ++c)
    out << (c ? "," : "") << '"' << hw::to_string(static_cast<hw::MemCategory>(c))
        << "\":" << m.in_use.bytes[c].value;
  out << "}}";
}

void oom_event(Events& ev, const scenario::Scenario& s, const exec::OomPoint& o, int pid) {
  std::string what = o.op < 0 ? "model states" : std::string(parallel::to_string(o.kind));
  if (const std::string l = layer_name(s, o.layer); !l.empty()) what.append(" ").append(l);
  if (o.microbatch >= 0) what.append(" mb").append(std::to_string(o.microbatch));
  ev.next() << "{\"name\":" << quoted("OOM: " + what)
            << ",\"cat\":\"oom\",\"ph\":\"i\",\"s\":\"p\",\"pid\":" << pid
            << ",\"tid\":" << kTraceComputeTid << ",\"ts\":" << trace_us(o.time.ns)
            << ",\"args\":{\"op\":" << o.op << ",\"category\":\"" << hw::to_string(o.category)
            << "\",\"requested_bytes\":" << o.requested.value
            << ",\"in_use_bytes\":" << o.in_use.total().value
            << ",\"capacity_bytes\":" << o.capacity.value << ",\"cause\":\""
            << exec::to_string(o.cause) << "\"}}";
}

// The offload streams' threads (named and sorted after the p2p lanes), when used.
int offload_tid(StreamKind st) {
  return st == StreamKind::pcie_h2d ? kTracePcieH2dTid : st == StreamKind::pcie_d2h ? kTracePcieD2hTid : kTraceHostTid;
}
void offload_threads(Events& ev, int pid, const bool* used) {
  const std::pair<StreamKind, const char*> names[] = {{StreamKind::pcie_h2d, "\"PCIe host->device\""},
                                                      {StreamKind::pcie_d2h, "\"PCIe device->host\""},
                                                      {StreamKind::host, "\"host CPU\""}};
  for (const auto& [st, name] : names) {
    if (!used[static_cast<int>(st)]) continue;
    metadata(ev, "thread_name", pid, offload_tid(st), name);
    metadata(ev, "thread_sort_index", pid, offload_tid(st), std::to_string(offload_tid(st)));
  }
}

}  // namespace

std::string trace_us(std::int64_t ns) {
  const bool neg = ns < 0;
  const std::uint64_t a = neg ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s%llu.%03llu", neg ? "-" : "",
                static_cast<unsigned long long>(a / 1000),
                static_cast<unsigned long long>(a % 1000));
  return buf;
}

std::string trace_op_name(const scenario::Scenario& s, const Op& op) {
  std::string name(parallel::to_string(op.kind));
  const bool offload = op.purpose == parallel::CommPurpose::offload_pcie ||
                       op.purpose == parallel::CommPurpose::offload_cpu_optimizer;  // the kind says it
  if (op.kind != OpKind::p2p && op.purpose != parallel::CommPurpose::none && !offload &&
      op.stream != StreamKind::compute)
    name.append(" ").append(parallel::to_string(op.purpose));
  if (const std::string l = layer_name(s, op.layer); !l.empty()) name.append(" ").append(l);
  if (op.microbatch >= 0) name.append(" mb").append(std::to_string(op.microbatch));
  if (op.chunk > 0) name.append(" chunk").append(std::to_string(op.chunk));
  return name;
}

void write_trace(std::ostream& out, const scenario::Scenario& s, const parallel::Plan& plan,
                 const exec::Timeline& tl, const std::vector<MemorySeries>& series) {
  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"trainsim\",\"scenario\":"
      << quoted(s.name) << ",\"step_time_ns\":" << tl.step_time.ns << "},\n\"traceEvents\":[";
  Events ev{out};
  for (std::size_t p = 0; p < plan.programs.size(); ++p) {
    const Program& P = plan.programs[p];
    const exec::DeviceTimeline& d = tl.devices[p];
    const int pid = static_cast<int>(p) + 1;
    metadata(ev, "process_name", pid, 0,
             quoted("stage " + std::to_string(P.stage) + " (x " + std::to_string(P.count) +
                    (P.count == 1 ? " device)" : " devices)")));
    metadata(ev, "process_sort_index", pid, 0, std::to_string(p));
    int lanes = 0;
    const std::vector<int> lane = p2p_lanes(P, d, lanes);
    bool used[parallel::kStreams] = {};
    for (const Op& op : P.ops)
      if (op.stream != StreamKind::p2p) used[static_cast<int>(op.stream)] = true;
    if (used[0]) metadata(ev, "thread_name", pid, kTraceComputeTid, "\"compute\"");
    if (used[1]) metadata(ev, "thread_name", pid, kTraceCommTid, "\"communication\"");
    offload_threads(ev, pid, used);
    for (int l = 0; l < lanes; ++l)
      metadata(ev, "thread_name", pid, kTraceP2pTid + l,
               quoted(l ? "p2p " + std::to_string(l + 1) : "p2p"));
    for (int t = kTraceComputeTid; t < kTraceP2pTid + lanes; ++t)
      if (t >= kTraceP2pTid || used[t - kTraceComputeTid])
        metadata(ev, "thread_sort_index", pid, t, std::to_string(t));
    for (std::size_t i = 0; i < P.ops.size(); ++i) {
      const StreamKind st = P.ops[i].stream;
      const int tid = st == StreamKind::compute ? kTraceComputeTid
                      : st == StreamKind::comm  ? kTraceCommTid
                      : st == StreamKind::p2p   ? kTraceP2pTid + lane[i]
                                                : offload_tid(st);
      op_event(ev, s, P, i, d, pid, tid);
    }
    if (p < series.size())
      for (const MemorySample& m : series[p].samples) counter(ev, pid, m);
  }
  for (const exec::OomPoint& o : tl.ooms) oom_event(ev, s, o, o.program + 1);
  out << "\n]}\n";
}

}  // namespace trainsim::report
