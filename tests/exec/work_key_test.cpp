// Duration classes (sim/exec/work_key.hpp): ops of a program share a duration only when every
// field of the op that op_duration and tensor_parallel_time read is equal. The key used to fold
// those fields into three words by XOR and shifts, so two different ops could collide and take
// one duration; each test below changes one field and must see a different class.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../support/fixtures.hpp"
#include "sim/exec/player.hpp"
#include "sim/exec/work_key.hpp"

using namespace trainsim;
using parallel::Op;
using parallel::OpKind;

namespace {

// A compute op with every field the duration reads set to a value of its own.
Op base_op() {
  Op op;
  op.kind = OpKind::backward;
  op.work.flops = 3e9;
  op.work.bytes = core::Bytes{5'000'000};
  op.work.matmul = true;
  op.work.launches = 7;
  op.work.flash_model_flops = 1e9;
  op.work.flash_forward = 0.5e9;
  op.work.flash_backward = 1.25e9;
  op.kernels = 6;
  op.comm = parallel::CommWork{core::Bytes{4096}, 4, false, 2, 1};
  op.tp_collectives = 2;
  op.gemm_begin = 3;
  op.gemm_end = 9;
  return op;
}

}  // namespace

TEST_CASE("every field an op's duration reads is in its duration class's key",
          "[exec][work_key]") {
  using Change = std::pair<std::string, std::function<void(Op&)>>;
  const std::vector<Change> changes = {
      {"kind", [](Op& o) { o.kind = OpKind::forward; }},
      {"work.flops", [](Op& o) { o.work.flops = 3e9 + 1; }},
      {"work.bytes", [](Op& o) { o.work.bytes = core::Bytes{5'000'001}; }},
      {"work.matmul", [](Op& o) { o.work.matmul = false; }},
      {"work.serial_memory", [](Op& o) { o.work.serial_memory = true; }},
      {"work.launches", [](Op& o) { o.work.launches = 8; }},
      {"work.shape_efficiency", [](Op& o) { o.work.shape_efficiency = 0.5; }},
      {"work.flash_model_flops", [](Op& o) { o.work.flash_model_flops = 2e9; }},
      {"work.flash_forward", [](Op& o) { o.work.flash_forward = 0.75e9; }},
      {"work.flash_backward", [](Op& o) { o.work.flash_backward = 1.5e9; }},
      {"work.fp8_attention", [](Op& o) { o.work.fp8_attention = true; }},
      {"kernels", [](Op& o) { o.kernels = 5; }},
      {"comm.bytes", [](Op& o) { o.comm.bytes = core::Bytes{4097}; }},
      {"comm.ranks", [](Op& o) { o.comm.ranks = 8; }},
      {"comm.inter_node", [](Op& o) { o.comm.inter_node = true; }},
      {"comm.ranks_per_node", [](Op& o) { o.comm.ranks_per_node = 1; }},
      {"comm.gather_ranks", [](Op& o) { o.comm.gather_ranks = 2; }},
      {"comm.pod_members", [](Op& o) { o.comm.pod_members = 3; }},
      {"tp_collectives", [](Op& o) { o.tp_collectives = 1; }},
      {"tp_sequence_parallel", [](Op& o) { o.tp_sequence_parallel = true; }},
      {"tp_overlap", [](Op& o) { o.tp_overlap = parallel::TpOverlap::mlp; }},
      {"gemm_begin", [](Op& o) { o.gemm_begin = 4; }},
      {"gemm_end", [](Op& o) { o.gemm_end = 8; }},
      {"data_reduction", [](Op& o) { o.data_reduction = true; }},
  };
  const Op base = base_op();
  const exec::WorkKey key = exec::work_key(base);
  CHECK(exec::work_key(base_op()) == key);
  CHECK(exec::WorkHash{}(exec::work_key(base_op())) == exec::WorkHash{}(key));
  for (const auto& [field, change] : changes) {
    INFO(field);
    Op other = base;
    change(other);
    CHECK_FALSE(other == base);
    CHECK_FALSE(exec::work_key(other) == key);
  }
}

TEST_CASE("fields no duration reads leave ops in one class", "[exec][work_key]") {
  // Which layer, micro-batch, chunk, stream and purpose, the memory effects and dependencies:
  // the per-micro-batch copies of one piece of work must stay one class.
  const Op base = base_op();
  Op other = base;
  other.layer = 12;
  other.microbatch = 3;
  other.chunk = 1;
  other.stream = parallel::StreamKind::comm;
  other.purpose = parallel::CommPurpose::data;
  other.alloc_begin = other.free_begin = other.dep_begin = 10;
  other.alloc_end = other.free_end = other.dep_end = 11;
  other.model_flops = false;
  CHECK(exec::work_key(other) == exec::work_key(base));
  CHECK(exec::WorkHash{}(exec::work_key(other)) == exec::WorkHash{}(exec::work_key(base)));
}

TEST_CASE("two transfers the folded key confused each take their own duration in a play",
          "[exec][work_key]") {
  // Two pipeline transfers of 1 MB over a 1 GB/s link without latency: A sends it whole (1 ms),
  // B as Megatron's scatter/gather over 3 tensor ranks, then all-gathers 3 MB over 3 ranks on
  // the same link, (3 - 1)/3 x 3 MB / 1 GB/s = 2 ms more (3 ms). A also carries 2^33 bytes of
  // work a transfer does not read. The folded key's third word was work.bytes ^ gather_ranks <<
  // 32 (2^33 ^ 2^32 for A, 3 x 2^32 for B), so B took A's 1 ms.
  parallel::Plan plan;
  plan.intra_node = testing::free_link();
  plan.intra_node.bandwidth = core::Bandwidth{1e9};
  parallel::Program P;
  P.device = testing::ideal_device(1LL << 40);
  Op a;
  a.kind = OpKind::p2p;
  a.stream = parallel::StreamKind::p2p;
  a.purpose = parallel::CommPurpose::pipeline;
  a.comm = parallel::CommWork{core::Bytes{1'000'000}, 2};
  a.work.bytes = core::Bytes{2LL << 32};
  Op b = a;
  b.work.bytes = {};
  b.comm.gather_ranks = 3;
  P.ops = {a, b};
  plan.programs.push_back(std::move(P));
  const auto tl = exec::play(plan);
  const auto& d = tl.devices[0];
  CHECK(core::to_seconds(d.finish[0] - d.start[0]) == Approx(1e-3).epsilon(1e-9));
  CHECK(core::to_seconds(d.finish[1] - d.start[1]) == Approx(3e-3).epsilon(1e-9));
}
