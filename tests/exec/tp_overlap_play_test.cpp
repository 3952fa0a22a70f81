// parallel.tp_comm_overlap: a layer's compute op with and without Transformer Engine's
// userbuffers overlap, by hand on an ideal device, and the marking on a lowered NeMo layout.
#include <catch2/catch.hpp>

#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using parallel::Op;
using parallel::OpKind;
using parallel::TpOverlap;

namespace {

// An attention layer's op on 4 tensor ranks: 1 TFLOP/s in FP8, no launch overhead, infinite
// memory bandwidth (the ring reduce-scatter's summing kernel costs nothing), no SM count (no
// tile quantization, no SM sharing). The tensor link moves a 2 MiB chunk in exactly 1 ms.
struct Fixture {
  parallel::Plan plan;
  Op op;
  Fixture(OpKind kind, std::vector<cost::GemmShape> gemms) {
    hw::DeviceSpec d = testing::ideal_device(80LL << 30);
    d.peak_fp8 = core::FlopRate{1e12};
    parallel::Program P;
    P.device = d;
    P.gemm_shapes = std::move(gemms);
    plan.math = cost::MathMode::fp8;
    plan.intra_node = testing::free_link();
    plan.intra_node.bandwidth = core::Bandwidth{2097152.0 / 1e-3};
    for (const auto& g : P.gemm_shapes) op.work.flops += g.flops();
    op.work.matmul = true;
    op.kind = kind;
    op.kernels = static_cast<std::int32_t>(P.gemm_shapes.size());
    op.gemm_begin = 0;
    op.gemm_end = static_cast<std::uint32_t>(P.gemm_shapes.size());
    op.tp_collectives = 1;
    op.tp_sequence_parallel = true;
    op.comm = parallel::CommWork{core::Bytes{8LL << 20}, 4};
    plan.programs.push_back(std::move(P));
  }
  double ms(TpOverlap o) {
    op.tp_overlap = o;
    return core::to_seconds(exec::op_duration(plan, plan.programs[0], op)) * 1e3;
  }
  double tp_ms(TpOverlap o) {
    op.tp_overlap = o;
    return core::to_seconds(exec::tensor_parallel_time(plan, plan.programs[0], op)) * 1e3;
  }
};

}  // namespace

TEST_CASE("tp_comm_overlap: a forward's all-gather hidden under QKV, the reduce-scatter's sends "
          "beyond proj's chunks exposed", "[exec][tp_overlap]") {
  // QKV: 2 x 4096 x 1024 x 1024 = 8.590 GFLOP = 8.590 ms; proj: 2 x 4096 x 1024 x 256 =
  // 2.147 ms; the op's kernels: 10.737 ms.
  Fixture f(OpKind::forward, {{4096, 1024, 1024}, {4096, 1024, 256}});
  // All-gather by ring exchange, 4 chunks: QKV chunks of 2.147 ms, transfers of 1 ms (8 MiB /
  // 4 at 2 MiB/ms), each received before its chunk starts: 4 x 2.147 ms, nothing exposed.
  // Reduce-scatter by ring exchange: proj chunks of 0.537 ms; 3 sends of 1 ms after chunks
  // 0, 1, 2: they end at 0.537 + 3 x 1 = 3.537 ms, proj alone 2.147 ms: 3 x (1 - 0.537) =
  // 1.389 ms exposed.
  CHECK(f.tp_ms(TpOverlap::attention) == Approx(1.389387).margin(2e-6));
  CHECK(f.ms(TpOverlap::attention) == Approx(10.737418 + 1.389387).margin(3e-6));
  // Without overlap the reduce-scatter and all-gather follow the kernels in full: each moves
  // 3/4 of 8 MiB, at least 3 x 1 ms over the link.
  CHECK(f.tp_ms(TpOverlap::none) >= 6.0);
  CHECK(f.ms(TpOverlap::none) == Approx(10.737418 + f.tp_ms(TpOverlap::none)).margin(3e-6));
}

TEST_CASE("tp_comm_overlap: a backward's output-gradient all-gather under proj's input "
          "gradient, the reduce-scatter in bulk beside QKV's weight gradient",
          "[exec][tp_overlap]") {
  // layer_gemms' backward order: QKV dgrad (4096, 1024, 1024), QKV wgrad (1024, 1024, 4096),
  // proj dgrad (4096, 256, 1024), proj wgrad (256, 1024, 4096).
  Fixture f(OpKind::backward,
            {{4096, 1024, 1024}, {1024, 1024, 4096}, {4096, 256, 1024}, {256, 1024, 4096}});
  // All-gather by ring exchange beside proj dgrad (2.147 ms, chunks of 0.537 ms): transfers end
  // at 1, 2, 3 ms; chunks run 0-0.537, 1-1.537, 2-2.537, 3-3.537: 3.537 - 2.147 = 1.389 ms
  // exposed. The reduce-scatter beside QKV wgrad (8.590 ms) ends long before it: 0 exposed.
  CHECK(f.tp_ms(TpOverlap::attention) == Approx(1.389387).margin(2e-6));
  CHECK(f.ms(TpOverlap::attention) == Approx(2 * 10.737418 + 1.389387).margin(3e-6));
}

TEST_CASE("tp_comm_overlap marks the attention and MLP ops of a lowered layout, and the step "
          "gets faster", "[exec][tp_overlap]") {
  const std::string file =
      std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation/nemo_dgx_h100_fp8.yaml";
  auto run = [&](const char* overlap) {
    const auto s = scenario::load_scenario(
        file, {"model=llama2-7b", "training.seq_len=4096", "training.global_batch=16",
               "parallel.tensor=4", "parallel.data=2", std::string("parallel.tp_comm_overlap=") + overlap});
    return parallel::lower(s);
  };
  const parallel::Plan with = run("true"), without = run("false");
  int attention = 0, mlp = 0, other = 0;
  for (const Op& op : with.programs[0].ops) {
    if (op.tp_overlap == TpOverlap::attention) ++attention;
    if (op.tp_overlap == TpOverlap::mlp) ++mlp;
    if (op.tp_collectives > 0 && op.tp_overlap == TpOverlap::none) ++other;
  }
  // Llama 2 7B: 32 blocks x 8 micro-batches (16 / data 2), a forward and a backward each.
  CHECK(attention == 32 * 8 * 2);
  CHECK(mlp == 32 * 8 * 2);
  // The embedding's forward and the output layer's backward keep their collectives.
  CHECK(other == 2 * 8);
  for (const Op& op : without.programs[0].ops) CHECK(op.tp_overlap == TpOverlap::none);
  const auto t_with = exec::play(with).step_time, t_without = exec::play(without).step_time;
  CHECK(t_with < t_without);
}
