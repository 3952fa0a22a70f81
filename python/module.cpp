// trainsim._core: the compiled half of the Python module (docs/python.md). Each function runs
// what the command of the same name runs, with the GIL released, and returns the text the
// command writes with `--format json` (trainsim/__init__.py parses it), so the module and the
// command line share one contract. Nothing here writes to the terminal; errors become the
// exceptions defined in trainsim/__init__.py.
#include <limits>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/module.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/core/version.hpp"
#include "sim/diagnose/diagnose.hpp"
#include "sim/exec/player.hpp"
#include "sim/importers/import.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/html.hpp"
#include "sim/report/memory_series.hpp"
#include "sim/report/writers.hpp"
#include "sim/scenario/ranges.hpp"
#include "sim/scenario/yaml_read.hpp"
#include "sim/sweep/fit.hpp"
#include "sim/sweep/plan.hpp"
#include "sim/sweep/results_json.hpp"
#include "sim/sweep/runner.hpp"

namespace py = pybind11;

namespace trainsim::python {

scenario::Scenario load(const Source& src, const std::vector<std::string>& sets) {
  if (!src.text) return scenario::load_scenario(src.name, sets);
  return scenario::load_scenario_tree(scenario::parse_yaml_text(*src.text, src.name), src.name, sets);
}

sweep::BaseScenario base_of(const Source& src) {
  if (!src.text) return sweep::BaseScenario::from_file(src.name);
  scenario::parse_yaml_text(*src.text, src.name);  // a syntax error or duplicate key, located
  return sweep::BaseScenario{src.name, *src.text, ""};
}

namespace {

// What `run` writes: the JSON report always, the text and HTML reports when asked.
struct Reports {
  std::string json, text, html;
};

// `trainsim run` (and `--html`): load, lower, play, summarize, diagnose when it does not fit.
Reports simulate(const Source& src, const std::vector<std::string>& sets, bool diagnosis, bool visuals) {
  py::gil_scoped_release release;
  const scenario::Scenario s = load(src, sets);
  // The HTML report's memory plot shows every op; otherwise the compressed plan gives the
  // same report (as in `trainsim run`).
  const parallel::Plan plan = parallel::lower(s, {.compress = !visuals});
  const exec::Timeline tl = exec::play(plan);
  report::Summary summary = report::summarize(s, plan, tl, false);
  if (!summary.fits && diagnosis) {
    const diagnose::Loader loader = [&src](const std::vector<std::string>& all) { return load(src, all); };
    summary.diagnosis = diagnose::diagnose(loader, sets, s, summary);
  }
  Reports out;
  std::ostringstream json;
  report::write_json(json, summary);
  out.json = json.str();
  if (visuals) {
    std::ostringstream text, html;
    report::write_text(text, summary);
    report::write_html(html, summary, report::memory_series(plan, tl));
    out.text = text.str();
    out.html = html.str();
  }
  return out;
}

// `trainsim diagnose --format json`.
std::string diagnose_json(const Source& src, const std::vector<std::string>& sets) {
  py::gil_scoped_release release;
  const scenario::Scenario s = load(src, sets);
  const parallel::Plan plan = parallel::lower(s, {.compress = true});
  const exec::Timeline tl = exec::play(plan);
  report::Summary summary = report::summarize(s, plan, tl, false);
  if (!summary.fits) {
    const diagnose::Loader loader = [&src](const std::vector<std::string>& all) { return load(src, all); };
    summary.diagnosis = diagnose::diagnose(loader, sets, s, summary);
  }
  std::ostringstream out;
  report::write_diagnose_json(out, summary);
  return out.str();
}

// `trainsim fit --find KEY --format json`.
std::string fit_json(const Source& src, const std::vector<std::string>& sets, const std::string& key,
                     std::int64_t from, std::int64_t limit) {
  if (key.empty()) throw py::value_error("fit: `key` must name an integer scenario key, e.g. training.micro_batch");
  if (from < 1 || limit < from) throw py::value_error("fit: need 1 <= start <= limit");
  py::gil_scoped_release release;
  const sweep::BaseScenario base = base_of(src);
  sweep::FitOptions options;
  options.from = from;
  options.limit = limit;
  std::ostringstream out;
  sweep::write_fit_json(out, sweep::fit(base, sets, key, options));
  return out.str();
}

// `trainsim plan --gpus N --format json`; the same checks of the arguments.
std::string plan_json(const Source& src, const std::vector<std::string>& sets, std::int64_t gpus, int top,
                      const std::string& objective, std::int64_t max_micro_batch, int jobs) {
  sweep::PlanOptions options;
  if (objective == "throughput") options.objective = sweep::Objective::throughput;
  else if (objective == "memory") options.objective = sweep::Objective::memory;
  else if (objective == "cost") options.objective = sweep::Objective::cost;
  else throw py::value_error("plan: objective must be throughput, memory or cost, got '" + objective + "'");
  if (top < 1) throw py::value_error("plan: top must be >= 1");
  const auto [gpus_min, gpus_max] = scenario::ranges::kClusterCount;
  if (gpus < gpus_min || gpus > gpus_max)
    throw py::value_error("plan: gpus must be in " + std::to_string(gpus_min) + ".." + std::to_string(gpus_max) +
                          " (the devices a scenario may hold), got " + std::to_string(gpus));
  const auto [mb_min, mb_max] = scenario::ranges::kMicroBatch;
  if (max_micro_batch < mb_min || max_micro_batch > mb_max)
    throw py::value_error("plan: max_micro_batch must be in " + std::to_string(mb_min) + ".." +
                          std::to_string(mb_max) + ", got " + std::to_string(max_micro_batch));
  if (jobs < 0) throw py::value_error("plan: jobs must be >= 0 (0 = one per hardware thread)");
  options.gpus = gpus;
  options.top = top;
  options.max_micro_batch = max_micro_batch;
  options.jobs = sweep::worker_threads(jobs, std::numeric_limits<std::size_t>::max());
  py::gil_scoped_release release;
  const sweep::BaseScenario base = base_of(src);
  std::ostringstream out;
  sweep::write_plan_json(out, sweep::plan(base, sets, options), static_cast<std::size_t>(top));
  return out.str();
}

// Raises the exception class `name` of the trainsim package with `args`.
void raise(const char* name, const py::tuple& args) {
  const py::object cls = py::module_::import("trainsim").attr(name);
  PyErr_SetObject(cls.ptr(), cls(*args).ptr());
}

py::object or_none(int v) { return v > 0 ? py::object(py::int_(v)) : py::none(); }

// The library's error kinds as the package's exceptions (the command line's exit codes 2, 5, 1).
void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const core::ConfigError& e) {
    const core::SourceLocation& at = e.where();
    raise("ScenarioError", py::make_tuple(e.what(), at.file.empty() ? py::none() : py::object(py::str(at.file)),
                                          or_none(at.line), or_none(at.column), e.key_path(), e.detail()));
  } catch (const core::OverflowError& e) {
    raise("ScenarioError",
          py::make_tuple(std::string("the scenario's sizes exceed what 64-bit counters hold (") + e.what() +
                             "); check for an implausibly large model, batch or sequence",
                         py::none(), py::none(), py::none(), "", e.what()));
  } catch (const core::ResourceError& e) {
    raise("ResourceError", py::make_tuple(e.what()));
  } catch (const std::bad_alloc&) {
    raise("ResourceError", py::make_tuple("out of host memory (std::bad_alloc): this machine cannot hold what "
                                          "the simulation needs; lower limits.max_ops or run fewer points at once"));
  } catch (const core::InternalError& e) {
    raise("InternalError", py::make_tuple(std::string(e.what()) +
                                          "\nThis is a bug in trainsim; please report it with the scenario."));
  }
}

}  // namespace

}  // namespace trainsim::python

PYBIND11_MODULE(_core, m) {
  using namespace trainsim::python;
  namespace core = trainsim::core;
  m.doc() = "trainsim's simulator; use the `trainsim` package (docs/python.md), not this module";
  m.attr("version") = std::string(core::kVersion);
  py::register_exception_translator(&translate);
  py::class_<Source>(m, "Source")
      .def(py::init<std::string, std::optional<std::string>>(), py::arg("name"), py::arg("text") = py::none());
  m.def(
      "run",
      [](const Source& src, const std::vector<std::string>& sets, bool diagnosis, bool visuals) {
        Reports r = simulate(src, sets, diagnosis, visuals);
        return py::make_tuple(r.json, r.text, r.html);
      },
      py::arg("source"), py::arg("sets"), py::arg("diagnosis"), py::arg("visuals"));
  m.def("diagnose", &diagnose_json, py::arg("source"), py::arg("sets"));
  m.def("fit", &fit_json, py::arg("source"), py::arg("sets"), py::arg("key"), py::arg("start"), py::arg("limit"));
  m.def("plan", &plan_json, py::arg("source"), py::arg("sets"), py::arg("gpus"), py::arg("top"),
        py::arg("objective"), py::arg("max_micro_batch"), py::arg("jobs"));
  m.def(
      "import_config",
      [](const std::string& kind, const std::string& path, std::optional<std::int64_t> gpus,
         std::optional<std::int64_t> gpus_per_node, std::optional<std::string> device,
         std::optional<std::string> model, std::optional<std::int64_t> seq_len) {
        trainsim::importers::ImportOptions o;
        o.gpus = gpus;
        o.gpus_per_node = gpus_per_node;
        o.device = device;
        o.model = model;
        o.seq_len = seq_len;
        py::gil_scoped_release release;
        return trainsim::importers::to_yaml(trainsim::importers::import_config(kind, path, o));
      },
      py::arg("kind"), py::arg("path"), py::arg("gpus"), py::arg("gpus_per_node"), py::arg("device"),
      py::arg("model"), py::arg("seq_len"));
  bind_sweep(m);
}
