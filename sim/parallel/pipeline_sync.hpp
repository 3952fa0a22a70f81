#pragma once
// parallel.p2p: sync — Megatron-LM's synchronous pipeline exchanges (the code of Narayanan et al.
// 2021, NVIDIA/Megatron-LM examples/sc21; megatron/schedules.py and p2p_communication.py).
// Every exchange is one `_communicate` call: it posts the stage's sends and receives of that
// point of the schedule as one `batch_isend_irecv`, waits for each request and then calls
// `torch.cuda.synchronize()`. So the stage computes again only once every transfer of the call
// ended, and each transfer starts only when both of its stages posted the call holding it.
// The schedules place the calls:
// - 1F1B (forward_backward_pipelining_without_interleaving): recv_forward before and
//   send_forward after each warm-up forward; in the steady state send_forward_recv_backward
//   between a forward and its backward and send_backward_recv_forward after the backward; the
//   cool-down's recv_backward before and send_backward after each backward.
// - interleaved (forward_backward_pipelining_with_interleaving): one recv_forward first, then one
//   call after every warm-up forward, after every steady (forward, backward) pair — sending
//   both units' results and receiving the next pair's inputs — and after every cool-down
//   backward, with the schedule's recv_prev / recv_next rules.
// Transfers pair by order on each link direction (NCCL matches a send with the peer's receive
// in the order both post them). Each transfer is a p2p op on the receiver (its time and
// scatter/gather as for async transfers) waiting for both stages' ops before their calls; the
// call is a zero-time op on the compute stream waiting for every transfer it holds.
#include <cstdint>
#include <vector>

#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

// One `_communicate` call of a stage, in schedule-index terms.
struct Exchange {
  std::int32_t before = 0;      // the schedule index of the unit it precedes (size: after all)
  std::int32_t send_next = -1;  // the forward unit whose output it sends on (-1: none)
  std::int32_t send_prev = -1;  // the backward unit whose input gradient it sends back
  bool recv_prev = false;       // receives an activation from the previous stage
  bool recv_next = false;       // receives a gradient from the next stage
  bool operator==(const Exchange&) const = default;
};

// The calls of `stage`, in order, for the 1f1b or interleaved schedule_stage() of the same
// arguments; calls that move nothing are left out (they wait for nothing).
std::vector<Exchange> megatron_exchanges(scenario::Schedule s, int stage, int stages,
                                         int microbatches, int virtual_stages);

// The transfer feeding a unit, built by the pipeline pass (the same op as an async transfer).
using TransferOpFn = Op (*)(const LowerContext& L, bool forward, std::int32_t consumer_g,
                            std::int32_t microbatch);

// Plays the calls while the pipeline pass builds each stage.
class SyncExchanges {
 public:
  // Every stage's calls, and each transfer's receiving and sending call.
  void prepare(const LowerContext& L, TransferOpFn make);
  void begin_stage(std::int32_t stage);
  // Emits the stage's calls before unit `u`; returns the transfer op feeding it (-1: none).
  std::int32_t before_unit(StageContext& c, const UnitStep& u);
  // The calls after the stage's last unit.
  void end_step(StageContext& c);
  // Fills the dependencies on other stages' ops.
  void finish(Plan& plan) const;

 private:
  struct Transfer {
    OpRef posted{};  // the sender's op before its call (-1: not yet)
    OpRef op{};      // the p2p op, on the receiver
  };
  struct Call {
    Exchange ex;
    std::int32_t recv[2] = {-1, -1};  // transfer ids
    std::int32_t send[2] = {-1, -1};
  };
  struct Open {
    std::int32_t program;
    std::uint32_t slot;
    std::int32_t transfer;
    bool posted;  // waits for the sender's posted op, else for the transfer
  };
  std::int32_t id(bool forward, std::int32_t g, std::int32_t j) const {
    return ((forward ? 1 : 0) * chunks_ + g) * microbatches_ + j;
  }
  void emit(StageContext& c, const Call& call);

  TransferOpFn make_ = nullptr;
  std::int32_t chunks_ = 0, microbatches_ = 0;
  std::vector<std::vector<Call>> calls_;  // per stage
  std::vector<Transfer> transfers_;
  std::vector<Open> open_;
  std::int32_t unit_ = 0;
  std::size_t next_ = 0;  // the stage's next call
};

}  // namespace trainsim::parallel
