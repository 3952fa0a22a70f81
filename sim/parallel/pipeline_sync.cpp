#include "sim/parallel/pipeline_sync.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace trainsim::parallel {

namespace {

// Python's modulo (the schedule's chunk ids of negative iteration numbers).
int pymod(int a, int n) { return ((a % n) + n) % n; }

bool moves(const Exchange& e) {
  return e.send_next >= 0 || e.send_prev >= 0 || e.recv_prev || e.recv_next;
}

// forward_backward_pipelining_without_interleaving: units are W warm-up forwards, R (forward,
// backward) pairs and W cool-down backwards.
std::vector<Exchange> one_f_one_b_calls(int s, int p, int m) {
  const bool first = s == 0, last = s == p - 1;
  const int W = std::min(p - s - 1, m), R = m - W;
  std::vector<Exchange> out;
  auto add = [&](Exchange e) {
    if (moves(e)) out.push_back(e);
  };
  int at = 0;  // schedule index of the next unit
  for (int i = 0; i < W; ++i, ++at) {
    add({at, -1, -1, !first, false});             // recv_forward
    add({at + 1, last ? -1 : at, -1, false, false});  // send_forward
  }
  if (R > 0) add({at, -1, -1, !first, false});  // recv_forward before the steady state
  for (int i = 0; i < R; ++i, at += 2) {
    add({at + 1, last ? -1 : at, -1, false, !last});  // send_forward_recv_backward
    // send_backward_recv_forward (send_backward on the last iteration)
    add({at + 2, -1, first ? -1 : at + 1, !first && i != R - 1, false});
  }
  for (int i = 0; i < W; ++i, ++at) {
    add({at, -1, -1, false, !last});               // recv_backward
    add({at + 1, -1, first ? -1 : at, false, false});  // send_backward
  }
  return out;
}

// forward_backward_pipelining_with_interleaving: forward k runs chunk (k mod pv) / p, backward
// k the chunk v - 1 - that; W warm-up forwards, R = mv - W (forward, backward) pairs, then the
// cool-down backwards (schedule.cpp's order).
std::vector<Exchange> interleaved_calls(int s, int p, int m, int v) {
  const int total = m * v;
  const bool first = s == 0, last = s == p - 1;
  auto chunk_f = [&](int k) { return pymod(k, p * v) / p; };
  auto chunk_b = [&](int k) { return v - 1 - chunk_f(k); };
  const bool all_warmup = m == p;
  const int W = all_warmup ? total : std::min(total, (p - s - 1) * 2 + (v - 1) * p);
  const int R = total - W;
  auto fidx = [&](int k) { return k < W ? k : W + 2 * (k - W); };
  auto bidx = [&](int k) { return k < R ? W + 2 * k + 1 : W + R + k; };
  // The last stage's last chunk feeds the loss; the first stage's first chunk has no input.
  auto sends_on = [&](int k) { return last && chunk_f(k) == v - 1 ? -1 : fidx(k); };
  auto sends_back = [&](int k) { return first && chunk_b(k) == 0 ? -1 : bidx(k); };
  std::vector<Exchange> out;
  auto add = [&](Exchange e) {
    if (moves(e)) out.push_back(e);
  };
  add({0, -1, -1, !first, false});  // recv_forward of chunk 0
  for (int k = 0; k < W; ++k) {
    Exchange e{fidx(k) + 1, sends_on(k), -1,
               !(first && chunk_f(k + 1) == 0) && k != total - 1, false};
    if (k == W - 1 && !all_warmup) e.recv_next = !last;
    add(e);
  }
  for (int k = 0; k < R; ++k) {
    const int fk = W + k;
    // The first stage runs p - 1 forwards ahead of the last, the last p - 1 backwards ahead.
    bool recv_prev = first ? chunk_f(fk - (p - 1)) != v - 1 : true;
    const bool recv_next = last ? chunk_b(k - (p - 1)) != 0 : true;
    if (k == R - 1) recv_prev = false;
    add({bidx(k) + 1, sends_on(fk), sends_back(k), recv_prev, recv_next});
  }
  if (all_warmup) add({W, -1, -1, false, !last});  // recv_backward
  for (int k = R; k < total; ++k)
    add({bidx(k) + 1, -1, sends_back(k), false,
         !(last && chunk_b(k + 1) == v - 1) && k != total - 1});
  return out;
}

}  // namespace

std::vector<Exchange> megatron_exchanges(scenario::Schedule s, int stage, int stages,
                                         int microbatches, int virtual_stages) {
  TRAINSIM_CHECK(s != scenario::Schedule::gpipe, "Megatron-LM has no GPipe schedule");
  if (s == scenario::Schedule::one_f_one_b || virtual_stages == 1)
    return one_f_one_b_calls(stage, stages, microbatches);
  return interleaved_calls(stage, stages, microbatches, virtual_stages);
}

void SyncExchanges::prepare(const LowerContext& L, TransferOpFn make) {
  make_ = make;
  const int p = L.stages;
  chunks_ = L.chunk_count();
  microbatches_ = L.microbatches;
  transfers_.assign(2 * static_cast<std::size_t>(chunks_) * microbatches_, Transfer{});
  calls_.assign(p, {});
  // What each stage sends on each direction, in order; then each receive takes the next one.
  std::vector<std::vector<std::int32_t>> sent_next(p), sent_prev(p);
  for (int s = 0; s < p; ++s) {
    const auto units =
        schedule_stage(L.s.parallel.schedule, s, p, L.microbatches, L.virtual_stages);
    for (const Exchange& e :
         megatron_exchanges(L.s.parallel.schedule, s, p, L.microbatches, L.virtual_stages)) {
      Call call{e};
      if (e.send_next >= 0) {
        const WorkUnit& u = units[e.send_next];
        call.send[0] = id(true, u.chunk * p + s, u.microbatch);
        sent_next[s].push_back(call.send[0]);
      }
      if (e.send_prev >= 0) {
        const WorkUnit& u = units[e.send_prev];
        call.send[1] = id(false, u.chunk * p + s, u.microbatch);
        sent_prev[s].push_back(call.send[1]);
      }
      calls_[s].push_back(call);
    }
  }
  for (int s = 0; s < p; ++s) {
    const auto& from_prev = sent_next[(s + p - 1) % p];
    const auto& from_next = sent_prev[(s + 1) % p];
    std::size_t a = 0, b = 0;
    for (Call& call : calls_[s]) {
      if (call.ex.recv_prev) {
        TRAINSIM_CHECK(a < from_prev.size(), "a synchronous receive without its send");
        call.recv[0] = from_prev[a++];
      }
      if (call.ex.recv_next) {
        TRAINSIM_CHECK(b < from_next.size(), "a synchronous receive without its send");
        call.recv[1] = from_next[b++];
      }
    }
    TRAINSIM_CHECK(a == from_prev.size() && b == from_next.size(),
                   "a synchronous send without its receive");
  }
}

void SyncExchanges::begin_stage(std::int32_t) {
  unit_ = 0;
  next_ = 0;
}

std::int32_t SyncExchanges::before_unit(StageContext& c, const UnitStep& u) {
  const auto& calls = calls_[c.stage()];
  while (next_ < calls.size() && calls[next_].ex.before <= unit_) emit(c, calls[next_++]);
  ++unit_;
  std::int32_t t = -1;
  if (u.forward() && !u.first_chunk) t = id(true, u.g - 1, u.microbatch());
  if (!u.forward() && !u.last_chunk) t = id(false, u.g + 1, u.microbatch());
  if (t < 0) return -1;
  const OpRef op = transfers_[t].op;
  TRAINSIM_CHECK(op.program == c.stage() && op.index >= 0,
                 "a unit runs before the exchange that receives its input");
  return op.index;
}

void SyncExchanges::end_step(StageContext& c) {
  const auto& calls = calls_[c.stage()];
  while (next_ < calls.size()) emit(c, calls[next_++]);
}

void SyncExchanges::emit(StageContext& c, const Call& call) {
  const OpRef posted = c.last_compute();
  auto transfer_op = [&](std::int32_t t) {
    const std::int32_t j = t % microbatches_;
    const std::int32_t g = (t / microbatches_) % chunks_;
    const bool forward = t / microbatches_ / chunks_ == 1;
    return make_(c.L, forward, forward ? g + 1 : g - 1, j);
  };
  std::int32_t received[2] = {-1, -1};
  Op barrier;
  bool named = false;
  for (int d = 0; d < 2; ++d) {
    const std::int32_t t = call.recv[d];
    if (t < 0) continue;
    const Op op = transfer_op(t);
    if (!named) barrier = op;
    named = true;
    received[d] = c.B.emit(op, {}, {}, {posted});
    open_.push_back({c.stage(), c.B.add_open_dep(received[d]), t, true});
    transfers_[t].op = c.B.ref(received[d]);
  }
  for (const std::int32_t t : call.send)
    if (t >= 0) {
      TRAINSIM_CHECK(posted.index >= 0, "a synchronous send before any compute");
      transfers_[t].posted = posted;
      if (!named) barrier = transfer_op(t);
      named = true;
    }
  // The call itself: the compute stream waits for every transfer it holds.
  barrier.stream = StreamKind::compute;
  barrier.comm.bytes = core::Bytes{0};
  barrier.comm.gather_ranks = 1;
  const std::int32_t at =
      c.B.emit(barrier, {}, {}, {c.ref_or_none(received[0]), c.ref_or_none(received[1])});
  for (const std::int32_t t : call.send)
    if (t >= 0) open_.push_back({c.stage(), c.B.add_open_dep(at), t, false});
}

void SyncExchanges::finish(Plan& plan) const {
  for (const Open& o : open_) {
    const Transfer& t = transfers_[o.transfer];
    const OpRef target = o.posted ? t.posted : t.op;
    TRAINSIM_CHECK(target.index >= 0, "a synchronous transfer whose other side was never built");
    plan.programs[o.program].deps[o.slot] = target;
  }
}

}  // namespace trainsim::parallel
