#include "sim/scenario/levers_read.hpp"

namespace trainsim::scenario {

namespace {

// At most one chunk per token of a long sequence; 2^20 keeps chunk arithmetic far from overflow.
constexpr ranges::IntRange kLossChunks{1, std::int64_t{1} << 20};

}  // namespace

void read_levers(MapReader& m, TrainingSpec& t) {
  t.loss_chunks = m.int_in_or("loss_chunks", kLossChunks, 1);
}

}  // namespace trainsim::scenario
