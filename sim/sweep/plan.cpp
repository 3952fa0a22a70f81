#include "sim/sweep/plan.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <string>
#include <utility>

#include "sim/sweep/plan_candidates.hpp"
#include "sim/sweep/runner.hpp"

namespace trainsim::sweep {

namespace {

using scenario::Recompute;

struct Rung {
  int zero;
  Recompute recompute;
};

// Cheapest first: ZeRO-1 costs no extra communication volume over an all-reduce, recomputation
// costs compute, ZeRO-3 gathers weights every micro-batch. FSDP layouts (their own candidates,
// beside ZeRO's) shard every state from the start and climb by recomputation alone. Expert
// parallelism is modelled with ZeRO 0 only.
std::vector<Rung> ladder(std::int64_t data, std::int64_t fsdp_shard = 0, std::int64_t expert = 1) {
  if (data == 1 || fsdp_shard > 0 || expert > 1)
    return {{0, Recompute::none}, {0, Recompute::selective}, {0, Recompute::full}};
  return {{0, Recompute::none}, {1, Recompute::none}, {1, Recompute::selective},
          {1, Recompute::full}, {3, Recompute::full}};
}

struct Context {
  const BaseScenario& base;
  const std::vector<std::string>& sets;
  const scenario::Scenario& s0;
  std::int64_t gpus, gpn, global_batch;
};

std::vector<std::string> layout_sets(const Context& c, const Layout& l, std::int64_t ga) {
  std::vector<std::string> s = c.sets;
  auto add = [&](const std::string& k, const std::string& v) { s.push_back(k + "=" + v); };
  auto num = [](std::int64_t v) { return std::to_string(v); };
  add("parallel.data", num(l.data));
  add("parallel.tensor", num(l.tensor));
  add("parallel.pipeline", num(l.pipeline));
  add("parallel.schedule", l.interleaved ? "interleaved" : "1f1b");
  add("parallel.virtual_stages", num(l.virtual_stages));
  add("parallel.zero", num(l.zero));
  if (l.fsdp_shard > 0)
    add("parallel.fsdp", "{shard_size: " + num(l.fsdp_shard) + "}");
  else if (c.s0.parallel.fsdp.enabled)
    add("parallel.fsdp", "false");
  // FSDP accumulates and reduces its gradients as its own reduce_dtype says, so an FSDP candidate
  // drops the base's framework-specific accumulation (e.g. Megatron's fp32 main_grad).
  if (l.fsdp_shard > 0 && c.s0.training.accumulate_grads != scenario::AccumulateGrads::fused)
    add("training.accumulate_grads", "fused");
  // Likewise the base's reduction after the backward (Megatron's DDP) where the candidate shards
  // what it reduces per micro-batch or unit (ZeRO-2/3, FSDP), shards at all (local DDP), or
  // reduces its routed experts over an expert group of their own.
  const scenario::GradReduce g = c.s0.parallel.grad_reduce;
  const int most = g == scenario::GradReduce::after_backward ? 0 : 1;
  if (g != scenario::GradReduce::overlapped && (l.fsdp_shard > 0 || l.zero > most || l.expert > 1))
    add("parallel.grad_reduce", "overlapped");
  if (l.expert > 1 || c.s0.parallel.expert > 1) add("parallel.expert", num(l.expert));
  if (l.context > 1 || c.s0.parallel.context > 1) add("parallel.context", num(l.context));
  if (!c.s0.parallel.split_points.empty()) add("parallel.split_points", "[]");
  // The base's interleaved group size belongs to its own pipeline: each candidate runs the
  // default (a group of pipeline micro-batches).
  if (c.s0.parallel.microbatch_group_size > 0) add("parallel.microbatch_group_size", "0");
  // Likewise its uneven pipeline split: candidates split their blocks evenly.
  const scenario::ParallelSpec& p0 = c.s0.parallel;
  if (p0.first_stage_blocks > 0) add("parallel.first_stage_blocks", "0");
  if (p0.last_stage_blocks > 0) add("parallel.last_stage_blocks", "0");
  if (p0.embedding_in_split) add("parallel.embedding_in_split", "false");
  if (p0.loss_in_split) add("parallel.loss_in_split", "false");
  add("training.micro_batch", num(l.micro_batch));
  add("training.gradient_accumulation", num(ga));
  add("training.global_batch", num(l.data * l.micro_batch * ga));
  add("training.recompute", std::string(scenario::to_string(l.recompute)));
  add("cluster.nodes", num(c.gpus / c.gpn));
  add("cluster.gpus_per_node", num(c.gpn));
  return s;
}

// Model states per device cannot be less than the parameters over tensor x pipeline times the
// bytes each keeps after ZeRO sharding: a sound lower bound of the peak.
bool states_may_fit(const scenario::Scenario& s0, const Layout& l) {
  const auto b = s0.state_bytes();
  const double d = static_cast<double>(l.data * l.context);  // ZeRO shards over data x context
  // FSDP: parameters, gradients and optimizer states in the model's stored dtype, all over the
  // shard group of shard_size x context ranks (routed experts over 1/E of it, holding 1/E of them).
  const double fsdp_per_param =
      static_cast<double>(
          scenario::fsdp_state_bytes(s0.training.precision, s0.training.optimizer).total()) /
      static_cast<double>(std::max<std::int64_t>(l.fsdp_shard, 1) * l.context);
  const double per_param = l.fsdp_shard > 0
                               ? fsdp_per_param
                               : b.weights / (l.zero >= 3 ? d : 1.0) + b.gradients / (l.zero >= 2 ? d : 1.0) +
                                     b.optimizer_states / (l.zero >= 1 ? d : 1.0);
  // Routed experts are divided over the expert ranks too.
  double experts = 0;
  for (auto v : s0.model.order) experts += static_cast<double>(s0.model.graph[v].expert_params);
  const double all = static_cast<double>(s0.model.parameters());
  const double expert = l.fsdp_shard > 0 ? 1.0 : static_cast<double>(l.expert);
  const double params = (all - experts * (1.0 - 1.0 / expert)) /
                        static_cast<double>(l.tensor * l.pipeline);
  return static_cast<double>(s0.device.reserved.value) + params * per_param <=
         static_cast<double>(s0.device.memory.value);
}

struct Screen {
  PointResult r;
  double estimate = 0;
  bool exact = false;
  int sims = 0;
};

// Short simulations at a few pipeline fills of micro-batches; the step time is linear in the
// micro-batch count once the pipeline is full, and the peak no longer changes.
Screen screen(const Context& c, const Layout& l) {
  const std::int64_t v = l.interleaved ? l.virtual_stages : 1;
  const std::int64_t a = l.pipeline == 1 ? 1 : (v + 1) * l.pipeline, b = a + l.pipeline;
  Screen out;
  if (l.gradient_accumulation <= b) {
    out.r = run_point(c.base, layout_sets(c, l, l.gradient_accumulation));
    out.sims = 1;
    out.exact = true;
    if (out.r.summary) out.estimate = out.r.summary->step_time_s;
    return out;
  }
  out.r = run_point(c.base, layout_sets(c, l, a));
  out.sims = 1;
  if (out.r.status != Status::fits) return out;
  const PointResult rb = run_point(c.base, layout_sets(c, l, b));
  out.sims = 2;
  if (rb.status != Status::fits) {
    out.r = rb;
    return out;
  }
  const double ta = out.r.summary->step_time_s, tb = rb.summary->step_time_s;
  out.estimate = ta + (tb - ta) / static_cast<double>(b - a) * static_cast<double>(l.gradient_accumulation - a);
  return out;
}

struct Item {
  Layout l;
  std::size_t rung = 0;
  std::size_t index = 0;  // place in the candidate list (ties in the screened ranking break on it)
  bool settled = false;   // a rung of it fitted (the memory objective climbs on from there)
};

// The first rung of `lad` from `from` whose model states may fit (lad.size() when none).
std::size_t first_rung(const scenario::Scenario& s0, Layout& l, const std::vector<Rung>& lad, std::size_t from) {
  for (; from < lad.size(); ++from) {
    l.zero = lad[from].zero;
    l.recompute = lad[from].recompute;
    if (states_may_fit(s0, l)) break;
  }
  return from;
}

// Which candidates wait for which before they are screened, and at which rung they start. A
// candidate's memory peak is at least that of the candidate it waits for at the same rung, so a
// rung that ran out of memory there runs out here too and is not simulated:
// - the same layout at half the micro-batch: every saved activation grows with the micro-batch
//   (Korthikanti et al. 2022, s x b x h x (34 + 5 a s / h) bytes a layer), the model states do
//   not, and the micro-batches in flight at the peak are the same (1F1B keeps min(p, m) of them;
//   the search has m >= p);
// - HSDP sharded within a node, after FSDP over all the data ranks of the same layout: the same
//   activations and gathered units, with each state sharded over fewer ranks (docs/fsdp.md).
// It starts at the highest rung the candidates it waits for settled on (the first that did not
// run out of memory; past the ladder when all did, and then it is pruned without simulating).
// Exhaustive: every candidate starts at once at its model-state bound (the tests' oracle).
class Gate {
 public:
  Gate(const scenario::Scenario& s0, const std::vector<Item>& items, bool exhaustive, std::int64_t& pruned)
      : s0_(s0), items_(items), pruned_(pruned), after_(items.size()),
        waits_(items.size(), 0), floor_(items.size(), 0) {
    if (exhaustive) return;
    std::map<std::array<std::int64_t, 6>, std::size_t> last;  // family -> its latest member
    std::map<std::array<std::int64_t, 6>, std::size_t> fsdp;  // (layout, micro-batch) -> FSDP candidate
    for (const Item& it : items) {
      const Layout& l = it.l;
      const std::array<std::int64_t, 6> family{l.tensor, l.pipeline, l.context, l.virtual_stages, l.fsdp_shard, l.expert};
      const std::array<std::int64_t, 6> shape{l.tensor, l.pipeline, l.context, l.virtual_stages, l.micro_batch, l.expert};
      if (auto f = last.find(family); f != last.end()) wait(it.index, f->second);
      last[family] = it.index;
      if (l.fsdp_shard > 0 && l.fsdp_shard == l.data) fsdp[shape] = it.index;
      else if (l.fsdp_shard > 0)
        if (auto f = fsdp.find(shape); f != fsdp.end()) wait(it.index, f->second);
    }
  }
  // The candidates that wait for none, at their first rung.
  std::vector<Item> first() {
    std::vector<Item> out;
    for (const Item& it : items_)
      if (waits_[it.index] == 0) start(it.index, out);
    return out;
  }
  // `it` settled at `rung` (the ladder's size: every rung ran out of memory); starts those that
  // waited for it alone, into `next`. Once per candidate.
  void settle(const Item& it, std::size_t rung, std::vector<Item>& next) {
    for (std::size_t k : after_[it.index]) {
      floor_[k] = std::max(floor_[k], rung);
      if (--waits_[k] == 0) start(k, next);
    }
  }

 private:
  void wait(std::size_t k, std::size_t on) {
    after_[on].push_back(k);
    ++waits_[k];
  }
  void start(std::size_t k, std::vector<Item>& into) {
    Item it = items_[k];
    const auto lad = ladder(it.l.data * it.l.context, it.l.fsdp_shard, it.l.expert);
    it.rung = first_rung(s0_, it.l, lad, std::max(it.rung, floor_[k]));
    if (it.rung < lad.size()) return into.push_back(it);
    ++pruned_;
    settle(it, lad.size(), into);
  }

  const scenario::Scenario& s0_;
  const std::vector<Item>& items_;
  std::int64_t& pruned_;
  std::vector<std::vector<std::size_t>> after_;  // who waits for each candidate
  std::vector<int> waits_;                       // how many each still waits for
  std::vector<std::size_t> floor_;               // the rung each starts at, at least
};

// The candidates: each layout of the search at the first rung of its ladder whose model states
// may fit; counts the layouts considered and those pruned (the pipeline never fills, or no rung's
// states fit) in `res`.
std::vector<Item> enumerate_layouts(const scenario::Scenario& s0, std::int64_t n, std::int64_t gpn,
                                    const PlanOptions& o, PlanResult& res) {
  std::vector<Item> active;
  for (const Layout& l : candidate_layouts(s0, n, gpn, o, res.node_shape_source)) {
    ++res.layouts;
    if (l.pipeline > 1 && l.gradient_accumulation < l.pipeline) {  // over half of it idle
      ++res.pruned;
      continue;
    }
    Item it{l};
    const auto lad = ladder(l.data * l.context, l.fsdp_shard, l.expert);
    it.rung = first_rung(s0, it.l, lad, 0);
    it.index = active.size();
    if (it.rung == lad.size()) ++res.pruned;
    else active.push_back(it);
  }
  return active;
}

// The GPUs per node to plan on and where the figure came from: the scenario's when it writes
// cluster.gpus_per_node (in its file or by --set), else the option's.
std::pair<std::int64_t, NodeShapeSource> node_shape(const BaseScenario& base, const std::vector<std::string>& sets,
                                                    const scenario::Scenario& s0, const PlanOptions& o) {
  std::string written;
  bool from_scenario = base.scalar_at("cluster.gpus_per_node", written);
  for (const auto& set : sets) {
    const std::string key = set.substr(0, set.find('='));
    from_scenario = from_scenario || key == "cluster.gpus_per_node" || key == "cluster";
  }
  if (!from_scenario)
    return {o.gpus_per_node, o.gpus_per_node_given ? NodeShapeSource::option : NodeShapeSource::default_shape};
  if (o.gpus_per_node_given && o.gpus_per_node != s0.cluster.gpus_per_node)
    throw core::ConfigError({"--gpus-per-node", 1, 1}, "--gpus-per-node",
                            "the scenario's cluster.gpus_per_node is " + std::to_string(s0.cluster.gpus_per_node) +
                                "; give one of them (or --set cluster.gpus_per_node=" +
                                std::to_string(o.gpus_per_node) + ")");
  return {s0.cluster.gpus_per_node, NodeShapeSource::scenario};
}

}  // namespace

std::string to_string(NodeShapeSource s) {
  switch (s) {
    case NodeShapeSource::scenario: return "scenario";
    case NodeShapeSource::option: return "option";
    case NodeShapeSource::default_shape: break;
  }
  return "default";
}

double objective_value(Objective o, const report::Summary& s) {
  switch (o) {
    case Objective::memory: return static_cast<double>(s.peak.value);
    case Objective::cost:  // GPU-seconds per sample
      return s.step_time_s * static_cast<double>(s.devices_total) / static_cast<double>(s.training.global_batch);
    case Objective::throughput: break;
  }
  return s.step_time_s;
}

std::string describe(const Layout& l) {
  std::string s = "d";
  s += std::to_string(l.data);
  s += " t";
  s += std::to_string(l.tensor);
  s += " p";
  s += std::to_string(l.pipeline);
  s += l.interleaved ? " interleaved/v" : " 1f1b";
  if (l.interleaved) s += std::to_string(l.virtual_stages);
  s += " mb";
  s += std::to_string(l.micro_batch);
  if (l.fsdp_shard == l.data && l.fsdp_shard > 0) {
    s += " fsdp";
  } else if (l.fsdp_shard > 0) {
    s += " hsdp/s";
    s += std::to_string(l.fsdp_shard);
  } else {
    s += " zero";
    s += std::to_string(l.zero);
  }
  s += ' ';
  s += scenario::to_string(l.recompute);
  if (l.expert > 1) s += " expert" + std::to_string(l.expert);
  if (l.context > 1) s += " context" + std::to_string(l.context);
  return s;
}

PlanResult plan(const BaseScenario& base, const std::vector<std::string>& sets, const PlanOptions& o) {
  const scenario::Scenario s0 = base.load(sets);
  PlanResult res;
  res.global_batch = s0.training.global_batch;
  res.device = s0.device.name;
  const std::int64_t n = o.gpus;
  const auto [shape, source] = node_shape(base, sets, s0, o);
  const std::int64_t gpn = std::min(shape, n);
  res.gpus_per_node = gpn;
  res.node_shape_source = source;
  if (n < 1 || n % gpn != 0)
    throw core::ConfigError({"--gpus", 1, 1}, "--gpus",
                            "expected a multiple of the " + std::to_string(gpn) + " GPUs per node (" +
                                (source == NodeShapeSource::scenario ? "the scenario's cluster.gpus_per_node"
                                                                     : "--gpus-per-node") +
                                "), got " + std::to_string(n));
  const Context c{base, sets, s0, n, gpn, s0.training.global_batch};
  const std::vector<Item> items = enumerate_layouts(s0, n, gpn, o, res);

  Gate gate(s0, items, o.exhaustive, res.pruned);
  std::vector<Item> active = gate.first();

  // Screening in waves: a candidate that runs out of memory climbs to its next rung; under the
  // memory objective one that fits climbs too (every rung needs less memory than the one
  // before), so each layout's leanest setting is ranked.
  std::vector<Candidate> fits;
  std::vector<std::pair<std::size_t, std::size_t>> fit_order;  // (index, rung) of each fit
  auto climb = [&](Item it, std::vector<Item>& next) {
    const auto lad = ladder(it.l.data * it.l.context, it.l.fsdp_shard, it.l.expert);
    it.rung = first_rung(s0, it.l, lad, it.rung + 1);
    if (it.rung < lad.size()) next.push_back(it);
    return it.rung;
  };
  while (!active.empty()) {
    std::vector<Screen> results(active.size());
    run_in_order<Screen>(
        active.size(), o.jobs, [&](std::size_t i) { return screen(c, active[i].l); },
        [&](std::size_t i, Screen&& s) {
          if (o.on_progress) o.on_progress(s.sims);
          results[i] = std::move(s);
        });
    std::vector<Item> next;
    for (std::size_t i = 0; i < active.size(); ++i) {
      Screen& s = results[i];
      const Item& it = active[i];
      ++res.screened;
      res.simulations += s.sims;
      const auto lad = ladder(it.l.data * it.l.context, it.l.fsdp_shard, it.l.expert);
      if (s.r.status == Status::fits) {
        Candidate cand;
        cand.layout = it.l;
        cand.sets = layout_sets(c, cand.layout, cand.layout.gradient_accumulation);
        cand.estimated_step_s = s.estimate;
        cand.confirmed = s.exact;
        cand.summary = *s.r.summary;
        fits.push_back(std::move(cand));
        fit_order.emplace_back(it.index, it.rung);
        if (!it.settled) gate.settle(it, it.rung, next);
        if (o.objective == Objective::memory) {  // climbs on from its first fit
          Item up = it;
          up.settled = true;
          climb(up, next);
        }
      } else if (s.r.status == Status::oom) {
        if (climb(it, next) == lad.size() && !it.settled) gate.settle(it, lad.size(), next);
      } else {
        ++res.pruned;  // rejected by validation
        if (!it.settled) gate.settle(it, it.rung, next);
      }
    }
    active = std::move(next);
  }

  // Confirm the most promising with full simulations; rank only confirmed ones.
  auto screened_value = [&](const Candidate& cd) {
    return o.objective == Objective::memory ? static_cast<double>(cd.summary.peak.value) : cd.estimated_step_s;
  };
  // Ties break on the enumeration order, then the rung: the same order whichever order the
  // waves found them in (pruned or exhaustive).
  std::vector<std::size_t> order(fits.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const double x = screened_value(fits[a]), y = screened_value(fits[b]);
    return x != y ? x < y : fit_order[a] < fit_order[b];
  });
  std::vector<Candidate> sorted;
  sorted.reserve(fits.size());
  for (std::size_t k : order) sorted.push_back(std::move(fits[k]));
  fits = std::move(sorted);
  const std::size_t m = std::min(fits.size(), static_cast<std::size_t>(o.confirm > 0 ? o.confirm : std::max(2 * o.top, 8)));
  fits.resize(m);
  run_in_order<int>(
      m, o.jobs,
      [&](std::size_t i) {
        if (fits[i].confirmed) return 0;
        PointResult r = run_point(base, fits[i].sets);
        TRAINSIM_CHECK(r.summary.has_value(), "a screened layout became invalid: " + r.reason);
        fits[i].summary = *r.summary;
        fits[i].confirmed = true;
        return 1;
      },
      [&](std::size_t, int&& sims) {
        res.simulations += sims;
        if (o.on_progress) o.on_progress(sims);
        res.confirmed += 1;
      });
  for (auto& cd : fits)
    if (cd.summary.fits) res.ranked.push_back(cd);
  std::stable_sort(res.ranked.begin(), res.ranked.end(), [&](const Candidate& a, const Candidate& b) {
    const double x = objective_value(o.objective, a.summary), y = objective_value(o.objective, b.summary);
    if (x != y) return x < y;
    return a.summary.step_time_s < b.summary.step_time_s;
  });
  if (s0.parallel.devices() == n) {
    PointResult r = run_point(base, sets);
    if (r.summary) {
      res.has_reference = true;
      res.reference = *r.summary;
      ++res.simulations;
      if (o.on_progress) o.on_progress(1);
    }
  }
  return res;
}

}  // namespace trainsim::sweep
