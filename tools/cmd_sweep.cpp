// `trainsim sweep`: every point of a sweep file simulated on worker threads, results streamed in
// point order to CSV / JSON Lines, a summary on stdout. SIGINT/SIGTERM stop it gracefully.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <unistd.h>

#include <boost/program_options.hpp>

#include "sim/core/output_file.hpp"
#include "sim/core/version.hpp"
#include "sim/scenario/yaml_read.hpp"
#include "sim/sweep/digest.hpp"
#include "sim/sweep/output.hpp"
#include "sim/sweep/plot.hpp"
#include "sim/sweep/shard.hpp"
#include "tools/commands.hpp"
#include "tools/progress.hpp"

namespace po = boost::program_options;

namespace trainsim::tools {

namespace {

// Set by the signal handler (a lock-free atomic is async-signal-safe); read by the workers.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);
extern "C" void on_stop_signal(int) { g_stop.store(true); }

struct Shard {
  std::size_t k = 1, n = 1;
};
Shard parse_shard(const std::string& s) {
  Shard sh;
  unsigned long long k = 0, n = 0;
  char extra = 0;
  if (std::sscanf(s.c_str(), "%llu/%llu%c", &k, &n, &extra) != 2 || n < 1 || k < 1 || k > n)
    throw po::error("--shard must be K/N with 1 <= K <= N, got '" + s + "'");
  sh.k = k;
  sh.n = n;
  return sh;
}


// --resume: the finished points both files hold (each file is cut back to them).
std::vector<sweep::Brief> resume_results(const std::string& csv_path, const std::string& jsonl_path,
                                         const std::string& header,
                                         const std::vector<std::size_t>& mine,
                                         const std::string& csv_tag, const std::string& jsonl_tag) {
  auto c = csv_path.empty() ? std::vector<sweep::Brief>{}
                            : sweep::resume_csv(csv_path, header, mine, csv_tag);
  auto j = jsonl_path.empty() ? std::vector<sweep::Brief>{}
                              : sweep::resume_jsonl(jsonl_path, mine, jsonl_tag);
  const std::size_t done = csv_path.empty()     ? j.size()
                           : jsonl_path.empty() ? c.size()
                                                : std::min(c.size(), j.size());
  if (!csv_path.empty() && c.size() > done)
    sweep::truncate_records(csv_path, csv_tag.empty() ? 1 : 2, done);
  if (!jsonl_path.empty() && j.size() > done)
    sweep::truncate_records(jsonl_path, jsonl_tag.empty() ? 0 : 1, done);
  std::vector<sweep::Brief> briefs = csv_path.empty() ? j : c;
  briefs.resize(done);
  return briefs;
}

// Opens a results file (appended to on --resume) and, when it is new or empty, writes `lead`
// (a shard's tag, the CSV header) first; OutputFile checks every later flush.
void open_results(std::optional<core::OutputFile>& f, const std::string& path, const char* flag,
                  bool resume, const std::string& lead) {
  if (path.empty()) return;
  f.emplace(path, flag, resume ? std::ios::app : std::ios::trunc);
  if (resume && std::filesystem::file_size(path) > 0) return;
  f->stream() << lead;
  f->flush();
}

}  // namespace

int cmd_sweep(const std::vector<std::string>& args) {
  po::options_description opts("trainsim sweep SWEEP.yaml [options]");
  std::string csv_path, jsonl_path, shard_text = "1/1", plot_path, plot_axes;
  int jobs = 0;
  opts.add_options()("help,h", "show this help")(
      "csv", po::value<std::string>(&csv_path), "write one CSV row per point to this file")(
      "jsonl", po::value<std::string>(&jsonl_path), "write one JSON line per point (with the full report)")(
      "jobs,j", po::value<int>(&jobs)->default_value(0), "worker threads (0 = one per hardware thread)")(
      "resume", "keep the finished points already in --csv/--jsonl and run the rest")(
      "shard", po::value<std::string>(&shard_text), "run part K of N (blocks of 32 consecutive points dealt in turn), e.g. 2/4")(
      "plot", po::value<std::string>(&plot_path), "write an SVG fit/OOM map of the results to this file")(
      "plot-axes", po::value<std::string>(&plot_axes), "KEY1,KEY2: the map's x and y axes (default: the first two)")(
      "quiet,q", "no progress bar on standard error (it is drawn only on a terminal anyway)");
  po::options_description hidden;
  std::size_t stop_after = 0;
  hidden.add_options()("sweep", po::value<std::string>(), "sweep file")(
      "stop-after", po::value<std::size_t>(&stop_after), "testing: stop as if interrupted after N points");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("sweep", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout
        << opts
        << "\nexit codes: 0 done (points that run out of memory are results), 130 interrupted "
           "(rerun with --resume), 2 bad input or usage, 5 resources exhausted, 1 internal error\n";
    return kExitFits;
  }
  if (!vm.count("sweep")) throw po::error("missing SWEEP file");
  if (jobs < 0) throw po::error("--jobs must be >= 0 (0 = one per hardware thread)");
  const Shard shard = parse_shard(shard_text);
  const bool resume = vm.count("resume") > 0;
  if (resume && csv_path.empty() && jsonl_path.empty()) throw po::error("--resume needs --csv or --jsonl");

  const sweep::SweepSpec spec = sweep::load_sweep(vm["sweep"].as<std::string>());
  const std::vector<sweep::Point> points = sweep::expand(spec);
  std::vector<std::size_t> mine;  // indices into points, in order
  for (const auto& p : points)
    if (sweep::in_shard(p.index, shard.k, shard.n)) mine.push_back(p.index);
  if (!points.empty()) sweep::check_axis_keys(spec, points.front());
  if (!plot_axes.empty() && plot_path.empty()) throw po::error("--plot-axes needs --plot");
  const sweep::MapAxes map_axes = sweep::map_axes(spec, plot_axes);

  const std::string header = sweep::csv_header(spec);
  // A shard's files start with its tag (which sweep, which part), which `merge` checks.
  std::string csv_tag, jsonl_tag;
  if (vm.count("shard")) {
    const sweep::ShardTag tag{shard.k, shard.n, points.size(), sweep::sweep_fingerprint(spec),
                              core::kVersion};
    csv_tag = sweep::shard_line(tag, false);
    jsonl_tag = sweep::shard_line(tag, true);
  }
  std::vector<sweep::Brief> briefs;
  if (resume) briefs = resume_results(csv_path, jsonl_path, header, mine, csv_tag, jsonl_tag);
  const std::size_t done = briefs.size();
  // OOM causes for the map: of kept points from the file, of new ones from their results.
  std::map<std::size_t, std::string> causes;
  if (!plot_path.empty() && done > 0) causes = sweep::read_oom_causes(csv_path.empty() ? jsonl_path : csv_path);
  std::optional<core::OutputFile> csv, jsonl;
  // Catch interruptions before the files exist, so a signal that arrives once the header is
  // written always finds the handler (the flag stops the workers before any point if early).
  g_stop.store(false);
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  open_results(csv, csv_path, "--csv", resume, csv_tag + header);
  open_results(jsonl, jsonl_path, "--jsonl", resume, jsonl_tag);
  struct Row {
    std::string csv, jsonl;
    sweep::Brief brief;
    std::string oom_cause;
  };
  std::string note;
  const int threads = sweep::worker_threads(jobs, mine.size() - done, &note);
  if (!note.empty()) std::cerr << "trainsim sweep: " << note << "\n";
  Progress progress("points", mine.size(), progress_wanted(vm.count("quiet") > 0), done);
  exec::AllocatorMemo memo;
  std::size_t written = 0;
  const std::size_t todo = mine.size() - done;
  std::size_t ran = sweep::run_in_order<Row>(
      todo, threads,
      [&](std::size_t i) {
        const sweep::Point& p = points[mine[done + i]];
        const sweep::PointResult r = sweep::run_point(spec, p, &memo);
        Row row{csv_path.empty() ? "" : sweep::csv_row(spec, p, r),
                jsonl_path.empty() ? "" : sweep::jsonl_line(spec, p, r), sweep::brief_of(p.index, r),
                r.summary && !r.summary->ooms.empty() ? r.summary->ooms.front().cause : std::string()};
        return row;
      },
      [&](std::size_t, Row&& row) {
        if (stop_after > 0 && written >= stop_after)
          return;  // in flight when the test "signal" came
        // Each record is flushed and checked: a full disk stops the sweep with the file named
        // (the files stay a valid prefix for --resume).
        for (auto [f, text] : {std::pair{&csv, &row.csv}, std::pair{&jsonl, &row.jsonl}}) {
          if (!*f) continue;
          (*f)->stream() << *text;
          (*f)->flush();
        }
        briefs.push_back(row.brief);
        if (!row.oom_cause.empty()) causes[row.brief.point] = row.oom_cause;
        progress.tick();
        if (stop_after > 0 && ++written >= stop_after) g_stop.store(true);
      },
      &g_stop);
  progress.end();
  // The handler stays installed until exit: a signal that lands after the last point (while the
  // files close or the digest prints) must not kill the process with the results half-closed.
  if (csv) csv->close();
  if (jsonl) jsonl->close();

  std::vector<sweep::Point> shown;
  for (std::size_t i : mine) shown.push_back(points[i]);
  sweep::write_digest(std::cout, spec, shown, briefs);
  if (!plot_path.empty()) {  // every finished point, kept or new (also when interrupted)
    std::vector<sweep::PlotPoint> plotted;
    for (const auto& b : briefs) plotted.push_back(sweep::plot_point_of(b, causes[b.point]));
    core::OutputFile svg(plot_path, "--plot");
    sweep::write_sweep_map_svg(svg.stream(), spec, shown, plotted, map_axes);
    svg.close();
  }
  if (stop_after > 0 && written >= stop_after) ran = written;
  if (ran < todo) {
    std::cerr << "trainsim sweep: stopped after " << done + ran << " of " << mine.size()
              << " points; the files hold every finished point. Continue with --resume.\n";
    return kExitInterrupted;
  }
  return kExitFits;
}

}  // namespace trainsim::tools
