// Offload (ZeRO-Offload / ZeRO-Infinity) against hand-computed figures: which bytes leave the
// GPU for host memory, PCIe copies and the CPU optimizer on the timeline, host memory per node.
#include <catch2/catch.hpp>

#include <algorithm>

#include "../support/fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/parallel/offload.hpp"
#include "sim/report/summary.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using hw::MemCategory;
using parallel::OpKind;

namespace {

scenario::TrainingSpec mixed_adam(scenario::OffloadTarget optimizer, scenario::OffloadTarget parameters = {}) {
  scenario::TrainingSpec t;
  t.micro_batch = 1;
  t.gradient_accumulation = 1;
  t.precision = scenario::Precision::bf16;
  t.optimizer = scenario::Optimizer::adam;
  t.offload.optimizer = optimizer;
  t.offload.parameters = parameters;
  return t;
}

models::Model uniform(int layers, std::int64_t params, double flops = 1e9) {
  std::vector<models::Layer> ls;
  for (int i = 0; i < layers; ++i) ls.push_back(plain_layer("l" + std::to_string(i), params, 1000, 1000, flops));
  return chain_model(ls);
}

// A scenario with a known host side: PCIe 1 GB/s + 10 us, 30 GB/s of DRAM per node, 1 TB of it.
scenario::Scenario offload_scenario(models::Model m, scenario::TrainingSpec t, scenario::ParallelSpec p = {}) {
  auto s = make_scenario(std::move(m), ideal_device(1LL << 40), t, p);
  s.cluster.pcie = hw::LinkSpec{"test-pcie", core::Bandwidth{1e9}, core::Duration{10'000}, ""};
  s.cluster.host_memory_bandwidth = core::Bandwidth{30e9 * static_cast<double>(s.cluster.gpus_per_node)};
  s.cluster.host_memory = core::Bytes{1'000'000'000'000};
  return s;
}

std::vector<std::size_t> ops_of(const parallel::Program& P, OpKind kind) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < P.ops.size(); ++i)
    if (P.ops[i].kind == kind) out.push_back(i);
  return out;
}

constexpr auto cpu = scenario::OffloadTarget::cpu;
constexpr auto none = scenario::OffloadTarget::none;

}  // namespace

TEST_CASE("optimizer offload moves 12 B/param of Adam states and 4 B/param of fp32 gradients to the host",
          "[parallel][offload]") {
  // 4 layers x 1e6 parameters, mixed-precision Adam: 2 + 2 + 12 = 16 B/param on the GPU without
  // offload; with it the GPU keeps the 2 B/param weights, the host 12 + 4 = 16 B/param.
  const auto model = uniform(4, 1'000'000);
  const auto on_gpu = parallel::lower(offload_scenario(model, mixed_adam(none)));
  const auto off = parallel::lower(offload_scenario(model, mixed_adam(cpu)));
  const auto& g = on_gpu.programs[0];
  const auto& o = off.programs[0];
  CHECK(g.model_states.total().value == 64'000'000);
  CHECK(g.host.total().value == 0);
  CHECK(o.persistent[MemCategory::weights].value == 8'000'000);
  CHECK(o.persistent[MemCategory::optimizer_states].value == 0);
  CHECK(o.model_states.total().value == 8'000'000);
  CHECK(o.host[MemCategory::optimizer_states].value == 48'000'000);
  CHECK(o.host[MemCategory::gradients].value == 16'000'000);
  CHECK(o.host[MemCategory::weights].value == 0);
  CHECK(off.host_per_node.value == 64'000'000);  // one GPU on its node

  // Played: the GPU never holds optimizer states, and gradients only while in flight.
  const auto tl = exec::play(off);
  CHECK(tl.devices[0].at_peak[MemCategory::optimizer_states].value == 0);
  CHECK(tl.devices[0].peak < exec::play(on_gpu).devices[0].peak);
  CHECK(tl.host_fits);
  // Each layer has 2 MB of bf16 gradients; the 25 MB bucket collects all four, so one copy
  // carries 8 MB to the host.
  const auto d2h = ops_of(o, OpKind::pcie_d2h);
  REQUIRE(d2h.size() == 1);
  CHECK(o.ops[d2h[0]].comm.bytes.value == 8'000'000);
}

TEST_CASE("fp32 training offloads the optimizer's fp32 weight copy too", "[parallel][offload]") {
  auto t = mixed_adam(cpu);
  t.precision = scenario::Precision::fp32;
  const auto plan = parallel::lower(offload_scenario(uniform(2, 1'000'000), t));
  const auto& h = plan.programs[0].host;
  CHECK(h[MemCategory::optimizer_states].value == 16'000'000);  // m, v: 8 B/param
  CHECK(h[MemCategory::gradients].value == 8'000'000);          // fp32 gradients
  CHECK(h[MemCategory::weights].value == 8'000'000);            // the fp32 copy the CPU updates
  CHECK(plan.programs[0].persistent[MemCategory::weights].value == 8'000'000);  // fp32 on the GPU
}

TEST_CASE("with ZeRO each data rank keeps 1/d of the host states, a node sums its GPUs", "[parallel][offload][zero]") {
  scenario::ParallelSpec p;
  p.data = 4;
  p.zero = 2;
  const auto plan = parallel::lower(offload_scenario(uniform(4, 1'000'000), mixed_adam(cpu), p));
  const auto& h = plan.programs[0].host;
  CHECK(h[MemCategory::optimizer_states].value == 12'000'000);
  CHECK(h[MemCategory::gradients].value == 4'000'000);
  CHECK(plan.host_per_node.value == 4 * 16'000'000);  // 4 GPUs on the node
  // Gradients are reduced then copied: each rank copies its quarter of every bucket.
  for (auto i : ops_of(plan.programs[0], OpKind::pcie_d2h))
    CHECK(plan.programs[0].ops[i].comm.bytes.value == 2'000'000);
  // The updated bf16 shard comes back, then ZeRO-2 all-gathers the weights.
  const auto h2d = ops_of(plan.programs[0], OpKind::pcie_h2d);
  REQUIRE(h2d.size() == 1);
  CHECK(plan.programs[0].ops[h2d[0]].comm.bytes.value == 2'000'000);
}

TEST_CASE("PCIe copies and the CPU optimizer take bytes / bandwidth (+ latency) on the timeline",
          "[parallel][offload][oracle]") {
  // One layer of 1e6 parameters: its 2 MB of bf16 gradients cross PCIe at 1 GB/s + 10 us
  // = 2.010 ms; the CPU streams (4 + 2 x 12 + 2) B x 1e6 = 30 MB through 30 GB/s = 1 ms; the
  // 2 MB of updated weights come back in 2.010 ms, each after the other.
  const auto s = offload_scenario(uniform(1, 1'000'000), mixed_adam(cpu));
  const auto plan = parallel::lower(s);
  const auto tl = exec::play(plan);
  const auto& P = plan.programs[0];
  const auto& d = tl.devices[0];
  const auto d2h = ops_of(P, OpKind::pcie_d2h), h2d = ops_of(P, OpKind::pcie_h2d);
  const auto opt = ops_of(P, OpKind::cpu_optimizer), bwd = ops_of(P, OpKind::backward);
  REQUIRE(d2h.size() == 1);
  REQUIRE(h2d.size() == 1);
  REQUIRE(opt.size() == 1);
  REQUIRE(bwd.size() == 1);
  CHECK((d.finish[d2h[0]] - d.start[d2h[0]]).ns == 2'010'000);
  CHECK((d.finish[opt[0]] - d.start[opt[0]]).ns == 1'000'000);
  CHECK((d.finish[h2d[0]] - d.start[h2d[0]]).ns == 2'010'000);
  CHECK(d.start[d2h[0]] == d.finish[bwd[0]]);
  CHECK(d.start[opt[0]] == d.finish[d2h[0]]);
  CHECK(d.start[h2d[0]] == d.finish[opt[0]]);
  CHECK(tl.step_time.ns == d.finish[h2d[0]].ns);
  CHECK(P.ops[opt[0]].stream == parallel::StreamKind::host);
  // Reported as communication kinds of their own, all exposed (nothing to overlap with here).
  const auto r = report::summarize(s, plan, tl, false);
  const auto pcie = std::find_if(r.comm.begin(), r.comm.end(), [](const auto& c) { return c.kind == "offload_pcie"; });
  const auto cpu_opt = std::find_if(r.comm.begin(), r.comm.end(), [](const auto& c) { return c.kind == "offload_cpu_optimizer"; });
  REQUIRE(pcie != r.comm.end());
  REQUIRE(cpu_opt != r.comm.end());
  CHECK(pcie->time_s == Approx(4.020e-3).epsilon(1e-9));
  CHECK(pcie->exposed_s == Approx(4.020e-3).epsilon(1e-9));
  CHECK(cpu_opt->time_s == Approx(1e-3).epsilon(1e-9));
}

TEST_CASE("gradient copies overlap the backward of earlier layers", "[parallel][offload]") {
  // 4 layers of 20 MB bf16 gradients and a 20 MB bucket: each layer's copy starts when its
  // backward ends, while the backward of the layers before it still runs (DeepSpeed's per-bucket
  // overlap); the copies queue on the PCIe stream (20.01 ms each vs 2 ms of backward).
  auto s = offload_scenario(uniform(4, 10'000'000), mixed_adam(cpu));
  s.parallel.bucket_size = core::Bytes{20'000'000};
  const auto plan = parallel::lower(s);
  const auto tl = exec::play(plan);
  const auto& P = plan.programs[0];
  const auto d2h = ops_of(P, OpKind::pcie_d2h), bwd = ops_of(P, OpKind::backward);
  REQUIRE(d2h.size() == 4);
  CHECK(tl.devices[0].start[d2h[0]] < tl.devices[0].finish[bwd.back()]);
}

TEST_CASE("parameter offload fetches each layer's weights from the host before its forward and backward",
          "[parallel][offload][zero]") {
  scenario::ParallelSpec p;
  p.zero = 3;  // one GPU: the shard is the whole layer
  const auto s = offload_scenario(uniform(3, 1'000'000), mixed_adam(cpu, cpu), p);
  const auto plan = parallel::lower(s);
  const auto& P = plan.programs[0];
  CHECK(P.persistent[MemCategory::weights].value == 0);
  CHECK(P.host[MemCategory::weights].value == 6'000'000);  // bf16 weights, 2 B/param
  CHECK(P.host.total().value == 3'000'000 * (2 + 12 + 4));
  const auto h2d = ops_of(P, OpKind::pcie_h2d);
  CHECK(h2d.size() == 6);  // 3 forwards + 3 backwards; the update stays on the host
  for (auto i : h2d) CHECK(P.ops[i].comm.bytes.value == 2'000'000);
  const auto tl = exec::play(plan);
  // Only the layers in use (at most the current one and the prefetched next) are on the GPU.
  CHECK(tl.devices[0].at_peak[MemCategory::weights] <= core::Bytes{4'000'000});
  // Each fetch takes 2 MB / 1 GB/s + 10 us.
  for (auto i : h2d) CHECK((tl.devices[0].finish[i] - tl.devices[0].start[i]).ns == 2'010'000);
}

TEST_CASE("host memory per node follows the placement of pipeline stages on nodes", "[parallel][offload]") {
  std::vector<parallel::Program> programs(2);
  programs[0].host[MemCategory::optimizer_states] = core::Bytes{10};
  programs[1].host[MemCategory::optimizer_states] = core::Bytes{30};
  // Pipeline stride 1: ranks alternate stages 0, 1, 0, 1: two GPUs a node hold 10 + 30.
  auto a = parallel::host_per_node(programs, 1, 2, 4);
  CHECK(a.fullest.value == 40);
  CHECK(a.stage == 1);
  // Pipeline stride 2 (data first): ranks 0, 1 run stage 0, ranks 2, 3 stage 1.
  auto b = parallel::host_per_node(programs, 2, 2, 4);
  CHECK(b.fullest.value == 60);
  CHECK(b.stage == 1);
  // Nothing offloaded: no demand, no stage.
  std::vector<parallel::Program> empty(2);
  CHECK(parallel::host_per_node(empty, 1, 2, 4).stage == -1);
}

TEST_CASE("a node whose host memory is too small is an OOM with cause host_memory", "[parallel][offload][exec]") {
  auto s = offload_scenario(uniform(4, 1'000'000), mixed_adam(cpu));
  s.cluster.host_memory = core::Bytes{63'999'999};  // one byte short of 16 B x 4e6
  const auto plan = parallel::lower(s);
  const auto tl = exec::play(plan);
  CHECK_FALSE(tl.host_fits);
  CHECK(tl.devices[0].fits);  // the GPU itself fits
  REQUIRE(tl.ooms.size() == 1);
  CHECK(tl.ooms[0].cause == exec::OomCause::host_memory);
  CHECK(tl.ooms[0].requested.value == 64'000'000);
  CHECK(tl.ooms[0].capacity.value == 63'999'999);
  const auto r = report::summarize(s, plan, tl, false);
  CHECK_FALSE(r.fits);
  CHECK(r.ooms[0].cause == "host_memory");
  CHECK(r.ooms[0].op == "host_states");
  s.cluster.host_memory = core::Bytes{64'000'000};  // exactly enough
  CHECK(exec::play(parallel::lower(s)).host_fits);
}

TEST_CASE("ZeRO-Offload trains a 10B model on one V100-32GB (Ren et al. 2021)", "[parallel][offload][oracle]") {
  // The paper's headline: a 10-billion-parameter model on a single 32 GB V100 with ZeRO-Offload,
  // where without offload its 16 B/param of model states alone exceed the GPU.
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/single_gpu/04_zero_offload.yaml";
  const auto with = scenario::load_scenario(file);
  CHECK(with.model.parameters() > 10'000'000'000);
  const auto plan = parallel::lower(with);
  const auto tl = exec::play(plan);
  const auto r = report::summarize(with, plan, tl, false);
  CHECK(r.fits);
  CHECK(r.devices[0].host.total().value == with.model.parameters() * 16);
  const auto without = scenario::load_scenario(file, {"training.offload.optimizer=none"});
  const auto plan0 = parallel::lower(without);
  const auto tl0 = exec::play(plan0);
  REQUIRE_FALSE(tl0.ooms.empty());
  CHECK(tl0.ooms[0].cause == exec::OomCause::model_states);
}
