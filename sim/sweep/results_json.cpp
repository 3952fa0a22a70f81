#include "sim/sweep/results_json.hpp"

#include <string>

#include "sim/report/json_writer.hpp"

namespace trainsim::sweep {

void write_fit_json(std::ostream& out, const FitResult& r) {
  report::JsonWriter j(out);
  j.begin_object();
  j.field("key", r.key);
  if (r.found) j.field("value", r.value).field("peak_bytes", r.peak_bytes);
  else j.key("value").null().key("peak_bytes").null();
  if (r.next_value) j.field("next_value", *r.next_value).field("next_peak_bytes", r.next_peak_bytes);
  else j.key("next_value").null().key("next_peak_bytes").null();
  j.field("capacity_bytes", r.capacity_bytes);
  j.field("direction", std::string(r.falls ? "falls" : r.flat ? "flat" : "grows"));
  j.field("simulations", static_cast<std::int64_t>(r.simulations));
  j.end_object();
}

void write_plan_json(std::ostream& out, const PlanResult& r, std::size_t top) {
  report::JsonWriter j(out);
  j.begin_array();
  for (std::size_t i = 0; i < r.ranked.size() && i < top; ++i) {
    const auto& c = r.ranked[i];
    j.begin_object();
    j.field("rank", static_cast<std::int64_t>(i + 1));
    j.field("layout", describe(c.layout));
    j.key("set").begin_array();
    for (const auto& s : c.sets) j.value(s);
    j.end_array();
    j.field("fits", c.summary.fits);
    j.field("step_time_s", c.summary.step_time_s);
    j.field("peak_bytes", c.summary.peak.value);
    j.field("mfu", c.summary.mfu);
    j.field("bubble_fraction", c.summary.bubble_fraction);
    j.key("node_shape").begin_object();
    j.field("gpus_per_node", r.gpus_per_node);
    j.field("source", to_string(r.node_shape_source));
    j.end_object();
    j.end_object();
  }
  j.end_array();
}

}  // namespace trainsim::sweep
