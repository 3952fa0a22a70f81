// The lowering passes' key declarations and the plan settings a sweep re-applies instead of
// lowering again (sim/sweep/runner.cpp).
#include <catch2/catch.hpp>

#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"

using namespace trainsim;

namespace {

bool under(std::string_view key, std::string_view prefix) {
  return key == prefix || (key.starts_with(prefix) && key.size() > prefix.size() && key[prefix.size()] == '.');
}

}  // namespace

TEST_CASE("the plan settings are the device, the links and the data-parallel algorithm", "[parallel][passes]") {
  for (const char* key : {"device", "device.memory", "cluster.intra_node", "cluster.inter_node.bandwidth",
                          "parallel.allreduce"})
    CHECK(parallel::is_plan_setting(key));
  // The host side follows the device, but its own keys are lowered again; so is everything
  // that shapes the ops, and keys that merely start alike.
  for (const char* key : {"cluster.pcie", "cluster.host_memory", "parallel.stage_devices", "parallel.zero",
                          "training.micro_batch", "devices", "cluster.intra_node_x", "parallel"})
    CHECK_FALSE(parallel::is_plan_setting(key));
}

TEST_CASE("no pass reads a key another pass declares a plan setting", "[parallel][passes]") {
  const auto passes = parallel::lowering_keys();
  REQUIRE(passes.size() >= 9);
  for (const auto& p : passes)
    for (std::string_view setting : p.settings)
      for (const auto& q : passes)
        for (std::string_view key : q.keys) {
          INFO(p.pass << " sets " << setting << ", " << q.pass << " reads " << key);
          CHECK_FALSE((under(key, setting) || under(setting, key)));
        }
}

TEST_CASE("a plan lowered for one device and network serves another once its settings are applied",
          "[parallel][passes]") {
  // Data parallel with optimizer offload, so the host side (PCIe, host memory and its
  // bandwidth, which default by device) is among what changes.
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  const std::vector<std::string> common = {"parallel.data=4", "cluster={nodes: 2, gpus_per_node: 2}",
                                           "training.offload.optimizer=cpu"};
  auto load = [&](std::vector<std::string> sets) {
    sets.insert(sets.begin(), common.begin(), common.end());
    return scenario::load_scenario(file, sets);
  };
  const auto a = load({"device=a100-40gb", "parallel.allreduce=ring", "cluster.inter_node=ib-hdr"});
  const auto b = load({"device=h100-80gb", "parallel.allreduce=tree", "cluster.inter_node=ib-ndr"});
  auto reused = parallel::lower(a, {.compress = true});
  parallel::apply_plan_settings(reused, b);
  const auto fresh = parallel::lower(b, {.compress = true});

  CHECK(reused.data_allreduce == fresh.data_allreduce);
  CHECK(reused.inter_node.bandwidth.bytes_per_s == fresh.inter_node.bandwidth.bytes_per_s);
  CHECK(reused.pcie.bandwidth.bytes_per_s == fresh.pcie.bandwidth.bytes_per_s);
  CHECK(reused.host_capacity == fresh.host_capacity);
  CHECK(reused.host_bandwidth_per_gpu.bytes_per_s == fresh.host_bandwidth_per_gpu.bytes_per_s);
  REQUIRE(reused.programs.size() == fresh.programs.size());
  for (std::size_t p = 0; p < fresh.programs.size(); ++p) {
    CHECK(reused.programs[p].device.name == fresh.programs[p].device.name);
    CHECK(reused.programs[p].persistent.total() == fresh.programs[p].persistent.total());
    CHECK(reused.programs[p].model_states.total() == fresh.programs[p].model_states.total());
    CHECK(reused.programs[p].ops.size() == fresh.programs[p].ops.size());
  }
  const auto ta = exec::play(reused), tb = exec::play(fresh);
  CHECK(ta.step_time.ns == tb.step_time.ns);
  CHECK(ta.devices[0].peak == tb.devices[0].peak);
  CHECK(ta.step_time.ns != exec::play(parallel::lower(a, {.compress = true})).step_time.ns);
}

TEST_CASE("the pipeline pass tells the player how far apart its steady state repeats",
          "[parallel][passes]") {
  // The player compares marks this many units of a template apart (sim/exec/steady_state.cpp);
  // an interleaved schedule repeats only a group of as many micro-batches as stages later.
  const std::string file =
      std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/parallel/04_pipeline_fits.yaml";
  auto lowered = [&](std::vector<std::string> sets) {
    return parallel::lower(scenario::load_scenario(file, sets), {.compress = true});
  };
  const auto one_f_one_b = lowered({});
  CHECK(one_f_one_b.steady_state);
  CHECK(one_f_one_b.steady_lag == 1);
  const auto interleaved = lowered({"parallel.schedule=interleaved", "parallel.virtual_stages=2"});
  CHECK(interleaved.steady_state);
  CHECK(interleaved.steady_lag == 4);
  // Megatron-Core's groups of N micro-batches repeat N micro-batches later.
  const auto grouped = lowered({"parallel.schedule=interleaved", "parallel.virtual_stages=2",
                                "parallel.microbatch_group_size=8"});
  CHECK(grouped.steady_lag == 8);
  const auto gpipe = lowered({"parallel.schedule=gpipe"});
  CHECK_FALSE(gpipe.steady_state);
  CHECK(gpipe.steady_lag == 1);
}

TEST_CASE("the data pass marks the all-reduces the data-parallel algorithm prices",
          "[parallel][passes]") {
  // The player prices them with Plan::data_allreduce and pauses its loop snapshots before the
  // ops they wait for; ZeRO's reduce-scatters and everything else stay unmarked.
  const std::string file = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  for (const char* zero : {"parallel.zero=0", "parallel.zero=2"}) {
    const auto plan = parallel::lower(
        scenario::load_scenario(file, {"parallel.data=4", "cluster.gpus_per_node=4", zero}),
        {.compress = true});
    std::size_t marked = 0;
    for (const auto& P : plan.programs)
      for (const auto& op : P.ops) {
        const bool ddp =
            op.kind == parallel::OpKind::all_reduce && op.purpose == parallel::CommPurpose::data;
        CHECK(op.data_reduction == ddp);
        marked += op.data_reduction ? 1 : 0;
      }
    CHECK((marked > 0) == (std::string(zero) == "parallel.zero=0"));
  }
}
