// Why the harness looks the way it does:
// - Scenario and model files may name other files ({file: PATH}); inputs that mention device
//   or kernel pseudo-files are skipped so a fuzzer cannot block on /dev/stdin or read /dev/zero
//   forever -- reading such a file is the user's explicit request, not a trainsim bug.
// - Simulation runs only for small loaded scenarios (see kMax* below) so each input stays well
//   inside libFuzzer's -timeout; the loader itself is exercised on everything.
#include "tests/fuzz/fuzz_entry.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "models/model_yaml.hpp"
#include "sim/core/error.hpp"
#include "sim/core/units.hpp"
#include "sim/exec/player.hpp"
#include "sim/importers/import.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/sweep/spec.hpp"
#include "sim/validation/compare.hpp"

namespace trainsim::fuzz {

namespace {

namespace fs = std::filesystem;

// Limits for the simulation part (the loader sees every input). Brief-level guards are 1e5
// layers and 1e4 micro-batches; the op budget keeps one input well under a second with ASan.
constexpr std::size_t kMaxLayers = 100'000;
constexpr std::int64_t kMaxMicrobatches = 10'000;
constexpr std::int64_t kMaxOps = 20'000;

// One scratch folder per process, removed at exit.
class WorkDir {
 public:
  WorkDir() {
    // tools/fuzz.sh names a fixed folder, so error messages (which name the files) are the
    // same text on every run and machine; anywhere else a folder per process.
    const char* fixed = std::getenv("TRAINSIM_FUZZ_WORKDIR");
    dir_ = fixed && *fixed ? fs::path(fixed)
                           : fs::temp_directory_path() / ("trainsim-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  ~WorkDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, std::string_view text) const {
    const fs::path p = dir_ / name;
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw std::runtime_error("fuzz harness: cannot write " + p.string());
    return p.string();
  }
  std::string dir() const { return dir_.string(); }

 private:
  fs::path dir_;
};

const WorkDir& work() {
  static const WorkDir w;
  return w;
}

bool names_special_files(std::string_view data) {
  for (std::string_view bad : {"/dev", "/proc", "/sys", "/run", "~"})
    if (data.find(bad) != std::string_view::npos) return true;
  return false;
}

void require(bool cond, const std::string& what) {
  if (!cond) throw Finding("fuzz invariant: " + what);
}

// Lowers and plays a loaded scenario when it is small; checks what the player does not.
void simulate_small(const scenario::Scenario& s) {
  const std::int64_t layers = static_cast<std::int64_t>(s.model.order.size());
  const std::int64_t ga = s.training.gradient_accumulation;
  if (s.model.order.size() > kMaxLayers || ga > kMaxMicrobatches) return;
  const std::int64_t v = s.parallel.schedule == scenario::Schedule::interleaved
                             ? s.parallel.virtual_stages
                             : 1;
  // Ops grow with micro-batches x layers (x2 with tensor collectives, + pipeline transfers).
  if (ga * (2 * layers + 8) * (s.parallel.tensor > 1 ? 3 : 1) > kMaxOps) return;
  if (s.parallel.pipeline * v * ga > kMaxOps) return;
  parallel::Plan plan;
  try {
    plan = parallel::lower(s);
  } catch (const core::OverflowError&) {
    return;  // a clear error for impossible sizes
  } catch (const core::ConfigError&) {
    return;  // a located refusal: the plan holds more ops than limits.max_ops
  }
  exec::Timeline a, b;
  try {
    a = exec::play(plan);
  } catch (const core::OverflowError&) {
    return;
  }
  b = exec::play(plan);
  require(a.step_time.ns >= 0, "negative step time");
  require(a.devices.size() == plan.programs.size(), "one timeline per program");
  require(a.step_time == b.step_time, "two plays of one plan differ in step time");
  for (std::size_t p = 0; p < a.devices.size(); ++p) {
    const auto& da = a.devices[p];
    const auto& db = b.devices[p];
    require(da.start == db.start && da.finish == db.finish, "two plays differ in op times");
    // Paged optimizer states evicted to host at the peak (exec/paging.cpp) leave the device.
    require(da.peak + da.paged_spill >= plan.programs[p].persistent.total(),
            "peak below the persistent bytes");
    for (std::size_t i = 0; i < da.start.size(); ++i)
      require(da.start[i] <= da.finish[i] && da.finish[i].ns <= a.step_time.ns,
              "an op ends before it starts or after the step");
  }
}

}  // namespace

void scenario_input(std::string_view data) {
  if (names_special_files(data)) return;
  const std::string path = work().write("scenario.yaml", data);
  scenario::Scenario s;
  try {
    s = scenario::load_scenario(path);
  } catch (const core::ConfigError&) {
    return;
  } catch (const core::OverflowError&) {
    return;
  }
  simulate_small(s);
}

namespace {

// Builds the model a `model:` value describes and, when small, plays one step of it on one GPU.
void build_and_step(const YAML::Node& node, std::size_t variant) {
  models::BuildOptions opts;
  opts.seq_len = 64;
  opts.flash_attention = variant % 2 == 1;
  opts.activation_dtype = variant % 3 == 0 ? models::DType::fp32 : models::DType::bf16;
  models::Model m;
  try {
    m = models::build_model(node, "fuzz-model.yaml", "model", opts, work().dir());
  } catch (const core::ConfigError&) {
    return;
  } catch (const core::OverflowError&) {
    return;
  }
  require(m.order.size() == boost::num_vertices(m.graph), "order covers every layer once");
  require(m.parameters() >= 0, "negative parameter count");
  if (m.order.size() > 2'000) return;
  scenario::Scenario s;
  s.name = "fuzz";
  s.model = std::move(m);
  s.device = *hw::find_device("a100-80gb");
  s.training.seq_len = s.model.sequence_model ? opts.seq_len : 0;
  s.cluster.intra_node = *hw::find_link("nvlink3");
  s.cluster.inter_node = *hw::find_link("ib-hdr");
  simulate_small(s);
}

}  // namespace

void model_input(std::string_view data) {
  if (names_special_files(data)) return;
  YAML::Node node;
  try {
    node = YAML::Load(std::string(data));
  } catch (const YAML::Exception&) {
    return;  // not YAML: the loaders report that as a located ConfigError themselves
  }
  build_and_step(node, data.size());
}

void hf_config_input(std::string_view data) {
  // Through the scenario form {hf_config: PATH}, so file reading and locating are covered too.
  work().write("config.json", data);
  YAML::Node node(YAML::NodeType::Map);
  node["hf_config"] = "config.json";
  build_and_step(node, data.size());
}

void overrides_input(std::string_view data) {
  // A small valid scenario the overrides edit; every path in it is reachable by --set.
  static const std::string base = work().write("base.yaml",
                                               "name: base\n"
                                               "model: {preset: gpt2, layers: 4}\n"
                                               "device: a100-80gb\n"
                                               "training: {micro_batch: 2, gradient_accumulation: 2, "
                                               "seq_len: 128, precision: bf16, optimizer: adamw}\n"
                                               "parallel: {data: 2, tensor: 1, pipeline: 2}\n");
  if (names_special_files(data)) return;
  std::vector<std::string> sets;
  std::size_t pos = 0;
  while (pos <= data.size() && sets.size() < 8) {
    const std::size_t nl = data.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? data.size() : nl;
    sets.emplace_back(data.substr(pos, end - pos));
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  scenario::Scenario s;
  try {
    s = scenario::load_scenario(base, sets);
  } catch (const core::ConfigError&) {
    return;
  } catch (const core::OverflowError&) {
    return;
  }
  simulate_small(s);
}

void units_input(std::string_view data) {
  // Each parser either returns a sane value or throws its documented std::invalid_argument
  // (OverflowError for a duration beyond 292 years).
  try {
    const core::Bytes b = core::parse_bytes(data);
    require(b.value >= 0, "parse_bytes returned a negative size");
    (void)core::format_bytes(b);
  } catch (const std::invalid_argument&) {
  }
  try {
    const core::Bandwidth bw = core::parse_bandwidth(data);
    require(bw.bytes_per_s > 0 && std::isfinite(bw.bytes_per_s),
            "parse_bandwidth returned a non-positive or infinite rate");
    (void)(core::Bytes{1} / bw);
  } catch (const std::invalid_argument&) {
  } catch (const core::OverflowError&) {
  }
  try {
    const core::FlopRate r = core::parse_flop_rate(data);
    require(r.per_s > 0 && std::isfinite(r.per_s),
            "parse_flop_rate returned a non-positive or infinite rate");
    (void)core::flops_time(1.0, r);
  } catch (const std::invalid_argument&) {
  } catch (const core::OverflowError&) {
  }
  try {
    const core::Duration d = core::parse_duration(data);
    require(d.ns >= 0, "parse_duration returned a negative duration");
    (void)core::format_duration(d);
  } catch (const std::invalid_argument&) {
  } catch (const core::OverflowError&) {
  }
  try {
    const core::Power p = core::parse_power(data);
    require(p.watts >= 0 && std::isfinite(p.watts),
            "parse_power returned a negative or infinite power");
  } catch (const std::invalid_argument&) {
  }
}

void sweep_input(std::string_view data) {
  // A sweep file beside a small base scenario it may name ({file: base.yaml}); points are
  // expanded when the grid is small and the first few are loaded and played.
  static const std::string base = work().write("sweep-base.yaml",
                                               "name: base\n"
                                               "model: {preset: gpt2, layers: 2}\n"
                                               "device: a100-80gb\n"
                                               "training: {micro_batch: 1, seq_len: 128}\n");
  (void)base;
  if (names_special_files(data)) return;
  const std::string path = work().write("sweep.yaml", data);
  sweep::SweepSpec spec;
  try {
    spec = sweep::load_sweep(path);
  } catch (const core::ConfigError&) {
    return;
  } catch (const core::OverflowError&) {
    return;
  }
  std::size_t grid = 1;
  for (const auto& dim : spec.dims) {
    require(!dim.empty(), "a sweep dimension without axes");
    grid *= spec.axes.at(dim.front()).values.size();
    if (grid > 20'000) return;
  }
  std::vector<sweep::Point> points;
  try {
    points = sweep::expand(spec);
  } catch (const core::ConfigError&) {
    return;  // a `where` rule that cannot be evaluated on a point is a located error
  }
  require(points.size() <= grid, "more points than the grid holds");
  for (std::size_t i = 0; i < points.size() && i < 3; ++i) {
    require(points[i].index == i, "points are numbered in order");
    scenario::Scenario s;
    try {
      s = spec.base.load(sweep::point_sets(spec, points[i]));
    } catch (const core::ConfigError&) {
      continue;  // an invalid point is recorded by the sweep, not a crash
    } catch (const core::OverflowError&) {
      continue;
    }
    simulate_small(s);
  }
}

void csv_input(std::string_view data) {
  // A measured-times table as `compare` and `calibrate` read it.
  const std::string path = work().write("measured.csv", data);
  validation::Table t;
  try {
    t = validation::read_csv(path);
  } catch (const core::ConfigError&) {
    return;
  }
  for (const auto& row : t.rows) require(row.size() == t.header.size(), "a ragged row was accepted");
  for (std::size_t c = 0; c < t.header.size(); ++c)
    require(t.column(t.header[c]) >= 0, "a header name is not found as a column");
  // Every cell through the strict readers compare and calibrate use: a value, or a located
  // refusal; never a negative, zero or non-finite value.
  for (std::size_t r = 0; r < t.rows.size() && r < 64; ++r)
    for (int c = 0; c < static_cast<int>(t.header.size()) && c < 16; ++c) {
      try {
        const double v = t.positive_time(r, c, "in ms");
        require(v > 0 && std::isfinite(v), "a time that is not positive and finite was accepted");
      } catch (const core::ConfigError&) {
      }
      try {
        require(t.positive_integer(r, c) > 0, "a count that is not positive was accepted");
      } catch (const core::ConfigError&) {
      }
    }
}

void import_input(std::string_view data) {
  if (names_special_files(data)) return;  // hf-trainer's `deepspeed` may name a file
  const std::string text(data);
  const std::string path = work().write("input.cfg", data);
  for (const std::string& kind : importers::kinds()) {
    importers::ImportOptions o;
    o.gpus = 8;
    o.device = "a100-80gb";
    o.seq_len = 128;
    if (kind == "deepspeed" || kind == "hf-trainer") o.model = "gpt2";
    std::string yaml;
    try {
      yaml = importers::to_yaml(importers::import_config(kind, path, o));
    } catch (const core::ConfigError&) {
      continue;
    }
    try {
      (void)YAML::Load(yaml);
    } catch (const YAML::Exception& e) {
      throw Finding("import " + kind + " wrote YAML that does not parse: " + e.what());
    }
    const std::string scenario = work().write("imported.yaml", yaml);
    try {
      (void)scenario::load_scenario(scenario);
    } catch (const core::ConfigError&) {
    } catch (const core::OverflowError&) {
    }
  }
}

Entry entry_named(std::string_view target) {
  if (target == "scenario") return &scenario_input;
  if (target == "model") return &model_input;
  if (target == "overrides") return &overrides_input;
  if (target == "units") return &units_input;
  if (target == "hf_config") return &hf_config_input;
  if (target == "sweep") return &sweep_input;
  if (target == "csv") return &csv_input;
  if (target == "import") return &import_input;
  return nullptr;
}

}  // namespace trainsim::fuzz
