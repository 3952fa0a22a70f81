#pragma once
// Reading training.packed_documents (docs/scenarios.md, "training"): the documents a packed
// sequence holds, whose attention runs per document (sim/parallel/flash_core.hpp).
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/validate.hpp"
#include "sim/scenario/yaml_read.hpp"

namespace trainsim::scenario {

// Reads training.packed_documents from the training mapping `m`: a mapping with exactly one of
// `length` (an integer >= 1) and `lengths` (a non-empty list of integers >= 1).
void read_packed_documents(const YamlContext& ctx, MapReader& m, TrainingSpec& t);

// Refuses, located at training.packed_documents or the key inside it: a `length` above seq_len,
// `lengths` that do not add up to seq_len, attention other than flash (the per-document kernels
// are variable-length flash kernels) and context parallelism (its per-document split is not
// modelled).
void validate_packed_documents(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n);

}  // namespace trainsim::scenario
