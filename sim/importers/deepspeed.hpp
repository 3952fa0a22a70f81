#pragma once
// The DeepSpeed config mapping, shared by `import deepspeed` and `import hf-trainer` (whose
// TrainingArguments may name a DeepSpeed config file).
#include <optional>

#include "sim/importers/json_object.hpp"

namespace trainsim::importers {

// What a DeepSpeed config says about the batch; "auto" (filled in by the HF Trainer) is absent.
struct DeepSpeedBatch {
  std::optional<std::int64_t> micro, accumulation, global;
  core::SourceLocation global_at;
  bool optimizer = false;  // the config names its optimizer
};

// Maps precision, ZeRO stage, offload, the reduction bucket and the optimizer into `d`, and
// returns the batch fields; lists every other key as ignored.
DeepSpeedBatch map_deepspeed(JsonObject& ds, Draft& d);

}  // namespace trainsim::importers
