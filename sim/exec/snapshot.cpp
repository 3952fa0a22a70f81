// Plays of one plan paused and resumed (PlanDigest::snapshots): a snapshot is a copy of the
// loop's state (PlayState), a resume an assignment.

#include "sim/exec/player_internal.hpp"

namespace trainsim::exec {

inline std::uint64_t Player::profiles_generation() const {
  const auto& k = opt.plan_digest->profiles;
  return (k ? k->generation : 0) + (profiles_reused ? 0 : 1);
}

void Player::keep_snapshot(bool at_end) {
  auto s = std::make_shared<PlaySnapshot>();
  s->at_end = at_end;
  s->max_oom_points = opt.max_oom_points;
  s->events_run = queue.events_run();
  s->profiles_generation = profiles_generation();
  for (std::size_t p = 0; p < plan.programs.size(); ++p) {
    s->capacity.push_back(ledgers[p].capacity());
    s->persistent.push_back(plan.programs[p].persistent);
  }
  s->host_capacity = plan.host_capacity;
  s->host_per_node = plan.host_per_node;
  s->class_time = class_time;
  s->class_beside = class_beside;
  s->transfer_class_time = transfer_time;
  // The classes of the ops started by now (all of them at the end).
  std::vector<char> seen(class_time.size() + transfer_time.size(), 0);
  for (std::uint32_t id = 0; id < waiting.size(); ++id) {
    if (!at_end && waiting[id] != 0) continue;
    if (!seen[work_class[id]]) {
      seen[work_class[id]] = 1;
      s->started_classes.push_back(work_class[id]);
    }
    const std::uint32_t t = transfer_class[id];
    if (t != kNone && !seen[class_time.size() + t]) {
      seen[class_time.size() + t] = 1;
      s->started_transfers.push_back(t);
    }
  }
  if (at_end) {  // its timeline once the play ends
    snapshot = std::move(s);
    return;
  }
  s->at = queue.next().time;
  s->state = *this;  // the loop's state, whole
  snapshot = std::move(s);
}

inline bool Player::same_start(const PlaySnapshot& s) const {
  if (s.transfer_class_time.size() != transfer_time.size() ||
      s.class_time.size() != class_time.size() || s.class_beside.size() != class_beside.size() ||
      s.profiles_generation != profiles_generation() ||
      s.max_oom_points != opt.max_oom_points || !(s.host_capacity == plan.host_capacity) ||
      !(s.host_per_node == plan.host_per_node))
    return false;
  for (std::size_t p = 0; p < plan.programs.size(); ++p) {
    if (!(s.capacity[p] == ledgers[p].capacity())) return false;
    for (std::size_t c = 0; c < hw::kMemCategories; ++c)
      if (!(s.persistent[p].bytes[c] == plan.programs[p].persistent.bytes[c])) return false;
  }
  for (const std::uint32_t c : s.started_classes)
    if (!(s.class_time[c] == class_time[c]) ||
        (!class_beside.empty() && !(s.class_beside[c] == class_beside[c])))
      return false;
  for (const std::uint32_t t : s.started_transfers)
    if (!(s.transfer_class_time[t] == transfer_time[t])) return false;
  return true;
}

Player::Resumed Player::resume() {
  if (!opt.plan_digest || opt.all_ooms || !profiles_reused) return Resumed::no;
  auto& kept = opt.plan_digest->snapshots;
  for (std::size_t i = kept.size(); i-- > 0;) {
    const PlaySnapshot& s = *kept[i];
    if (!same_start(s)) continue;
    if (i + 1 != kept.size())
      std::rotate(kept.begin() + static_cast<std::ptrdiff_t>(i),
                  kept.begin() + static_cast<std::ptrdiff_t>(i) + 1, kept.end());
    if (s.at_end) {
      tl = s.state.tl;
      tl.events_resumed = s.events_run;
      return Resumed::whole;
    }
    resumed_from = kept.back();
    static_cast<PlayState&>(*this) = s.state;  // (copies into this play's buffers)
    tl.events_resumed = s.events_run;
    return Resumed::loop;
  }
  return Resumed::no;
}

}  // namespace trainsim::exec
