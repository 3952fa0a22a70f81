// Lowering against published closed forms: ZeRO model-state memory, pipeline bubbles and
// in-flight micro-batches, tensor/sequence-parallel activation memory.
#include <catch2/catch.hpp>

#include "../support/fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/report/summary.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using hw::MemCategory;

namespace {

scenario::TrainingSpec mixed_adam(std::int64_t micro_batch, std::int64_t accumulation) {
  scenario::TrainingSpec t;
  t.micro_batch = micro_batch;
  t.gradient_accumulation = accumulation;
  t.precision = scenario::Precision::bf16;
  t.optimizer = scenario::Optimizer::adam;
  return t;
}

models::Model uniform(int layers, std::int64_t params, std::int64_t saved, std::int64_t output,
                      double flops) {
  std::vector<models::Layer> ls;
  for (int i = 0; i < layers; ++i)
    ls.push_back(plain_layer("l" + std::to_string(i), params, saved, output, flops));
  return chain_model(ls);
}

}  // namespace

TEST_CASE("ZeRO model-state memory matches Rajbhandari et al. 2020 Figure 1", "[parallel][oracle][zero]") {
  // 7.5B parameters, 64-way data parallel, mixed-precision Adam (K = 12):
  // stage 0: 16 psi = 120 GB; 1: 4 psi + 12 psi / 64 = 31.4 GB; 2: 2 psi + 14 psi / 64 = 16.6 GB;
  // 3: 16 psi / 64 = 1.9 GB.
  const auto model = uniform(75, 100'000'000, 0, 0, 0);
  const double expected_gb[4] = {120.0, 31.40625, 16.640625, 1.875};
  for (int zero = 0; zero <= 3; ++zero) {
    scenario::ParallelSpec p;
    p.data = 64;
    p.zero = zero;
    const auto s = make_scenario(model, ideal_device(1LL << 40), mixed_adam(1, 1), p);
    const auto plan = parallel::lower(s);
    const auto& ms = plan.programs[0].model_states;
    const auto states = ms[MemCategory::weights] + ms[MemCategory::gradients] + ms[MemCategory::optimizer_states];
    CHECK(static_cast<double>(states.value) / 1e9 == Approx(expected_gb[zero]).epsilon(1e-12));
  }
}

TEST_CASE("data parallelism leaves per-device model states and peak unchanged", "[parallel][oracle]") {
  const auto model = uniform(8, 1'000'000, 50'000, 10'000, 1e9);
  const auto one = make_scenario(model, ideal_device(1LL << 40), mixed_adam(4, 2));
  scenario::ParallelSpec p;
  p.data = 16;
  const auto many = make_scenario(model, ideal_device(1LL << 40), mixed_adam(4, 2), p);
  const auto plan1 = parallel::lower(one), plan16 = parallel::lower(many);
  CHECK(plan1.programs[0].model_states.total() == plan16.programs[0].model_states.total());
  const auto t1 = exec::play(plan1), t16 = exec::play(plan16);
  // Only the all-reduce's bucket buffer is added.
  CHECK(t16.devices[0].peak.value - t1.devices[0].peak.value <= p.bucket_size.value);
  CHECK(plan16.devices_total == 16);
}

namespace {
// The bucket buffers a program books: one allocation per reduction bucket.
std::vector<core::Bytes> bucket_buffers(const parallel::Program& P) {
  std::vector<core::Bytes> out;
  for (const auto& op : P.ops)
    for (std::uint32_t e = op.alloc_begin; e < op.alloc_end; ++e)
      if (P.effects[e].tensor == parallel::TensorKind::bucket) out.push_back(P.effects[e].bytes);
  return out;
}
}  // namespace

TEST_CASE("bucket_buffers: in_place reduces in the gradients' memory where they are whole", "[parallel][zero]") {
  // Four layers of 1M parameters: 2 MB of bf16 gradients each; 4 MB buckets hold two layers, so
  // the one accumulated backward flushes two buckets of 4 MB (ZeRO-2 reduce-scatters every
  // micro-batch: 2 micro-batches x 2 buckets).
  const auto model = uniform(4, 1'000'000, 50'000, 10'000, 1e9);
  auto lowered = [&](int zero, scenario::BucketBuffers b) {
    scenario::ParallelSpec p;
    p.data = 4;
    p.zero = zero;
    p.bucket_size = core::Bytes{4'000'000};
    p.bucket_buffers = b;
    return parallel::lower(make_scenario(model, ideal_device(1LL << 40), mixed_adam(1, 2), p));
  };
  using scenario::BucketBuffers;
  for (int zero : {0, 1}) {
    const auto transient = lowered(zero, BucketBuffers::transient);
    const auto in_place = lowered(zero, BucketBuffers::in_place);
    CHECK(bucket_buffers(transient.programs[0]) == std::vector<core::Bytes>(2, core::Bytes{4'000'000}));
    CHECK(bucket_buffers(in_place.programs[0]).empty());
    // The same reductions run either way; only the buffer is gone.
    CHECK(transient.programs[0].ops.size() == in_place.programs[0].ops.size());
    const auto t = exec::play(transient), i = exec::play(in_place);
    CHECK(t.devices[0].peak - i.devices[0].peak <= core::Bytes{4'000'000});
    CHECK(t.step_time == i.step_time);
  }
  // ZeRO-2 keeps a shard of the gradients: a bucket's full gradients still need their buffer.
  CHECK(bucket_buffers(lowered(2, BucketBuffers::in_place).programs[0]).size() == 4);
  CHECK(bucket_buffers(lowered(2, BucketBuffers::persistent).programs[0]).size() == 4);
}

TEST_CASE("bucket_buffers: persistent keeps PyTorch DDP's copy of the gradients for the run", "[parallel]") {
  // 4 layers x 1M parameters, bf16 gradients: 8 MB of gradients, and DDP's buckets copy them
  // all when the model is wrapped. The copy is a model state held from before the step, so
  // (without the allocator model) the peak is exactly 8 MB above in_place's; ZeRO-2 shards the
  // gradients and keeps no copy.
  const auto model = uniform(4, 1'000'000, 50'000, 10'000, 1e9);
  auto lowered = [&](int zero, scenario::BucketBuffers b, std::int64_t data = 4) {
    scenario::ParallelSpec p;
    p.data = data;
    p.zero = zero;
    p.bucket_size = core::Bytes{4'000'000};
    p.bucket_buffers = b;
    return parallel::lower(make_scenario(model, ideal_device(1LL << 40), mixed_adam(1, 2), p));
  };
  using scenario::BucketBuffers;
  const core::Bytes grads{8'000'000};
  for (int zero : {0, 1}) {
    const auto kept = lowered(zero, BucketBuffers::persistent);
    const auto in_place = lowered(zero, BucketBuffers::in_place);
    const auto& P = kept.programs[0];
    CHECK(bucket_buffers(P).empty());
    CHECK(P.persistent[MemCategory::gradients] == grads);
    CHECK(P.model_states[MemCategory::gradients] == grads + grads);
    CHECK(P.model_states.total() - in_place.programs[0].model_states.total() == grads);
    CHECK(exec::play(kept).devices[0].peak - exec::play(in_place).devices[0].peak == grads);
  }
  const auto z2 = lowered(2, BucketBuffers::persistent);
  CHECK(z2.programs[0].persistent[MemCategory::gradients] == core::Bytes{});
  CHECK(z2.programs[0].model_states[MemCategory::gradients] == core::Bytes{2'000'000});
  // Without data parallelism there is no DDP and nothing to reduce.
  CHECK(lowered(0, BucketBuffers::persistent, 1).programs[0].model_states[MemCategory::gradients] == grads);
}

namespace {
double bubble(scenario::Schedule sched, int p, int m, int v) {
  // Compute-bound uniform layers, free communication: forward 1 ms, backward 2 ms per layer.
  const auto model = uniform(p * v * 2, 0, 0, 0, 1e9);
  scenario::ParallelSpec par;
  par.pipeline = p;
  par.schedule = sched;
  par.virtual_stages = v;
  const auto s = make_scenario(model, ideal_device(1LL << 40), mixed_adam(1, m), par);
  const auto plan = parallel::lower(s);
  const auto tl = exec::play(plan);
  return report::summarize(s, plan, tl, false).bubble_fraction;
}
}  // namespace

TEST_CASE("the pipeline bubble is (p - 1) / (m + p - 1) with free communication", "[parallel][oracle][pipeline]") {
  for (int p : {2, 4, 8})
    for (int m : {1, 4, 16}) {
      const double expected = (p - 1.0) / (m + p - 1.0);
      CHECK(bubble(scenario::Schedule::gpipe, p, m, 1) == Approx(expected).epsilon(1e-9));
      CHECK(bubble(scenario::Schedule::one_f_one_b, p, m, 1) == Approx(expected).epsilon(1e-9));
    }
}

TEST_CASE("interleaving v chunks divides the bubble by v", "[parallel][oracle][pipeline]") {
  // Narayanan et al. 2021: bubble time (p - 1) / v of a micro-batch's time, so the fraction
  // is (p - 1) / (v m + p - 1).
  for (int p : {2, 4})
    for (int v : {2, 4})
      for (int m : {p, 2 * p, 4 * p}) {
        const double expected = (p - 1.0) / (v * m + p - 1.0);
        CHECK(bubble(scenario::Schedule::interleaved, p, m, v) == Approx(expected).epsilon(1e-9));
      }
}

TEST_CASE("1F1B stage s holds p - s micro-batches of activations, GPipe holds all m", "[parallel][oracle][pipeline]") {
  const int p = 4, m = 8;
  const std::int64_t saved = 1'000'000;  // per sample per layer, 2 layers per stage
  const auto model = uniform(2 * p, 0, saved, 0, 1e9);
  for (auto sched : {scenario::Schedule::one_f_one_b, scenario::Schedule::gpipe}) {
    scenario::ParallelSpec par;
    par.pipeline = p;
    par.schedule = sched;
    const auto s = make_scenario(model, ideal_device(1LL << 40), mixed_adam(1, m), par);
    const auto tl = exec::play(parallel::lower(s));
    for (int stage = 0; stage < p; ++stage) {
      const std::int64_t in_flight = sched == scenario::Schedule::gpipe ? m : p - stage;
      CHECK(tl.devices[stage].at_peak[MemCategory::activations].value == in_flight * 2 * saved);
    }
  }
}

TEST_CASE("the pipeline peak per stage never exceeds the single-device peak", "[parallel][property]") {
  const auto model = uniform(8, 1'000'000, 200'000, 20'000, 1e9);
  const auto one = exec::play(parallel::lower(make_scenario(model, ideal_device(1LL << 40), mixed_adam(2, 8))));
  for (int p : {2, 4, 8}) {
    scenario::ParallelSpec par;
    par.pipeline = p;
    const auto tl = exec::play(parallel::lower(make_scenario(model, ideal_device(1LL << 40), mixed_adam(2, 8), par)));
    for (const auto& d : tl.devices) CHECK(d.peak <= one.devices[0].peak);
  }
}

TEST_CASE("each ZeRO stage uses no more memory than the one before", "[parallel][property][zero]") {
  const auto model = uniform(6, 5'000'000, 100'000, 10'000, 1e9);
  core::Bytes previous{INT64_MAX};
  for (int zero = 0; zero <= 3; ++zero) {
    scenario::ParallelSpec p;
    p.data = 8;
    p.zero = zero;
    p.bucket_size = core::Bytes{1'000'000};
    const auto tl = exec::play(parallel::lower(make_scenario(model, ideal_device(1LL << 40), mixed_adam(1, 2), p)));
    CHECK(tl.devices[0].peak <= previous);
    previous = tl.devices[0].peak;
  }
}

namespace {
const std::string kScenarios = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/parallel/";
}  // namespace

TEST_CASE("limits.max_ops bounds the lowered plan's real ops, refused where the batch is written", "[parallel][limits]") {
  // ZeRO-3's per-layer gathers do not fold into macro ops: the plan grows with every micro-batch.
  const std::vector<std::string> sets = {"training.gradient_accumulation=40"};
  const auto s = scenario::load_scenario(kScenarios + "05_zero3.yaml", sets);
  const std::int64_t held = parallel::lower(s, {.compress = true}).held_ops();
  REQUIRE(held > 40 * 32 * 2);  // above the bound validation checks (micro-batches x forward and backward)
  auto with_limit = [&](std::int64_t limit) {
    auto all = sets;
    all.push_back("limits.max_ops=" + std::to_string(limit));
    return scenario::load_scenario(kScenarios + "05_zero3.yaml", all);
  };
  CHECK(parallel::lower(with_limit(held), {.compress = true}).held_ops() == held);
  try {
    (void)parallel::lower(with_limit(held - 1), {.compress = true});
    FAIL("a plan one op above the limit was lowered");
  } catch (const core::ConfigError& e) {
    CHECK(e.where().file == "--set training.gradient_accumulation=40");
    CHECK(e.where().column == 32);
    CHECK(e.key_path() == "training.gradient_accumulation");
    CHECK_THAT(e.detail(), Catch::Contains("more than limits.max_ops = " + std::to_string(held - 1)));
    CHECK_THAT(e.detail(), Catch::Contains("reached at stage 0 of 1"));
  }
}

TEST_CASE("a long pipelined step whose layers fold into macro ops plays under the default op limit", "[parallel][limits]") {
  // GPT-3 175B, global batch 49,152 on 8 replicas: 6,144 micro-batches on 16 stages. The estimate
  // the limit once used (micro-batches x (2 x layers + 8)) put it at 1.2 million ops; the plan
  // holds under 200,000.
  const auto s = scenario::load_scenario(kScenarios + "06_gpt3_175b_megatron.yaml", {"training.global_batch=49152"});
  REQUIRE(s.training.gradient_accumulation == 6144);
  const auto plan = parallel::lower(s, {.compress = true});
  CHECK(plan.held_ops() < 200'000);
  CHECK(s.limits.max_ops == scenario::kDefaultMaxOps);
}

TEST_CASE("with buckets reduced in place, the links and the all-reduce algorithm leave memory alone", "[parallel][allocator]") {
  // The caching-allocator model sees the same requests in the same order whatever the network:
  // only the transient bucket buffers' frees (when each reduction ends) depended on it, and here
  // they change where a later request finds a cached block. (With 16-bit gradients: the fp32
  // ones of Megatron's main_grad move the peak to where no bucket is in flight.)
  auto play = [&](const std::string& algo, const std::string& link, const std::string& buffers) {
    const auto s = scenario::load_scenario(
        kScenarios + "06_gpt3_175b_megatron.yaml",
        {"training.global_batch=256", "training.recompute=selective", "training.accumulate_grads=fused",
         "parallel.allreduce=" + algo,
         "cluster.inter_node=" + link, "parallel.bucket_buffers=" + buffers});
    REQUIRE(s.training.caching_allocator);
    return exec::play(parallel::lower(s));
  };
  auto same_memory = [](const exec::Timeline& a, const exec::Timeline& b) {
    REQUIRE(a.devices.size() == b.devices.size());
    for (std::size_t d = 0; d < a.devices.size(); ++d)
      if (a.devices[d].peak != b.devices[d].peak || a.devices[d].allocated_peak != b.devices[d].allocated_peak ||
          a.devices[d].reserved_peak != b.devices[d].reserved_peak)
        return false;
    return true;
  };
  const auto a = play("ring", "ib-hdr", "in_place"), b = play("tree", "ib-ndr", "in_place");
  CHECK(a.step_time != b.step_time);
  CHECK(same_memory(a, b));
  CHECK_FALSE(same_memory(play("ring", "ib-hdr", "transient"), play("tree", "ib-ndr", "transient")));
}

TEST_CASE("bucket_buffers: persistent raises a DDP step's peak by the gradients, as PyTorch measured", "[parallel][allocator]") {
  // PyTorch's pull request that made gradients views into DDP's buckets (#41954) measured a
  // ResNet with ~97 MB of fp32 parameters peaking ~100 MB lower (3089 -> 2988 MB): the copy is
  // the gradients' size. Here GPT-2 small in fp16 on 2 V100s, allocator model on: the copy is
  // 124,439,808 x 2 bytes, one block, so the peak rises by it rounded up to the allocator's
  // 2 MiB segment granularity.
  const std::string quickstart = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  auto peak = [&](const std::string& buffers) {
    const auto s = scenario::load_scenario(
        quickstart, {"parallel.data=2", "cluster.gpus_per_node=2", "parallel.bucket_buffers=" + buffers});
    REQUIRE(s.training.caching_allocator);
    return exec::play(parallel::lower(s)).devices[0].peak;
  };
  const std::int64_t grads = 124'439'808LL * 2, segment = 2LL << 20;
  CHECK((peak("persistent") - peak("in_place")).value == (grads + segment - 1) / segment * segment);
}
