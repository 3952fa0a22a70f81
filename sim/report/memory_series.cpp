#include "sim/report/memory_series.hpp"

#include "sim/exec/allocator_model.hpp"
#include "sim/exec/dependency_graph.hpp"
#include "sim/exec/first_step_states.hpp"

#include <algorithm>
#include <optional>
#include <queue>
#include <string>

#include "sim/core/error.hpp"

namespace trainsim::report {

using parallel::Op;
using parallel::Plan;
using parallel::Program;
using parallel::StreamKind;

namespace {

// Collapses the per-event states of one device into samples: one per instant (the state the
// instant ends in), preceded by the instant's largest state when that is higher, so transient
// peaks survive while the series stays as short as the number of distinct instants.
// With the caching-allocator model (Plan::caching_allocator) the effects go through it in the
// player's order, and each state adds what the allocator holds beyond the tensors.
class SeriesBuilder {
 public:
  SeriesBuilder(MemorySeries& out, const Program& P, bool allocator)
      : out_(out), states_(P), state_(P.persistent) {
    if (allocator) {
      model_.emplace(P);
      for (const auto& e : exec::AllocatorModel::state_buffers(P)) model_->allocate(e, -1);
      model_->play_load(P);
      state_ = model_->state();
      first_step_ = states_.any();
    }
    group_max_ = state_;
    out_.peak = state_.total();
  }

  // training.optimizer_states: lazy. The step played once before the series (as the allocator
  // replay plays it): only the allocator model follows it, and the optimizer states are created
  // when exec::FirstStepStates says, as the replay creates them.
  bool in_first_step() const { return first_step_; }
  // The first play: a device without lazy states sits it out.
  void begin_first_play() { idle_ = !first_step_; }
  void end_first_step() {
    idle_ = false;
    if (!first_step_) return;
    create_states(states_.at_end());
    first_step_ = false;
    model_->end_load();
    state_ = model_->state();
    group_max_ = state_;
    out_.peak = state_.total();
  }

  // Op `op`'s effects [begin, end): its allocations as it starts, or its frees as it ends.
  void apply(core::TimePoint t, const Program& P, std::uint32_t op, std::uint32_t begin,
             std::uint32_t end, bool alloc, std::int32_t microbatch) {
    if (begin == end || idle_) return;
    if (first_step_) {
      create_states(states_.before(static_cast<std::int32_t>(op)));
      for (auto e = begin; e < end; ++e) {
        if (alloc) model_->allocate(P.effects[e], microbatch);
        else TRAINSIM_CHECK(model_->release(P.effects[e], microbatch), "memory series: a free of a tensor not held");
      }
      return;
    }
    if (t != time_) flush(t);
    for (auto e = begin; e < end; ++e) {
      if (model_) {
        if (alloc) model_->allocate(P.effects[e], microbatch);
        else TRAINSIM_CHECK(model_->release(P.effects[e], microbatch), "memory series: a free of a tensor not held");
        continue;
      }
      core::Bytes& b = state_[P.effects[e].category];
      b = alloc ? b + P.effects[e].bytes : b - P.effects[e].bytes;
    }
    if (model_) state_ = model_->state();
    const core::Bytes total = state_.total();
    if (total > group_max_.total()) group_max_ = state_;
    if (total > out_.peak) out_.peak = total;
  }

  void finish() { flush(time_); }

 private:
  void push(const hw::MemBreakdown& b) {
    if (!out_.samples.empty() && out_.samples.back().in_use.bytes == b.bytes) return;
    out_.samples.push_back({time_, b});
  }
  void flush(core::TimePoint next) {
    if (group_max_.total() > state_.total()) push(group_max_);
    push(state_);
    time_ = next;
    group_max_ = state_;
  }

  void create_states(std::span<const parallel::MemEffect> states) {
    for (const auto& e : states) model_->allocate(e, -1);
  }

  MemorySeries& out_;
  std::optional<exec::AllocatorModel> model_;
  exec::FirstStepStates states_;
  bool first_step_ = false, idle_ = false;
  hw::MemBreakdown state_, group_max_;
  core::TimePoint time_{};
};

struct Finish {
  core::TimePoint time;
  std::uint64_t seq;
  std::uint32_t id;
  bool operator>(const Finish& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

}  // namespace

std::vector<MemorySeries> memory_series(const Plan& plan, const exec::Timeline& tl) {
  const auto& progs = plan.programs;
  TRAINSIM_CHECK(!plan.compressed, "memory series need the expanded plan (lower without compress)");
  TRAINSIM_CHECK(tl.devices.size() == progs.size(),
                 "memory series: timeline and plan differ in devices");
  for (std::size_t p = 0; p < progs.size(); ++p)
    TRAINSIM_CHECK(tl.devices[p].start.size() == progs[p].ops.size() &&
                       tl.devices[p].finish.size() == progs[p].ops.size(),
                   "memory series: timeline and plan differ in ops");
  // The player's dependency graph, so ready ops start in the player's order.
  exec::DependencyGraph graph = exec::build_dependency_graph(plan);
  const std::vector<std::uint32_t>& offset = graph.offset;
  const std::vector<std::int32_t>& program_of = graph.program_of;
  std::vector<std::uint32_t>& waiting = graph.waiting;
  const std::vector<std::uint32_t>& succ_begin = graph.succ_begin;
  const std::vector<std::uint32_t>& succ = graph.succ;
  const std::uint32_t total = graph.total();

  std::vector<MemorySeries> out(progs.size());
  std::vector<SeriesBuilder> builders;
  builders.reserve(progs.size());
  for (std::size_t p = 0; p < progs.size(); ++p) {
    out[p].program = static_cast<std::int32_t>(p);
    out[p].capacity = tl.devices[p].capacity;
    builders.emplace_back(out[p], progs[p], plan.caching_allocator);
  }

  // Ends at one instant in op order, as the player orders them.
  const std::vector<std::uint32_t> ready = waiting;
  auto play = [&] {
    waiting = ready;
    std::priority_queue<Finish, std::vector<Finish>, std::greater<>> queue;
    auto start = [&](std::uint32_t id, core::TimePoint now) {
      const std::int32_t p = program_of[id];
      const std::uint32_t i = id - offset[p];
      const exec::DeviceTimeline& d = tl.devices[p];
      TRAINSIM_CHECK(d.start[i] == now && !(d.finish[i] < now),
                     "memory series: stage " + std::to_string(p) + " op " + std::to_string(i) +
                         " does not start when the timeline says (the player's order changed?)");
      const Op& op = progs[p].ops[i];
      builders[p].apply(now, progs[p], i, op.alloc_begin, op.alloc_end, true, op.microbatch);
      queue.push({d.finish[i], id, id});
    };
    for (std::uint32_t id = 0; id < total; ++id)
      if (waiting[id] == 0) start(id, core::TimePoint{});
    std::uint32_t finished = 0;
    while (!queue.empty()) {
      const Finish ev = queue.top();
      queue.pop();
      ++finished;
      const std::int32_t p = program_of[ev.id];
      const Op& op = progs[p].ops[ev.id - offset[p]];
      builders[p].apply(ev.time, progs[p], ev.id - offset[p], op.free_begin, op.free_end, false,
                        op.microbatch);
      for (auto k = succ_begin[ev.id]; k < succ_begin[ev.id + 1]; ++k)
        if (--waiting[succ[k]] == 0) start(succ[k], ev.time);
    }
    TRAINSIM_CHECK(finished == total, "memory series: the plan's dependency graph deadlocks");
  };
  // A first step where a device creates its optimizer states lazily, then the step itself.
  if (std::any_of(builders.begin(), builders.end(), [](const SeriesBuilder& b) { return b.in_first_step(); })) {
    for (auto& b : builders) b.begin_first_play();
    play();
    for (auto& b : builders) b.end_first_step();
  }
  play();
  for (auto& b : builders) b.finish();
  return out;
}

}  // namespace trainsim::report
