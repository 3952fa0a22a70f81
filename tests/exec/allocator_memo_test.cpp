// Caching-allocator replays shared across plays (sim/exec/allocator_memo.hpp): a play that
// resumes another's paused replay must report exactly what it reports alone — peaks and their
// breakdown, allocated and reserved peaks, OOM points with their own times — over timing-only
// variants (all-reduce algorithm, inter-node link), other global batches, other capacities, and
// out-of-memory points (activations, model states). Each case also checks that replays were
// resumed, so an inert memo cannot pass.
#include <catch2/catch.hpp>

#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sim/exec/allocator_memo.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/summary.hpp"
#include "sim/report/writers.hpp"
#include "sim/scenario/scenario.hpp"

namespace {

using namespace trainsim;

const std::string kRoot = TRAINSIM_SOURCE_DIR;
const std::string kGpt3 = kRoot + "/scenarios/parallel/06_gpt3_175b_megatron.yaml";

std::string played(const std::string& file, const std::vector<std::string>& sets, exec::AllocatorMemo* memo,
                   bool compress = true, bool share_stages = true) {
  const auto s = scenario::load_scenario(file, sets);
  const parallel::Plan plan = parallel::lower(s, {.compress = compress});
  const exec::Timeline tl = exec::play(plan, {.allocator_memo = memo, .share_stages = share_stages});
  std::ostringstream out;
  report::write_json(out, report::summarize(s, plan, tl, false));
  return out.str();
}

// Plays every variant of `base` in order with one memo; each report must equal the memo-less one.
// The memo whose counts are returned serves plays whose stages do not share replays among
// themselves (the counts are the memo's alone); a second memo serves plays that do, as sweeps'.
exec::AllocatorMemo::Stats same_with_memo(const std::string& file, const std::vector<std::string>& base,
                                          const std::vector<std::vector<std::string>>& variants,
                                          bool compress = true) {
  exec::AllocatorMemo memo, with_stages;
  for (const auto& v : variants) {
    std::vector<std::string> sets = base;
    sets.insert(sets.end(), v.begin(), v.end());
    std::string what = file;
    for (const auto& k : sets) what += " --set " + k;
    INFO(what);
    const std::string alone = played(file, sets, nullptr, compress);
    CHECK(played(file, sets, &memo, compress, /*share_stages=*/false) == alone);
    CHECK(played(file, sets, &with_stages, compress) == alone);
  }
  return memo.stats();
}

// all-reduce x inter-node link: the step's timing changes, its memory effects do not.
std::vector<std::vector<std::string>> timing_variants() {
  std::vector<std::vector<std::string>> out;
  for (const char* a : {"ring", "tree"})
    for (const char* l : {"ib-hdr", "ib-ndr"})
      out.push_back({std::string("parallel.allreduce=") + a, std::string("cluster.inter_node=") + l});
  return out;
}

}  // namespace

// Within one play: the middle stages of a pipeline hold equal layers, so their logs agree up to
// where their schedules part (1F1B: the end of the later stage's shorter warm-up; GPipe: not at
// all) and each goes on from a copy of an earlier stage's replay. Reports must equal those of a
// play whose stages replay alone, over schedules, out-of-memory stages and a stage on another
// device (whose replay is its own).
TEST_CASE("stages holding equal layers share their replays within a play and report the same",
          "[exec][allocator][memo]") {
  struct Case {
    std::vector<std::string> sets;
    std::vector<std::int32_t> sources;  // expected replay_source per stage
  };
  const std::vector<std::int32_t> none(16, -1);
  // 1F1B: stage i's warm-up is the start of stage 1's (stage 0 holds the embedding, stage 15 the
  // head); stage 14's one forward is too few requests to be worth a copy.
  // Interleaved (two chunks per stage): a warm-up of two micro-batches more per stage earlier,
  // so stage 14's is worth a copy too.
  std::vector<std::int32_t> one_f_one_b = none, gpipe = none;
  for (int i = 2; i <= 13; ++i) one_f_one_b[static_cast<std::size_t>(i)] = 1;
  for (int i = 2; i <= 14; ++i) gpipe[static_cast<std::size_t>(i)] = 1;
  const std::vector<std::int32_t> interleaved = gpipe;
  std::vector<std::int32_t> other_device = one_f_one_b;
  other_device[1] = -1;  // stage 1 on a 900 GiB device: stages 3.. go on from stage 2's replay
  other_device[2] = -1;
  for (int i = 3; i <= 13; ++i) other_device[static_cast<std::size_t>(i)] = 2;
  const std::vector<Case> cases = {
      {{"training.global_batch=512"}, one_f_one_b},
      {{"training.global_batch=512", "parallel.schedule=gpipe"}, gpipe},
      {{"training.global_batch=512", "parallel.schedule=interleaved", "parallel.virtual_stages=2"}, interleaved},
      {{"training.global_batch=512", "training.micro_batch=4"}, one_f_one_b},  // out of memory
      {{"training.global_batch=512", "device.memory=40GiB"}, one_f_one_b},    // model states
      {{"training.global_batch=512",
        "parallel.stage_devices=[{stages: [1], device: {preset: a100-80gb, memory: 900GiB}}]"},
       other_device},
  };
  for (const auto& c : cases) {
    std::string what = kGpt3;
    for (const auto& k : c.sets) what += " --set " + k;
    INFO(what);
    const auto s = scenario::load_scenario(kGpt3, c.sets);
    const parallel::Plan plan = parallel::lower(s, {.compress = true});
    const exec::Timeline shared = exec::play(plan), alone = exec::play(plan, {.share_stages = false});
    std::ostringstream a, b;
    report::write_json(a, report::summarize(s, plan, shared, false));
    report::write_json(b, report::summarize(s, plan, alone, false));
    CHECK(a.str() == b.str());
    REQUIRE(shared.devices.size() == c.sources.size());
    for (std::size_t i = 0; i < c.sources.size(); ++i) {
      INFO("stage " << i);
      CHECK(shared.devices[i].replay_source == c.sources[i]);
      CHECK((shared.devices[i].replay_shared > 0) == (c.sources[i] >= 0));
      CHECK(alone.devices[i].replay_source == -1);
      // 1F1B and interleaved: each later stage's warm-up is shorter.
      if (i > 2 && c.sources[i] >= 0 && c.sources[i - 1] >= 0 && plan.steady_state)
        CHECK(shared.devices[i].replay_shared < shared.devices[i - 1].replay_shared);
    }
  }
}

TEST_CASE("allocator memo: timing-only variants resume late and report the same", "[exec][allocator][memo]") {
  for (const char* schedule : {"1f1b", "gpipe"}) {
    const auto st = same_with_memo(kGpt3, {std::string("parallel.schedule=") + schedule, "training.global_batch=512"},
                                   timing_variants());
    CHECK(st.lookups == 4 * 16);
    CHECK(st.hits >= 3 * 16 / 2);
    // The variants part in the last backward: most of each later log is resumed.
    CHECK(st.records_resumed * 2 > st.records);
  }
  const auto interleaved = same_with_memo(
      kGpt3, {"parallel.schedule=interleaved", "parallel.virtual_stages=2", "training.global_batch=512"},
      timing_variants());
  CHECK(interleaved.hits > 0);
}

// With buckets reduced in place (the scenario's parallel.bucket_buffers) a log holds compute ops'
// records alone, the same for every link and algorithm: the first variant pauses its replays at
// their ends and the others take them whole. Transient buckets part the logs in the last
// backward, so there the later variants replay its rest.
TEST_CASE("allocator memo: with buckets reduced in place, timing variants take the whole outcome",
          "[exec][allocator][memo]") {
  const auto in_place = same_with_memo(kGpt3, {"training.global_batch=512"}, timing_variants());
  CHECK(in_place.lookups == 4 * 16);
  CHECK(in_place.records_resumed * 4 == in_place.records * 3);
  const auto transient =
      same_with_memo(kGpt3, {"training.global_batch=512", "parallel.bucket_buffers=transient"}, timing_variants());
  CHECK(transient.records_resumed * 4 < transient.records * 3);
}

// A sweep plays one lowered plan for each all-reduce algorithm, link and device
// (sim/sweep/runner.cpp), keeping the plan's effect and template hashes and its templates'
// profiles between plays (exec::PlanDigest); profiles costed for another intra-node link or
// device must be costed anew.
TEST_CASE("allocator memo: a plan's digest serves its later plays, which report and resume the same",
          "[exec][allocator][memo]") {
  parallel::Plan plan = parallel::lower(scenario::load_scenario(kGpt3, {"training.global_batch=512"}), {.compress = true});
  exec::AllocatorMemo with_digest, without;
  exec::PlanDigest digest;
  auto variants = timing_variants();
  variants.push_back({"cluster.intra_node=nvlink2"});
  variants.push_back({"device=h100-80gb"});
  variants.push_back({"device=h100-80gb"});
  variants.push_back({});
  for (auto sets : variants) {
    sets.push_back("training.global_batch=512");
    const auto s = scenario::load_scenario(kGpt3, sets);
    plan.intra_node = s.cluster.intra_node;
    plan.inter_node = s.cluster.inter_node;
    plan.data_allreduce = s.parallel.allreduce;
    for (auto& P : plan.programs) {  // as the sweep sets a reused plan's device
      P.device = s.stage_device(P.stage);
      P.persistent[hw::MemCategory::reserved] = P.model_states[hw::MemCategory::reserved] = P.device.reserved;
    }
    auto json = [&](const exec::Timeline& tl) {
      std::ostringstream out;
      report::write_json(out, report::summarize(s, plan, tl, false));
      return out.str();
    };
    CHECK(json(exec::play(plan, {.allocator_memo = &with_digest, .plan_digest = &digest})) ==
          json(exec::play(plan, {.allocator_memo = &without})));
  }
  REQUIRE(digest.programs.size() == plan.programs.size());
  for (std::size_t p = 0; p < plan.programs.size(); ++p) {
    CHECK(digest.programs[p].filled);
    CHECK(digest.programs[p].effects.size() == plan.programs[p].effects.size() + 1);
    // The memo's per-op facts, one per op, each the op's own (what the hashes read of it).
    const auto& facts = digest.programs[p].log_ops;
    REQUIRE(facts.size() == plan.programs[p].ops.size());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < facts.size(); ++i) {
      const parallel::Op& op = plan.programs[p].ops[i];
      const std::uint64_t word = (std::uint64_t{static_cast<std::uint32_t>(op.macro)} << 8) ^
                                 (std::uint64_t{static_cast<std::uint32_t>(op.microbatch)} << 32);
      wrong += facts[i].word != word || facts[i].microbatch != op.microbatch ||
               facts[i].compute != (op.stream == parallel::StreamKind::compute);
    }
    CHECK(wrong == 0);
  }
  CHECK(with_digest.stats().hits == without.stats().hits);
  CHECK(with_digest.stats().records_resumed == without.stats().records_resumed);
  CHECK(with_digest.stats().hits >= 3 * 16 / 2);
}

// A play pauses a copy of its event loop before its first data-parallel all-reduce can start;
// a later play of the plan whose started ops last as long there (another all-reduce algorithm)
// goes on from it. Other capacities, reserved bytes or link speeds that change a started op must
// play from the start. Reports must be those of a play from the start.
TEST_CASE("a plan's later play goes on from an earlier one paused before its data-parallel reductions",
          "[exec][digest]") {
  // ZeRO-1 reduce-scatters the gradients: no all-reduce, a play pauses at its end and a later one
  // takes over the whole step: events, accounts and the allocator model (40 GiB: its OOM points).
  for (const std::string zero_schedule : {"0 1f1b", "0 gpipe", "1 1f1b"}) {
    const std::string zero = zero_schedule.substr(0, 1), schedule = zero_schedule.substr(2);
    // Pipeline stages on other nodes: the inter-node link prices the activations' transfers.
    const std::vector<std::string> base{"training.global_batch=512", "parallel.schedule=" + schedule,
                                        "parallel.zero=" + zero};
    parallel::Plan plan = parallel::lower(scenario::load_scenario(kGpt3, base), {.compress = true});
    exec::PlanDigest digest;
    // With a memo, a play going on from a snapshot hashes its log from the snapshot's end on.
    exec::AllocatorMemo memo;
    struct Variant {
      std::vector<std::string> sets;
      bool resumes;
    };
    // Each play that must not resume finds a kept snapshot differing from it in one thing only
    // (the two last used are kept, the most recently used tried first).
    const std::vector<Variant> variants{
        {{"parallel.allreduce=ring", "cluster.inter_node=ib-hdr"}, false},
        {{"parallel.allreduce=ring", "cluster.inter_node=ib-ndr"}, false},  // transfers differ
        {{"parallel.allreduce=ring", "device.memory=40GiB"}, false},        // the capacity
        {{"parallel.allreduce=tree", "device.memory=40GiB"}, true},         // OOM points carried over
        {{"parallel.allreduce=tree", "cluster.inter_node=ib-ndr"}, true},
        {{"parallel.allreduce=ring", "cluster.inter_node=ib-ndr", "device.reserved=3GiB"}, false},
        {{"parallel.allreduce=tree", "cluster.inter_node=ib-ndr", "device.reserved=3GiB"}, true},
        {{"parallel.allreduce=ring", "cluster.inter_node=ib-hdr"}, false},  // its snapshot dropped
        {{"parallel.allreduce=ring", "device=h100-80gb"}, false},           // kernel speeds
        {{"parallel.allreduce=tree", "device=h100-80gb"}, true},
    };
    std::set<double> steps;
    for (const auto& v : variants) {
      auto sets = base;
      sets.insert(sets.end(), v.sets.begin(), v.sets.end());
      const auto s = scenario::load_scenario(kGpt3, sets);
      plan.intra_node = s.cluster.intra_node;
      plan.inter_node = s.cluster.inter_node;
      plan.data_allreduce = s.parallel.allreduce;
      for (auto& P : plan.programs) {
        P.device = s.stage_device(P.stage);
        P.persistent[hw::MemCategory::reserved] = P.model_states[hw::MemCategory::reserved] = P.device.reserved;
      }
      auto json = [&](const exec::Timeline& tl) {
        const auto summary = report::summarize(s, plan, tl, false);
        steps.insert(summary.step_time_s);
        std::ostringstream out;
        report::write_json(out, summary);
        return out.str();
      };
      INFO(schedule << " " << v.sets.front() << " " << v.sets.back());
      const exec::Timeline resumed =
          exec::play(plan, {.allocator_memo = &memo, .plan_digest = &digest});
      const exec::Timeline alone = exec::play(plan);
      CHECK((resumed.events_resumed > 0) == v.resumes);
      CHECK(alone.events_resumed == 0);
      CHECK(json(resumed) == json(alone));
      CHECK(resumed.events == alone.events);
    }
    // The algorithms (but not under ZeRO-1), links and devices do change the step.
    CHECK(steps.size() == (zero == "0" ? 6u : 3u));
  }
}

// Tensor-parallel groups spread over nodes (tensor ranks placed slowest) price their collectives
// on the inter-node link: profiles costed for one inter-node link do not hold for another.
TEST_CASE("a plan's digest costs its templates anew for another inter-node link when tensor groups span nodes",
          "[exec][allocator][memo]") {
  const std::vector<std::string> base{"training.global_batch=512", "cluster.placement=[data, pipeline, tensor]"};
  parallel::Plan plan = parallel::lower(scenario::load_scenario(kGpt3, base), {.compress = true});
  exec::PlanDigest digest;
  std::set<double> steps;
  for (const char* link : {"ib-hdr", "ib-ndr", "ib-hdr"}) {
    auto sets = base;
    sets.push_back(std::string("cluster.inter_node=") + link);
    const auto s = scenario::load_scenario(kGpt3, sets);
    plan.inter_node = s.cluster.inter_node;
    auto json = [&](const exec::Timeline& tl) {
      const auto summary = report::summarize(s, plan, tl, false);
      steps.insert(summary.step_time_s);
      std::ostringstream out;
      report::write_json(out, summary);
      return out.str();
    };
    CHECK(json(exec::play(plan, {.plan_digest = &digest})) == json(exec::play(plan)));
  }
  CHECK(steps.size() == 2);  // the link does change the step
}

TEST_CASE("allocator memo: other global batches share the start of the step", "[exec][allocator][memo]") {
  const auto st = same_with_memo(kGpt3, {"parallel.zero=1"},
                                 {{"training.global_batch=512"}, {"training.global_batch=1024"},
                                  {"training.global_batch=768"}, {"training.global_batch=512", "parallel.allreduce=tree"}});
  CHECK(st.hits > 0);
  CHECK(st.records_resumed > 0);
  // GPipe: the forwards of the smaller global batch are the start of the larger one's; the first
  // play pauses before its last micro-batch's forward, where the next one resumes.
  const auto gpipe = same_with_memo(kGpt3, {"parallel.schedule=gpipe"},
                                    {{"training.global_batch=512"}, {"training.global_batch=1024"}});
  CHECK(gpipe.hits >= 8);
  CHECK(gpipe.records_resumed > 0);
}

TEST_CASE("allocator memo: a replay holds for another capacity only while nothing failed and its peak fits",
          "[exec][allocator][memo]") {
  // 80 GiB fits; 78 GiB is above what the shared part reserved on most stages (resumed), 40 GiB
  // is not (the stages run out of memory: replayed with their own capacity, then resumed by the
  // next 40 GiB variant with its OOM points timed by that variant's log).
  const auto st = same_with_memo(kGpt3, {"training.global_batch=512"},
                                 {{"device.memory=80GiB"},
                                  {"device.memory=78GiB", "cluster.inter_node=ib-ndr"},
                                  {"device.memory=40GiB"},
                                  {"device.memory=40GiB", "cluster.inter_node=ib-ndr"},
                                  {"device.memory=40GiB", "parallel.allreduce=tree"}});
  CHECK(st.hits > 0);
}

// Another device (A100 40 GB, then 80 GB: another capacity, context and speed) logs the same up
// to its first data-parallel reduction: its play goes on from the first device's replay when that
// serves its capacity — nothing failed and the peak fits, or the capacity is larger and the
// failures are named anew — with its own context. Reports must be those of plays without a memo.
TEST_CASE("allocator memo: a plan's play on another device goes on from the first device's replay",
          "[exec][allocator][memo]") {
  const std::vector<std::vector<std::string>> devices = {{"device=a100-40gb"}, {"device=a100-80gb"}};
  struct Layout {
    std::vector<std::string> sets;
    const char* what;
    bool every_stage;  // every stage of the second play goes on from the first's
  };
  for (const Layout& l : {
           Layout{{"training.recompute=full", "training.global_batch=512"}, "fits on both", true},
           Layout{{"parallel.tensor=2", "parallel.pipeline=8", "parallel.data=64", "training.global_batch=1536"},
                  "model states above both", true},
           // Some stages give free segments back under 40 GB that 80 GB keeps: those replay.
           Layout{{"training.micro_batch=4", "training.global_batch=1536"}, "activations above 40 GB", false},
       }) {
    INFO(l.what);
    const auto st = same_with_memo(kGpt3, l.sets, devices);
    CHECK(st.hits > 0);
    if (l.every_stage) CHECK(st.hits * 2 == st.lookups);
  }
}

TEST_CASE("allocator memo: out-of-memory points resume with their own OOM points", "[exec][allocator][memo]") {
  // Activations: micro-batch 4 runs out during the warm-up; model states: 40 GB without ZeRO
  // fails at the weights and optimizer states (booked before the step) and plays on.
  auto st = same_with_memo(kGpt3, {"training.micro_batch=4", "training.global_batch=1024"}, timing_variants());
  CHECK(st.hits > 0);
  st = same_with_memo(kGpt3, {"device=a100-40gb", "parallel.tensor=4", "parallel.pipeline=8", "parallel.data=32",
                              "training.global_batch=1024"},
                      timing_variants());
  CHECK(st.hits > 0);
}

TEST_CASE("allocator memo: expanded plans, ZeRO, offload and small models", "[exec][allocator][memo]") {
  const std::string zero = kRoot + "/scenarios/parallel/05_zero1.yaml";
  const std::string pipe = kRoot + "/scenarios/parallel/04_pipeline_fits.yaml";
  for (int z = 0; z <= 3; ++z)
    CHECK(same_with_memo(zero, {"parallel.zero=" + std::to_string(z)}, timing_variants()).lookups > 0);
  CHECK(same_with_memo(zero, {"training.offload.optimizer=cpu"}, timing_variants()).lookups > 0);
  CHECK(same_with_memo(pipe, {}, {{"training.global_batch=64"}, {"training.global_batch=128"}}, /*compress=*/false).lookups > 0);
  CHECK(same_with_memo(pipe, {"parallel.schedule=gpipe"}, timing_variants()).lookups > 0);
}

TEST_CASE("allocator memo: plays on two threads sharing one memo report as alone", "[exec][allocator][memo]") {
  std::vector<std::vector<std::string>> points;
  for (const char* gb : {"512", "768"})
    for (auto v : timing_variants()) {
      v.push_back(std::string("training.global_batch=") + gb);
      points.push_back(v);
    }
  std::vector<std::string> alone, shared(points.size());
  for (const auto& p : points) alone.push_back(played(kGpt3, p, nullptr));
  exec::AllocatorMemo memo;
  auto worker = [&](std::size_t first) {
    for (std::size_t i = first; i < points.size(); i += 2) shared[i] = played(kGpt3, points[i], &memo);
  };
  std::thread other(worker, 1);
  worker(0);
  other.join();
  for (std::size_t i = 0; i < points.size(); ++i) CHECK(shared[i] == alone[i]);
  CHECK(memo.stats().hits > 0);
}

namespace {

// A replay of a one-device program holding `mib` MiB in one large segment, paused at `record`.
std::shared_ptr<const exec::AllocatorReplay> paused(const parallel::Program& P, std::int64_t mib, std::size_t record,
                                                    bool failed = false) {
  auto r = std::make_shared<exec::AllocatorReplay>(P);
  const parallel::MemEffect e{hw::MemCategory::activations, core::Bytes{mib << 20}, parallel::TensorKind::output, 0, true};
  r->model.allocate(e, 0);
  if (failed) r->failures = 1;
  r->record = record;
  return r;
}

parallel::Program device_of(std::int64_t gib) {
  parallel::Program P;
  P.device.memory = core::Bytes{gib << 30};
  return P;
}

exec::AllocatorMemo::Prefix prefix(std::size_t n, std::uint64_t salt_from = ~std::uint64_t{0}) {
  exec::AllocatorMemo::Prefix p(n + 1);
  for (std::size_t k = 0; k <= n; ++k) p[k] = k < salt_from ? k * 7919 : k * 7919 + 1;
  return p;
}

}  // namespace

TEST_CASE("allocator memo: the furthest replay within the shared records, and one that holds for the capacity",
          "[exec][allocator][memo]") {
  const auto P = device_of(80);
  exec::AllocatorMemo memo;
  memo.add(1, 0, std::make_shared<exec::AllocatorMemo::Prefix>(prefix(100)),
           {paused(P, 1000, 50), paused(P, 3000, 75), paused(P, 5000, 95)});
  // Agrees up to record 80 (records 80.. differ): the replay at 75, not 95.
  auto m = memo.find(1, 0, prefix(100, 81), 80LL << 30);
  REQUIRE(m.replay);
  CHECK(m.replay->record == 75);
  CHECK(m.shared == 80);
  // Another family finds nothing.
  CHECK_FALSE(memo.find(2, 0, prefix(100), 80LL << 30).replay);
  // A smaller capacity: the replays whose reserved bytes fit it (nothing failed).
  m = memo.find(1, 0, prefix(100), 4000LL << 20);
  REQUIRE(m.replay);
  CHECK(m.replay->record == 75);
  m = memo.find(1, 0, prefix(100), 2000LL << 20);
  REQUIRE(m.replay);
  CHECK(m.replay->record == 50);
  CHECK_FALSE(memo.find(1, 0, prefix(100), 500LL << 20).replay);
  // One that gave a free segment back to fit a request (50 GiB cached, then 60 GiB asked for:
  // 110 GiB do not fit in 80) holds for capacities that would have given it back too, not for
  // those that would have kept it, though nothing failed and its peak (60 GiB) fits them.
  {
    auto r = std::make_shared<exec::AllocatorReplay>(P);
    const parallel::MemEffect x{hw::MemCategory::activations, core::Bytes{50LL << 30}, parallel::TensorKind::output, 0, true};
    const parallel::MemEffect y{hw::MemCategory::activations, core::Bytes{60LL << 30}, parallel::TensorKind::output, 1, true};
    r->model.allocate(x, 0);
    REQUIRE(r->model.release(x, 0));
    REQUIRE(r->model.allocate(y, 0).fits);
    REQUIRE(r->model.allocator().peak_reserved() == 60LL << 30);
    r->record = 40;
    memo.add(4, 0, std::make_shared<exec::AllocatorMemo::Prefix>(prefix(100)), {r});
    CHECK(memo.find(4, 0, prefix(100), 100LL << 30).replay);
    CHECK_FALSE(memo.find(4, 0, prefix(100), 120LL << 30).replay);
  }
  // A replay with a failed request serves its own capacity and larger ones (the failures named
  // anew from its rises), not smaller ones: a request that fitted might fail there.
  memo.add(3, 0, std::make_shared<exec::AllocatorMemo::Prefix>(prefix(100)), {paused(P, 1000, 60, /*failed=*/true)});
  CHECK(memo.find(3, 0, prefix(100), 80LL << 30).replay);
  CHECK(memo.find(3, 0, prefix(100), 81LL << 30).replay);
  CHECK_FALSE(memo.find(3, 0, prefix(100), 79LL << 30).replay);
  // Another context (another device): found, the same family.
  CHECK(memo.find(3, 1LL << 30, prefix(100), 80LL << 30).replay);
}

TEST_CASE("allocator memo: a replay set for a larger capacity and another context names its failures anew",
          "[exec][allocator][memo]") {
  // Requests of 50, 30 and 20 GiB on a device whose allocator holds 60 GiB (no free segments
  // ever cached, so its state holds for any capacity): 80 and 100 GiB reserved fail; with 90 GiB
  // only the second does, with 120 GiB none.
  parallel::Program P = device_of(61);
  P.persistent[hw::MemCategory::reserved] = core::Bytes{1LL << 30};
  exec::AllocatorReplay r(P);
  const std::int64_t gib = 1LL << 30;
  std::int64_t reserved = 0;
  int layer = 0;
  for (const std::int64_t size : {50, 30, 20}) {
    const parallel::MemEffect e{hw::MemCategory::activations, core::Bytes{size * gib}, parallel::TensorKind::output,
                                layer++, true};
    const auto got = r.model.allocate(e, 0);
    reserved += size * gib;
    if (got.fits) continue;
    exec::AllocatorReplay::Failure f{static_cast<std::size_t>(layer), 0, 0, e.category, e.bytes, r.model.state(),
                                     core::Bytes{got.new_segment}};
    if (r.rises.empty() || reserved > r.rises.back().reserved) r.rises.push_back({reserved, f});
    if (++r.failures == 1) r.failed.push_back(f);
  }
  REQUIRE(r.failures == 2);
  REQUIRE(r.rises.size() == 2);
  CHECK(r.serves(60 * gib));
  CHECK(r.serves(90 * gib));
  CHECK_FALSE(r.serves(59 * gib));
  exec::AllocatorReplay at90 = r;
  at90.set_device(core::Bytes{90 * gib}, core::Bytes{3 * gib});
  REQUIRE(at90.failed.size() == 1);
  CHECK(at90.failures == 1);
  CHECK(at90.failed[0].record == 3);  // the 20 GiB request, 100 GiB reserved
  CHECK(at90.failed[0].in_use[hw::MemCategory::reserved] == core::Bytes{3 * gib});
  CHECK(at90.peak == r.peak + core::Bytes{2 * gib});
  CHECK(at90.at_peak[hw::MemCategory::reserved] == core::Bytes{3 * gib});
  CHECK(at90.model.total() == r.model.total() + core::Bytes{2 * gib});
  exec::AllocatorReplay at120 = r;
  at120.set_device(core::Bytes{120 * gib}, core::Bytes{1 * gib});
  CHECK(at120.failures == 0);
  CHECK(at120.failed.empty());
  CHECK(at120.peak == r.peak);
}

TEST_CASE("allocator memo: bounded in bytes, the least recently used go first", "[exec][allocator][memo]") {
  const auto P = device_of(80);
  exec::AllocatorMemo memo(std::size_t{1} << 20);  // 1 MiB: a few dozen small replays
  for (std::uint64_t f = 0; f < 400; ++f) {
    memo.add(f, 0, std::make_shared<exec::AllocatorMemo::Prefix>(prefix(100)), {paused(P, 10, 90)});
    CHECK(memo.stats().bytes <= std::size_t{1} << 20);
  }
  CHECK(memo.find(399, 0, prefix(100), 80LL << 30).replay);
  CHECK_FALSE(memo.find(1, 0, prefix(100), 80LL << 30).replay);
  CHECK(memo.stats().bytes > 0);
}
