#pragma once
// `trainsim plan`: searches parallel layouts of one scenario for N GPUs and ranks those that
// fit. The space: tensor a power of two within a node, pipeline dividing the blocks, data the
// rest (dividing the global batch, which stays fixed), micro-batch a power of two, schedule
// 1f1b or interleaved (2 or 4 virtual stages), and a ladder of ZeRO stage x recomputation tried
// cheapest first until one fits. GPipe is left out: the same bubble as 1F1B with more memory.
//
// Bounded and fast: layouts whose model states alone exceed memory, and pipelines with fewer
// micro-batches than stages, are pruned before simulating, and so are rungs that ran out of
// memory for a candidate whose peak cannot exceed this one's (half the micro-batch; FSDP for
// HSDP); the rest are screened with short
// simulations (a few pipeline fills of micro-batches; step time extrapolated linearly in the
// number of micro-batches, memory peaks exact) and the best are confirmed with full ones.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/report/summary.hpp"
#include "sim/sweep/spec.hpp"

namespace trainsim::sweep {

enum class Objective { throughput, memory, cost };

// Where the GPUs per node that bound tensor parallelism and split intra- from inter-node
// traffic came from: the scenario's cluster.gpus_per_node, --gpus-per-node, or the default.
enum class NodeShapeSource { scenario, option, default_shape };
std::string to_string(NodeShapeSource s);  // "scenario" | "option" | "default"

struct PlanOptions {
  std::int64_t gpus = 1;
  int top = 5;
  Objective objective = Objective::throughput;
  int jobs = 1;
  std::int64_t max_micro_batch = 8;
  int confirm = 0;  // candidates confirmed with full simulations; 0 = max(2 x top, 8)
  // GPUs per node when the scenario writes no cluster.gpus_per_node: 8, a common server (DGX
  // A100/H100, HGX), unless given (then it must not contradict the scenario).
  std::int64_t gpus_per_node = 8;
  bool gpus_per_node_given = false;
  // Screen every micro-batch of a layout from its model-state bound up, even at rungs that ran
  // out of memory at a smaller micro-batch (the pruned search's oracle in tests; same result).
  bool exhaustive = false;
  // Told how many simulations just finished, on the calling thread (a progress display).
  std::function<void(int simulations)> on_progress;
};

struct Layout {
  std::int64_t data = 1, tensor = 1, pipeline = 1, virtual_stages = 1, micro_batch = 1;
  std::int64_t gradient_accumulation = 1;
  bool interleaved = false;
  int zero = 0;
  scenario::Recompute recompute = scenario::Recompute::none;
  // FSDP's shard group (parallel.fsdp.shard_size): 0 without FSDP, `data` for FSDP, below it HSDP.
  std::int64_t fsdp_shard = 0;
  std::int64_t expert = 1;  // parallel.expert (mixture-of-experts models)
  std::int64_t context = 1;  // parallel.context (searched for long sequences)
};

struct Candidate {
  Layout layout;
  std::vector<std::string> sets;  // overrides that reproduce it with `trainsim run`
  double estimated_step_s = 0;    // from the screening simulations
  bool confirmed = false;         // simulated in full (summary is exact)
  report::Summary summary;
};

struct PlanResult {
  std::vector<Candidate> ranked;  // confirmed candidates that fit, best first (all of them)
  std::int64_t layouts = 0;       // (data, tensor, pipeline, micro_batch, schedule) considered
  std::int64_t pruned = 0;        // rejected before simulating (memory bound, validity, bubble)
  std::int64_t screened = 0;      // candidates screened
  std::int64_t simulations = 0;   // simulations run in all (screening + confirmation)
  std::int64_t confirmed = 0;
  std::int64_t global_batch = 0;
  std::string device;
  std::int64_t gpus_per_node = 0;  // the node shape planned on (at most N: one node of N GPUs)
  NodeShapeSource node_shape_source = NodeShapeSource::default_shape;
  bool has_reference = false;  // the scenario's own layout uses exactly N GPUs
  report::Summary reference;   // ... and this is its full simulation
};

PlanResult plan(const BaseScenario& base, const std::vector<std::string>& sets,
                const PlanOptions& options);

// Objective value (smaller is better) of a summary, and its unit-bearing description.
double objective_value(Objective o, const report::Summary& s);

// One sentence on why `best` beats `runner_up`, comparing their figures.
std::string explain(const report::Summary& best, const report::Summary& runner_up, Objective o);

// "d8 t8 p16 1f1b mb1 zero0 none".
std::string describe(const Layout& l);

}  // namespace trainsim::sweep
