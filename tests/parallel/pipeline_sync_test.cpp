// parallel.p2p: sync (sim/parallel/pipeline_sync.cpp): Megatron-LM 2021's synchronous exchanges,
// one `_communicate` call at each point megatron/schedules.py calls one, each holding its stage
// until every transfer it posted ended.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "../support/pipeline_chain.hpp"
#include "sim/exec/player.hpp"
#include "sim/parallel/lower.hpp"
#include "sim/parallel/pipeline_sync.hpp"

using namespace trainsim;
using namespace trainsim::testing;
using parallel::Exchange;

namespace {

// One layer per chunk of an interleaved schedule (pipeline_chain: a chunk's forward takes
// tf = 1 ms, its backward tb = 2 ms, a transfer d = 1 ms), four micro-batches by default.
scenario::Scenario interleaved(scenario::P2pMode mode, int stages = 2, int virtual_stages = 2,
                               int micro = 4) {
  scenario::ParallelSpec p;
  p.schedule = virtual_stages > 1 ? scenario::Schedule::interleaved
                                  : scenario::Schedule::one_f_one_b;
  p.virtual_stages = virtual_stages;
  p.p2p = mode;
  return pipeline_chain(stages * virtual_stages, stages, micro, p);
}

}  // namespace

TEST_CASE("Megatron-LM's interleaved schedule calls _communicate where schedules.py does",
          "[parallel][pipeline]") {
  // p = 2, v = 2, m = 4. Stage 0 runs W = (2 - 0 - 1) x 2 + (2 - 1) x 2 = 4 warm-up forwards
  // (units 0-3: F0.0 F1.0 F0.1 F1.1), four (forward, backward) pairs (units 4-11) and four
  // cool-down backwards (12-15). Its recv_forward comes first and moves nothing (first stage,
  // chunk 0): left out. After warm-up forward k it sends the output on and receives the next
  // forward's input unless that is chunk 0 (k = 0, 3); the last warm-up call also receives the
  // first backward's gradient. In the steady state the first stage receives unless the forward
  // p - 1 = 1 earlier was of the last chunk (k = 0: forward 4 - 1 = 3, chunk 1) or it is the
  // last pair (k = 3); the backwards of chunk 0 (pairs 2, 3; cool-down 6, 7) send nothing back.
  // The cool-down receives a gradient after every backward but the last (whose call then moves
  // nothing: left out).
  const auto s0 = parallel::megatron_exchanges(scenario::Schedule::interleaved, 0, 2, 4, 2);
  const std::vector<Exchange> want0 = {
      {1, 0, -1, false, false},   {2, 1, -1, true, false},   {3, 2, -1, true, false},
      {4, 3, -1, false, true},    {6, 4, 5, false, true},    {8, 6, 7, true, true},
      {10, 8, -1, true, true},    {12, 10, -1, false, true}, {13, -1, 12, false, true},
      {14, -1, 13, false, true},  {15, -1, -1, false, true}};
  CHECK(s0 == want0);
  // Stage 1 (the last): W = 2. Its recv_forward receives; its chunk-1 forwards feed the loss
  // and send nothing; in the steady state it receives a gradient unless the backward p - 1 = 1
  // earlier was of chunk 0 (k = 0: backward -1 = 3 mod 4, chunk 0; k = 3, 4); the final call
  // only sends.
  const auto s1 = parallel::megatron_exchanges(scenario::Schedule::interleaved, 1, 2, 4, 2);
  const std::vector<Exchange> want1 = {
      {0, -1, -1, true, false},  {1, 0, -1, true, false},   {2, 1, -1, true, false},
      {4, -1, 3, true, false},   {6, -1, 5, true, true},    {8, 6, 7, true, true},
      {10, 8, 9, true, false},   {12, -1, 11, true, false}, {14, -1, 13, false, true},
      {15, -1, 14, false, true}, {16, -1, 15, false, false}};
  CHECK(s1 == want1);
  // Every send of a stage meets a receive of its neighbour: 12 activations (stage 0's 8
  // forwards, stage 1's 4 of chunk 0; chunk 1's feed the loss) and 12 gradients (stage 1's 8
  // backwards, stage 0's 4 of chunk 1; chunk 0's have no stage before them).
  int sends = 0, receives = 0;
  for (const auto* s : {&s0, &s1})
    for (const Exchange& e : *s) {
      sends += (e.send_next >= 0) + (e.send_prev >= 0);
      receives += e.recv_prev + e.recv_next;
    }
  CHECK(sends == 24);
  CHECK(receives == 24);
}

TEST_CASE("Megatron-LM's 1F1B calls recv and send around every unit", "[parallel][pipeline]") {
  // p = 2, m = 3, stage 0: W = 1: F0 (send_forward), recv_forward (nothing on the first
  // stage), then F1 send_forward_recv_backward B0 send_backward_recv_forward (nothing to send
  // back or receive on the first stage: left out), F2 ... B1, cool-down recv_backward B2.
  const auto s0 = parallel::megatron_exchanges(scenario::Schedule::one_f_one_b, 0, 2, 3, 1);
  const std::vector<Exchange> want0 = {
      {1, 0, -1, false, false}, {2, 1, -1, false, true}, {4, 3, -1, false, true},
      {5, -1, -1, false, true}};
  CHECK(s0 == want0);
  // Stage 1: W = 0: recv_forward, then (F send_forward_recv_backward: the last stage's moves
  // nothing) B send_backward_recv_forward, the last one send_backward alone.
  const auto s1 = parallel::megatron_exchanges(scenario::Schedule::one_f_one_b, 1, 2, 3, 1);
  const std::vector<Exchange> want1 = {
      {0, -1, -1, true, false}, {2, -1, 1, true, false}, {4, -1, 3, true, false},
      {6, -1, 5, false, false}};
  CHECK(s1 == want1);
}

TEST_CASE("synchronous exchanges hold both stages of the interleaved schedule",
          "[parallel][pipeline]") {
  // Units as in the first test case; X = a call that waits (both stages posted it at the
  // same instant, or the first to post waits for the other; every transfer 1 ms):
  //   s0: F0.0 [0,1] X[1,2] F1.0 [2,3] X[3,4] F0.1 [4,5] X[5,6] F1.1 [6,7] X[7,10]
  //       (posted at 7; s1 posts the gradient of B0.1 at 9) F2.0 [10,11] B0.1 [11,13]
  //       X[13,14] F3.0 [14,15] B1.1 [15,17] X[17,18] F2.1 [18,19] B0.0 [19,21] X[21,22]
  //       F3.1 [22,23] B1.0 [23,25] X[25,26] B2.1 [26,28] X[28,30] B3.1 [30,32] X[32,33]
  //       B2.0 [33,35] X[35,36] B3.0 [36,38]
  //   s1: X[0,2] (F0.0's output, sent at 1) F0.0 [2,3] X[3,4] F1.0 [4,5] X[5,6] F0.1 [6,7]
  //       B0.1 [7,9] X[9,10] F1.1 [10,11] B1.1 [11,13] X[13,14] F2.0 [14,15] B0.0 [15,17]
  //       X[17,18] F3.0 [18,19] B1.0 [19,21] X[21,22] F2.1 [22,23] B2.1 [23,25] X[25,26]
  //       F3.1 [26,27] B3.1 [27,29] X[29,30] B2.0 [30,32] X[32,33] B3.0 [33,35] X[35,36]
  // Stage 0's last backward ends at 38 ms, stage 1's at 35. Asynchronous transfers (each
  // starting when its unit ends, the receiver waiting only for it), units' ends:
  //   s0: F0.0 1, F1.0 2, F0.1 5 (its input, s1's F0.0, ended at 3: + d = 4), F1.1 6, F2.0 7,
  //       B0.1 12 (s1's B0.1 ends at 9: + d = 10), F3.0 13, B1.1 15, F2.1 16, B0.0 18, F3.1 19,
  //       B1.0 21, B2.1 24, B3.1 27, B2.0 30, B3.0 33
  //   s1: F0.0 3, F1.0 4, F0.1 7, B0.1 9, F1.1 10, B1.1 12, F2.0 13, B0.0 15, F3.0 16, B1.0 18,
  //       F2.1 19, B2.1 21, F3.1 22, B3.1 24, B2.0 27, B3.0 30
  const auto splan = parallel::lower(interleaved(scenario::P2pMode::sync));
  const auto aplan = parallel::lower(interleaved(scenario::P2pMode::async));
  const auto s = exec::play(splan);
  const auto a = exec::play(aplan);
  CHECK(last_backward_end(splan, s, 0) == Approx(38).epsilon(1e-9));
  CHECK(last_backward_end(splan, s, 1) == Approx(35).epsilon(1e-9));
  CHECK(last_backward_end(aplan, a, 0) == Approx(33).epsilon(1e-9));
  CHECK(last_backward_end(aplan, a, 1) == Approx(30).epsilon(1e-9));
  // Fast play (lower's compress, steady-state skipping) plays the same step.
  CHECK(exec::play(parallel::lower(interleaved(scenario::P2pMode::sync), {.compress = true}))
            .step_time == s.step_time);
}

TEST_CASE("synchronous exchanges of 1F1B hold a middle stage for its transfers",
          "[parallel][pipeline]") {
  // Four stages, one layer each (tf = 1, tb = 2, d = 1 ms), 16 micro-batches, 1F1B. A middle
  // stage's steady iteration is F, send_forward_recv_backward (send the activation on, receive
  // the gradient: both transfers at once, d), B, send_backward_recv_forward (d): in steady
  // state 1 + 1 + 2 + 1 = 5 ms per micro-batch; asynchronous transfers overlap: tf + tb = 3.
  exec::PlayOptions exact;
  exact.steady_skip = false;
  auto period = [&](scenario::P2pMode mode) {
    const auto plan = parallel::lower(interleaved(mode, 4, 1, 16));
    const auto r = exec::play(plan, exact);
    const auto& P = plan.programs[1];
    double f8 = -1, f9 = -1;
    for (std::size_t i = 0; i < P.ops.size(); ++i)
      if (P.ops[i].kind == parallel::OpKind::forward) {
        const double t = core::to_seconds(r.devices[1].start[i]) * 1e3;
        if (P.ops[i].microbatch == 8) f8 = t;
        if (P.ops[i].microbatch == 9) f9 = t;
      }
    return f9 - f8;
  };
  CHECK(period(scenario::P2pMode::sync) == Approx(5).epsilon(1e-9));
  CHECK(period(scenario::P2pMode::async) == Approx(3).epsilon(1e-9));
}

TEST_CASE("p2p: sync is refused with the deepspeed engine and with GPipe", "[parallel][pipeline]") {
  const std::string base =
      "model: gpt2\ndevice: a100-80gb\ntraining: {micro_batch: 1, global_batch: 8, seq_len: 128}\n";
  const auto load = [](const std::string& text) {
    return scenario::load_scenario_tree(YAML::Load(text), "p2p.yaml");
  };
  CHECK_THROWS_WITH(load(base + "parallel: {pipeline: 2, pipeline_engine: deepspeed, p2p: sync}\n"),
                    Catch::Contains("p2p: async"));
  CHECK_THROWS_WITH(load(base + "parallel: {pipeline: 2, schedule: gpipe, p2p: sync}\n"),
                    Catch::Contains("gpipe"));
  CHECK_THROWS_WITH(load(base + "parallel: {pipeline: 2, p2p: blocking}\n"),
                    Catch::Contains("sync"));
  CHECK(load(base + "parallel: {pipeline: 2, p2p: sync}\n").parallel.p2p ==
        scenario::P2pMode::sync);
}
