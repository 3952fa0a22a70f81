// Sweep files (axes, ranges, zip, where and their located errors), the ordered worker pool,
// output files (resume, merge) and fit against a closed form.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "sim/sweep/digest.hpp"
#include "sim/sweep/fit.hpp"
#include "sim/sweep/kept_plans.hpp"
#include "sim/sweep/output.hpp"
#include "sim/sweep/shard.hpp"
#include "tests/scenario/scenario_files.hpp"

using namespace trainsim;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;
const std::string kData = kRoot + "/tests/sweep/data/";

// A folder of this process's own, removed at exit: ctest runs test cases as parallel processes,
// and one that copies toy_fit.yaml while another reads it must not share the file.
const std::filesystem::path& scratch() {
  static const test::TempDir dir;
  return dir.path();
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto& dir = scratch();
  std::ofstream(dir / name) << text;
  std::filesystem::copy_file(kData + "toy_fit.yaml", dir / "toy_fit.yaml",
                             std::filesystem::copy_options::overwrite_existing);
  return (dir / name).string();
}

std::string error_of(const std::string& text) {
  try {
    sweep::load_sweep(write_temp("bad.yaml", text));
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// Plays every point of `spec` in order on this thread (its caches serving) and again each on a
// fresh thread (nothing cached): the JSON lines must agree. Returns this thread's results.
std::vector<sweep::PointResult> same_as_alone(const sweep::SweepSpec& spec) {
  std::vector<sweep::PointResult> out;
  for (const auto& p : sweep::expand(spec)) {
    auto shared = sweep::run_point(spec.base, sweep::point_sets(spec, p));
    sweep::PointResult alone;
    std::thread([&] { alone = sweep::run_point(spec.base, sweep::point_sets(spec, p)); }).join();
    REQUIRE(shared.status != sweep::Status::invalid);
    CHECK(sweep::jsonl_line(spec, p, shared) == sweep::jsonl_line(spec, p, alone));
    out.push_back(std::move(shared));
  }
  return out;
}

std::vector<std::string> sets_of(const sweep::SweepSpec& s, const sweep::Point& p) {
  return sweep::point_sets(s, p);
}

}  // namespace

TEST_CASE("a multiplicative range doubles up to hi and an additive one steps") {
  CHECK(sweep::range_values(1, 16, "x2") == std::vector<long long>{1, 2, 4, 8, 16});
  CHECK(sweep::range_values(3, 30, "x3") == std::vector<long long>{3, 9, 27});
  CHECK(sweep::range_values(2, 9, "3") == std::vector<long long>{2, 5, 8});
  CHECK_THROWS_AS(sweep::range_values(0, 8, "x2"), std::invalid_argument);
  CHECK_THROWS_AS(sweep::range_values(1, 8, "x1"), std::invalid_argument);
  CHECK_THROWS_AS(sweep::range_values(8, 1, "1"), std::invalid_argument);
}

TEST_CASE("the cartesian product runs the first axis slowest") {
  const auto spec = sweep::load_sweep(write_temp("p.yaml",
      "base: {file: toy_fit.yaml}\naxes:\n  training.micro_batch: [1, 2]\n  device.memory: [64MiB, 100MiB, 1GiB]\n"));
  const auto pts = sweep::expand(spec);
  REQUIRE(pts.size() == 6);
  CHECK(sets_of(spec, pts[0]) == std::vector<std::string>{"training.micro_batch=1", "device.memory=64MiB"});
  CHECK(sets_of(spec, pts[1]) == std::vector<std::string>{"training.micro_batch=1", "device.memory=100MiB"});
  CHECK(sets_of(spec, pts[5]) == std::vector<std::string>{"training.micro_batch=2", "device.memory=1GiB"});
  CHECK(pts[5].index == 5);
}

TEST_CASE("zipped axes move together in the place of their first member") {
  const auto spec = sweep::load_sweep(write_temp("z.yaml",
      "base: {file: toy_fit.yaml}\naxes:\n  training.micro_batch: [1, 2, 4]\n  device.memory: [64MiB, 1GiB]\n"
      "  training.gradient_accumulation: [3, 5, 7]\nzip: [[training.micro_batch, training.gradient_accumulation]]\n"));
  const auto pts = sweep::expand(spec);
  REQUIRE(pts.size() == 6);
  CHECK(sets_of(spec, pts[1]) == std::vector<std::string>{"training.micro_batch=1", "device.memory=1GiB",
                                                          "training.gradient_accumulation=3"});
  CHECK(sets_of(spec, pts[2])[2] == "training.gradient_accumulation=5");
}

TEST_CASE("where rules filter points and may name base keys") {
  const auto spec = sweep::load_sweep(write_temp("w.yaml",
      "base: {file: toy_fit.yaml}\naxes:\n  training.micro_batch: {range: [1, 64], step: x2}\n"
      "  device.memory: [64MiB, 1GiB]\n"
      "where:\n  - \"training.micro_batch * training.gradient_accumulation <= 8 and (training.micro_batch % 2 == 0 or device.memory == '1GiB')\"\n"));
  const auto pts = sweep::expand(spec);
  // mb 1: only 1GiB; mb 2, 4, 8: both.
  REQUIRE(pts.size() == 7);
  CHECK(sets_of(spec, pts[0]) == std::vector<std::string>{"training.micro_batch=1", "device.memory=1GiB"});
  CHECK(pts.back().index == 6);
}

TEST_CASE("rules on some axes keep the same points as rules evaluated at every point") {
  // Each rule's verdict is kept per combination of the axes it names; the second rule's table
  // spans micro-batch and memory, the first's micro-batch and accumulation.
  const auto spec = sweep::load_sweep(write_temp("w2.yaml",
      "base: {file: toy_fit.yaml}\naxes:\n  training.micro_batch: [1, 2, 4, 8]\n"
      "  training.gradient_accumulation: [1, 2, 3, 4]\n  device.memory: [64MiB, 1GiB]\n"
      "where:\n  - \"training.micro_batch * training.gradient_accumulation <= 8\"\n"
      "  - \"device.memory == '1GiB' or training.micro_batch == 1\"\n"));
  const auto pts = sweep::expand(spec);
  // Products <= 8: 4 + 4 + 2 + 1 pairs; micro-batch 1 keeps both memories, the others 1GiB only.
  REQUIRE(pts.size() == 15);
  std::size_t i = 0;
  for (std::size_t mb : {1, 2, 4, 8})
    for (std::size_t ga = 1; ga <= 4; ++ga)
      for (const char* mem : {"64MiB", "1GiB"}) {
        if (mb * ga > 8 || (mb != 1 && std::string(mem) == "64MiB")) continue;
        REQUIRE(i < pts.size());
        CHECK(sets_of(spec, pts[i]) == std::vector<std::string>{"training.micro_batch=" + std::to_string(mb),
                                                                "training.gradient_accumulation=" + std::to_string(ga),
                                                                std::string("device.memory=") + mem});
        CHECK(pts[i].index == i);
        ++i;
      }
  // A rule that fails for one combination fails when a point first meets it.
  const auto bad = sweep::load_sweep(write_temp("w3.yaml",
      "base: {file: toy_fit.yaml}\naxes:\n  training.micro_batch: [1, 2, 4]\n  device.memory: [64MiB, 1GiB]\n"
      "where: [\"8 / (training.micro_batch - 2) != 0\"]\n"));
  CHECK_THROWS_WITH(sweep::expand(bad), Catch::Contains("w3.yaml:5:12: where[0]: division by zero"));
}

TEST_CASE("malformed sweep files are located errors") {
  const std::string head = "base: {file: toy_fit.yaml}\naxes:\n  training.micro_batch: [1, 2]\n";
  CHECK_THAT(error_of(head + "where: [\"training.micro_batch <= parallel.tensr\"]\n"),
             Catch::Contains("bad.yaml:4:34: where[0]: unknown name 'parallel.tensr'"));
  CHECK_THAT(error_of(head + "where: [\"training.micro_batch <= (2\"]\n"), Catch::Contains("bad.yaml:4:36: where[0]: expected ')'"));
  CHECK_THAT(error_of(head + "where: [\"training.micro_batch $ 2\"]\n"), Catch::Contains("unexpected character '$'"));
  CHECK_THAT(error_of(head + "  device.memory: [1GiB]\nzip: [[training.micro_batch, device.memory]]\n"),
             Catch::Contains("bad.yaml:5:30: zip[0]: zipped axes need equal lengths"));
  CHECK_THAT(error_of(head + "zip: [[training.micro_batch, nope]]\n"), Catch::Contains("'nope' is not an axis"));
  CHECK_THAT(error_of("base: {file: toy_fit.yaml}\naxes:\n  training.micro_batch: {range: [1, 8], step: x1}\n"),
             Catch::Contains("bad.yaml:3:47: axes.training.micro_batch: step must be xF"));
  CHECK_THAT(error_of(head + "extra: 1\n"), Catch::Contains("bad.yaml:4:1: extra: unknown key 'extra'"));
  CHECK_THAT(error_of("axes: {a: [1]}\n"), Catch::Contains("missing required key 'base'"));
  CHECK_THAT(error_of("base: {file: nowhere.yaml}\naxes: {a: [1]}\n"),
             Catch::Contains("bad.yaml:1:14: base.file: '") &&
                 Catch::Contains("nowhere.yaml' does not exist"));
}

TEST_CASE("a where rule that compares a word with a number is an error at the rule") {
  const auto spec = sweep::load_sweep(write_temp("t.yaml",
      "base: {file: toy_fit.yaml}\naxes:\n  device.memory: [64MiB]\nwhere: [\"device.memory < 3\"]\n"));
  CHECK_THROWS_WITH(sweep::expand(spec), Catch::Contains("t.yaml:4:10: where[0]: '64MiB' is not a number"));
}

TEST_CASE("the ordered pool hands results on in index order whatever the thread count") {
  for (int jobs : {1, 2, 4}) {
    std::vector<std::size_t> seen;
    const auto n = sweep::run_in_order<std::size_t>(
        50, jobs, [](std::size_t i) { return i * i; },
        [&](std::size_t i, std::size_t&& v) {
          CHECK(v == i * i);
          seen.push_back(i);
        });
    CHECK(n == 50);
    CHECK(seen.size() == 50);
    for (std::size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == i);
  }
}

TEST_CASE("the ordered pool hands each thread runs of neighbouring items") {
  // 640 items on 2 threads: runs of 32 (at least eight per thread), each on one thread — a
  // sweep's neighbouring points share plans and allocator replays only when played in turn.
  std::vector<std::thread::id> by(640);
  sweep::run_in_order<int>(
      640, 2,
      [&](std::size_t i) {
        by[i] = std::this_thread::get_id();
        std::this_thread::yield();
        return 0;
      },
      [](std::size_t, int&&) {});
  for (std::size_t i = 0; i < by.size(); ++i) CHECK(by[i] == by[i / 32 * 32]);
}

TEST_CASE("a stop request lets only an unbroken prefix reach the sink") {
  std::atomic<bool> stop{false};
  std::size_t last = 0;
  // Items from 20 on wait for the stop: otherwise the other threads may finish every item before
  // the sink reaches item 9, and finished items all reach the sink (nothing finished is lost).
  const auto n = sweep::run_in_order<int>(
      100, 3,
      [&](std::size_t i) {
        while (i >= 20 && !stop.load()) std::this_thread::yield();
        return 0;
      },
      [&](std::size_t i, int&&) {
        last = i;
        if (i == 9) stop = true;
      },
      &stop);
  CHECK(n >= 10);
  CHECK(n < 100);
  CHECK(last + 1 == n);
}

TEST_CASE("every point of a grid is simulated and invalid points carry their reason") {
  const auto spec = sweep::load_sweep(kData + "grid.yaml");
  const auto pts = sweep::expand(spec);
  REQUIRE(pts.size() == 33);  // 4 x 3 x 3 less 128 x 3 by the rule
  std::size_t fits = 0, oom = 0, invalid = 0;
  for (const auto& p : pts) {
    const auto r = sweep::run_point(spec.base, sweep::point_sets(spec, p));
    if (r.status == sweep::Status::fits) ++fits;
    if (r.status == sweep::Status::oom) ++oom;
    if (r.status == sweep::Status::invalid) {
      ++invalid;
      CHECK_THAT(r.reason, Catch::Contains("device.memory"));
    }
  }
  CHECK(invalid == 11);
  CHECK(fits > 0);
  CHECK(oom > 0);
}

TEST_CASE("the boundary of OOM along an axis is read in the direction memory moves") {
  using A = sweep::AxisStatus;
  CHECK(sweep::oom_boundary({A{"1", false}, A{"2", false}}) == "no value OOMs in the grid");
  CHECK(sweep::oom_boundary({A{"1", false}, A{"2", false}, A{"4", true}, A{"8", true}}) ==
        "OOM from 4 (largest below it that fits: 2)");
  // ZeRO stages, pipeline depths, device memory: OOM at the small end.
  CHECK(sweep::oom_boundary({A{"0", true}, A{"1", true}, A{"2", false}, A{"3", false}}) ==
        "OOM up to 1 (fits from 2)");
  CHECK(sweep::oom_boundary({A{"1", true}, A{"2", false}, A{"4", true}}) == "not monotone: OOM at 1, 4; fits at 2");
  CHECK(sweep::oom_boundary({A{"1", true}}) == "OOM from 1 (the smallest value tried; every value OOMs)");
}

TEST_CASE("a sweep's summary names where OOM ends along a growing memory axis") {
  const auto spec = sweep::load_sweep(kData + "memory_axis.yaml");
  const auto pts = sweep::expand(spec);
  REQUIRE(pts.size() == 12);
  std::vector<sweep::Brief> briefs;
  for (const auto& p : pts) briefs.push_back(sweep::brief_of(p.index, sweep::run_point(spec.base, sweep::point_sets(spec, p))));
  std::ostringstream out;
  sweep::write_digest(out, spec, pts, briefs);
  // The fastest fitting point is micro-batch 128 (peak 144 MiB) on 256 MiB.
  CHECK_THAT(out.str(), Catch::Contains("--set training.micro_batch=128 --set device.memory=256MiB"));
  CHECK_THAT(out.str(), Catch::Contains("device.memory: OOM up to 128MiB (fits from 256MiB)"));
  CHECK_THAT(out.str(), Catch::Contains("training.micro_batch: no value OOMs in the grid"));
}

TEST_CASE("shards split the points into blocks of neighbours dealt in turn") {
  // Every point in exactly one of n parts; each part's points come in runs of kShardBlock
  // consecutive ones; parts differ in size by at most a block.
  for (std::size_t n : {1, 2, 3, 7}) {
    const std::size_t points = 1000;
    std::vector<std::size_t> sizes(n, 0);
    for (std::size_t i = 0; i < points; ++i) {
      std::size_t owners = 0;
      for (std::size_t k = 1; k <= n; ++k)
        if (sweep::in_shard(i, k, n)) {
          ++owners;
          ++sizes[k - 1];
          if (i % sweep::kShardBlock != 0) CHECK(sweep::in_shard(i - 1, k, n));  // same block, same part
        }
      CHECK(owners == 1);
    }
    const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
    CHECK(*hi - *lo <= sweep::kShardBlock);
  }
  CHECK(sweep::in_shard(31, 1, 2));
  CHECK(sweep::in_shard(32, 2, 2));
  CHECK(sweep::in_shard(64, 1, 2));
}

namespace {

// A CSV shard file of a 40-point sweep: its tag, the header and rows for `points`.
std::string shard_csv(std::size_t k, std::size_t n, const std::vector<std::size_t>& points,
                      const std::string& fingerprint = "0123456789abcdef") {
  std::string text =
      sweep::shard_line({k, n, 40, fingerprint, "0.1.0"}, false) + "point,x,status\n";
  for (std::size_t p : points) text += std::to_string(p) + "," + std::to_string(p + 1) + ",fits\n";
  return text;
}

std::vector<std::size_t> span(std::size_t from, std::size_t to) {
  std::vector<std::size_t> v;
  for (std::size_t i = from; i <= to; ++i) v.push_back(i);
  return v;
}

}  // namespace

TEST_CASE("worker threads are capped at the items and the hardware, and the cap is told") {
  std::string note;
  CHECK(sweep::worker_threads(1000, 4, &note) == 4);
  CHECK(note == "-j 1000 lowered to 4 worker threads (4 points to run)");
  note.clear();
  CHECK(sweep::worker_threads(100000, 1000000, &note) == sweep::max_jobs());
  CHECK_THAT(note, Catch::Contains("at most 4 per hardware thread, 256 in all"));
  CHECK((sweep::max_jobs() >= 4 && sweep::max_jobs() <= 256));
  note.clear();
  CHECK(sweep::worker_threads(0, 1, &note) == 1);  // -j 0 (one per hardware thread) says nothing
  CHECK(note.empty());
  CHECK(sweep::worker_threads(3, 0) == 1);
}

TEST_CASE("a shard tag reads back what was written, in both formats") {
  const sweep::ShardTag t{3, 4, 1000, "00ff00ff00ff00ff", "0.1.0"};
  for (bool jsonl : {false, true}) {
    const std::string line = sweep::shard_line(t, jsonl);
    REQUIRE(line.back() == '\n');
    CHECK(sweep::is_shard_line(line));
    const auto back = sweep::parse_shard_line(line.substr(0, line.size() - 1));
    REQUIRE(back);
    CHECK((back->k == 3 && back->n == 4 && back->points == 1000));
    CHECK((back->fingerprint == t.fingerprint && back->version == "0.1.0"));
  }
  CHECK_FALSE(sweep::parse_shard_line("# trainsim-shard 5/4 points=1 fingerprint=x trainsim=0"));
  CHECK_FALSE(sweep::parse_shard_line("point,x,status"));
  // Part 4 of 4 of 1000 points: blocks 3, 7, ..., 31 of 32 points (the last block holds 8).
  CHECK(t.expected_points() == 256);
  CHECK((sweep::ShardTag{4, 4, 1000, "", ""}.expected_points() == 232));
}

TEST_CASE("a sweep's fingerprint follows its file, its base and nothing else") {
  const std::string a = write_temp(
      "fp_a.yaml", "base: {file: toy_fit.yaml}\naxes:\n  training.micro_batch: [1, 2]\n");
  const std::string b = write_temp(
      "fp_b.yaml", "base: {file: toy_fit.yaml}\naxes:\n  training.micro_batch: [1, 3]\n");
  const std::string fa = sweep::sweep_fingerprint(sweep::load_sweep(a));
  CHECK(fa.size() == 16);
  CHECK(fa == sweep::sweep_fingerprint(sweep::load_sweep(a)));
  CHECK(fa != sweep::sweep_fingerprint(sweep::load_sweep(b)));
}

TEST_CASE("shard files merge into point order, without their tags") {
  const auto& dir = scratch();
  const std::string a = (dir / "a.csv").string(), b = (dir / "b.csv").string(), out = (dir / "m.csv").string();
  std::ofstream(a) << shard_csv(1, 2, span(0, 31));
  std::ofstream(b) << shard_csv(2, 2, span(32, 39));
  CHECK(sweep::merge_files(out, {b, a}) == 40);
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string want = "point,x,status\n";
  for (std::size_t p = 0; p < 40; ++p)
    want += std::to_string(p) + "," + std::to_string(p + 1) + ",fits\n";
  CHECK(ss.str() == want);
}

TEST_CASE("merge refuses what is not every part of one sweep, whole") {
  const auto& dir = scratch();
  const std::string a = (dir / "ra.csv").string(), b = (dir / "rb.csv").string(),
                    out = (dir / "rm.csv").string();
  std::ofstream(a) << shard_csv(1, 2, span(0, 31));
  auto refused = [&](const std::string& b_text, const std::string& why) {
    std::ofstream(b) << b_text;
    CHECK_THROWS_WITH(sweep::merge_files(out, {a, b}), Catch::Contains(why));
  };
  refused(shard_csv(2, 2, span(32, 39), "fedcba9876543210"), "shard 2/2 of another sweep");
  refused(shard_csv(1, 2, span(0, 31)), "shard 1/2 is given twice");
  refused(shard_csv(2, 2, span(32, 36)),
          "shard 2/2 holds 5 of its 8 points (missing points 37-39)");
  refused(shard_csv(2, 2, {32, 33, 33}), "point 33 appears twice");
  refused(shard_csv(2, 2, {32, 3}), "point 3 does not belong to shard 2/2 of 40 points");
  refused(shard_csv(2, 2, span(32, 39)) + "40,4", "the last line is cut short");
  refused(shard_csv(2, 3, span(32, 39)), "not parts of one split");
  refused("point,x,status\n32,1,fits\n", "no shard tag on the first line");
  CHECK_THROWS_WITH(sweep::merge_files(out, {a}),
                    Catch::Contains("missing shard 2/2 (1 of 2 given)"));
  CHECK_THROWS_WITH(sweep::merge_files(out, {a, dir.string()}), Catch::Contains("is a directory"));
}

TEST_CASE("fit finds the closed-form largest micro-batch of the toy") {
  // 16 MiB of model states + mb x 1 MiB saved on a 100 MiB device: 84 fits, 85 does not.
  const auto base = sweep::BaseScenario::from_file(kData + "toy_fit.yaml");
  const auto r = sweep::fit(base, {}, "training.micro_batch");
  CHECK(r.found);
  CHECK(r.value == 84);
  CHECK(r.peak_bytes == 100LL << 20);
  REQUIRE(r.next_value);
  CHECK(*r.next_value == 85);
  CHECK(r.next_peak_bytes == 101LL << 20);
  // With 128 MiB of states even one sample does not fit.
  const auto none = sweep::fit(base, {"model.layers=[{name: a, kind: generic, params: 8388608, saved: 1MiB, output: 0}]"},
                               "training.micro_batch");
  CHECK_FALSE(none.found);
  CHECK(*none.next_value == 1);
}

TEST_CASE("points that share a thread's model report as if each was loaded alone") {
  // Model-changing axes (sequence length, attention) between ones that keep it, so the thread's
  // model cache both serves and rebuilds; each reference point runs on a fresh thread (no cache).
  const auto spec = sweep::load_sweep(write_temp("cache.yaml",
      "base: {file: " + kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml}\n"
      "axes:\n  training.seq_len: [1024, 2048]\n  training.attention: [standard, flash]\n"
      "  training.micro_batch: [1, 2]\n  parallel.zero: [0, 1]\n"));
  REQUIRE(same_as_alone(spec).size() == 16);
}

TEST_CASE("points that differ in device, all-reduce and links alone share a thread's plan and report as if lowered alone") {
  // The axes the plan is patched for innermost (the thread's plan serves them) around one that
  // changes the plan (micro-batch); each reference point runs on a fresh thread (nothing
  // cached). The H100 brings other default links, PCIe and host memory, the A100s other
  // reserved bytes and capacities.
  const auto spec = sweep::load_sweep(write_temp("plans.yaml",
      "base: {file: " + kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml}\n"
      "axes:\n  training.micro_batch: [1, 2]\n  training.global_batch: [384]\n"
      "  device: [a100-80gb, h100-80gb, a100-40gb]\n"
      "  parallel.allreduce: [ring, tree]\n  cluster.inter_node: [ib-hdr, ib-ndr]\n"
      "  cluster.intra_node: [nvswitch-a100, nvlink2]\n"
      "zip: [[cluster.inter_node, cluster.intra_node]]\n"));
  const auto results = same_as_alone(spec);
  REQUIRE(results.size() == 24);
  std::set<double> step_times;
  std::set<std::int64_t> peaks;  // bytes
  for (const auto& r : results) {
    step_times.insert(r.summary->step_time_s);
    peaks.insert(r.summary->peak.value);
  }
  CHECK(step_times.size() >= 12);  // the device, the links and the algorithm do change the step
  CHECK(peaks.size() >= 4);        // and the reserved bytes the peak

  // With the optimizer offloaded, the device's default PCIe link and host memory matter too.
  const auto offload = sweep::load_sweep(write_temp("plans_offload.yaml",
      "base:\n  model: {preset: gpt2, name: small, layers: 4, hidden: 1024, heads: 16}\n"
      "  device: v100-32gb\n"
      "  training: {micro_batch: 1, seq_len: 512, precision: fp16, optimizer: adam, offload: {optimizer: cpu}}\n"
      "axes:\n  training.micro_batch: [1, 2]\n  device: [v100-32gb, a100-80gb, h100-80gb]\n"));
  const auto offloaded = same_as_alone(offload);
  REQUIRE(offloaded.size() == 6);
  std::set<std::int64_t> host_capacities;
  for (const auto& r : offloaded) host_capacities.insert(r.summary->host_capacity.value);
  CHECK(host_capacities.size() >= 2);
}

TEST_CASE("a sweep thread keeps older plans only once a point asks for one it let go") {
  // Plans lowered on one fresh thread, each point's report also checked against a point played
  // alone. Micro-batch changes the plan, the device is patched on it.
  const auto lowered_in = [](const sweep::SweepSpec& spec) {
    std::int64_t n = -1;
    std::thread([&] {
      const std::int64_t before = sweep::plans_lowered();
      REQUIRE(same_as_alone(spec).size() == 9);
      n = sweep::plans_lowered() - before;
    }).join();
    return n;
  };
  const std::string base =
      "base:\n  model: {preset: gpt2, name: small, layers: 4, hidden: 1024, heads: 16}\n"
      "  device: a100-80gb\n  training: {micro_batch: 1, seq_len: 512, precision: bf16, optimizer: adam}\n";
  // Device innermost: each plan's points come together, one lowering per micro-batch (3).
  CHECK(lowered_in(sweep::load_sweep(write_temp("kept_inner.yaml", base +
      "axes:\n  training.micro_batch: [1, 2, 4]\n  device: [a100-80gb, h100-80gb, a100-40gb]\n"))) == 3);
  // Device outermost: the first device lowers mb 1, 2, 4, keeping the newest alone (3); the
  // second asks for mb 1, let go, so the thread keeps up to eight from then on: it lowers mb 1
  // and mb 2 again and finds mb 4 (2); the third finds all three (0). 5 in all, where keeping
  // one plan would lower 9 and keeping eight from the start 3.
  CHECK(lowered_in(sweep::load_sweep(write_temp("kept_outer.yaml", base +
      "axes:\n  device: [a100-80gb, h100-80gb, a100-40gb]\n  training.micro_batch: [1, 2, 4]\n"))) == 5);
}

TEST_CASE("a sweep thread reuses the model handed back when the next point's model is the same") {
  const auto spec = sweep::load_sweep(write_temp("reuse.yaml",
      "base: {file: " + kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml}\n"
      "axes:\n  training.micro_batch: [1, 2]\n"));
  std::thread([&] {
    auto a = spec.base.load({"training.micro_batch=1"});
    const auto* layers = &a.model.graph.m_vertices.front();
    spec.base.give_back(std::move(a));
    auto b = spec.base.load({"training.micro_batch=2"});  // same model: taken, not built
    CHECK(&b.model.graph.m_vertices.front() == layers);
    const auto params = b.model.parameters();
    spec.base.give_back(std::move(b));
    auto c = spec.base.load({"training.seq_len=1024"});  // another model: built anew
    CHECK(&c.model.graph.m_vertices.front() != layers);
    CHECK(c.model.parameters() == params);
    CHECK(c.model.seq_len == 1024);
    const auto* layers_1024 = &c.model.graph.m_vertices.front();
    spec.base.give_back(std::move(c));
    auto d = spec.base.load({"training.micro_batch=2"});  // the first model, kept beside the second
    CHECK(&d.model.graph.m_vertices.front() == layers);
    spec.base.give_back(std::move(d));
    auto e = spec.base.load({"training.seq_len=1024"});
    CHECK(&e.model.graph.m_vertices.front() == layers_1024);
    // Only the last kCapacity models stay: after that many others the first is built anew (its
    // address may be reused, so only its contents are checked).
    spec.base.give_back(std::move(e));
    for (std::size_t i = 0; i < scenario::ModelCache::kCapacity; ++i)
      spec.base.give_back(spec.base.load({"training.seq_len=" + std::to_string(128 * (i + 1))}));
    auto f = spec.base.load({"training.micro_batch=2"});
    CHECK(f.model.parameters() == params);
    CHECK(f.model.seq_len == 2048);
    // An override inside the model makes another model, though the rest of the point is f's.
    spec.base.give_back(std::move(f));
    auto g = spec.base.load({"model.layers=48"});
    CHECK(g.model.parameters() < params);
  }).join();
}
