#include "sim/scenario/p2p_read.hpp"

#include <string>

namespace trainsim::scenario {

std::string_view to_string(P2pMode m) { return m == P2pMode::sync ? "sync" : "async"; }

void read_p2p(const YamlContext& ctx, MapReader& m, ParallelSpec& p) {
  if (m.choice("p2p", {"async", "sync"}, "async") != "sync") return;
  p.p2p = P2pMode::sync;
  if (p.pipeline <= 1) return;
  if (p.pipeline_engine != PipelineEngine::megatron)
    ctx.fail(m.node("p2p"), m.path_of("p2p"),
             "p2p: sync is Megatron-LM's exchange; the " + std::string(to_string(p.pipeline_engine)) +
                 " pipeline engine exchanges its own way: use p2p: async (or leave it out)");
  if (p.schedule == Schedule::gpipe)
    ctx.fail(m.node("p2p"), m.path_of("p2p"),
             "p2p: sync plays Megatron-LM's exchanges, which exist for schedule: 1f1b or "
             "interleaved, not gpipe");
  if (p.microbatch_group_size > 0 && p.microbatch_group_size != p.pipeline)
    ctx.fail(m.node("p2p"), m.path_of("p2p"),
             "p2p: sync plays Megatron-LM 2021's exchanges, whose interleaved schedule runs groups "
             "of pipeline micro-batches; microbatch_group_size is Megatron-Core's: use p2p: async");
}

}  // namespace trainsim::scenario
