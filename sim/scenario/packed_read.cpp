#include "sim/scenario/packed_read.hpp"

#include <string>

namespace trainsim::scenario {

namespace {

constexpr const char* kExpected =
    "expected a mapping {length: TOKENS} (documents of that many tokens) or {lengths: [TOKENS, "
    "...]} (one pack's documents, adding up to seq_len)";

}  // namespace

void read_packed_documents(const YamlContext& ctx, MapReader& m, TrainingSpec& t) {
  if (!m.has("packed_documents")) return;
  const YAML::Node node = m.node("packed_documents");
  const std::string path = m.path_of("packed_documents");
  if (!node.IsMap()) ctx.fail(node, path, kExpected);
  MapReader p(ctx, node, path);
  if (p.has("length") == p.has("lengths"))
    ctx.fail(node, path, std::string("give exactly one of length and lengths: ") + kExpected);
  if (p.has("length")) t.packed_documents.length = p.int_in("length", ranges::kSeqLen);
  if (p.has("lengths")) {
    const YAML::Node list = p.node("lengths");
    const std::string lpath = p.path_of("lengths");
    if (!list.IsSequence() || list.size() == 0)
      ctx.fail(list, lpath, "expected a non-empty list of document lengths in tokens");
    for (std::size_t i = 0; i < list.size(); ++i)
      t.packed_documents.lengths.push_back(
          read_int(ctx, list[i], lpath + "[" + std::to_string(i) + "]", ranges::kSeqLen));
  }
  p.finish();
}

void validate_packed_documents(const YamlContext& ctx, const Scenario& s, const LayoutNodes& n) {
  const auto& pd = s.training.packed_documents;
  if (!pd.enabled()) return;
  const YAML::Node node = child_or(n.training, "packed_documents");
  const std::string path = "training.packed_documents";
  const std::string seq = std::to_string(s.training.seq_len);
  if (pd.length > s.training.seq_len)
    ctx.fail(child_or(node, "length"), path + ".length",
             "a document of " + std::to_string(pd.length) + " tokens does not fit a sequence of " +
                 seq + " (training.seq_len)");
  if (!pd.lengths.empty()) {
    std::int64_t sum = 0;
    for (const std::int64_t d : pd.lengths) sum += d;  // each <= 2^30: no overflow
    if (sum != s.training.seq_len)
      ctx.fail(child_or(node, "lengths"), path + ".lengths",
               "the documents add up to " + std::to_string(sum) + " tokens, but a packed sequence "
               "is training.seq_len = " + seq + " (write the pack's padding as a document of its own)");
  }
  if (!s.training.flash_attention)
    ctx.fail(node, path,
             "packed documents attend within each document through variable-length flash kernels "
             "(cu_seqlens): it needs training.attention: flash");
  if (s.parallel.context > 1)
    ctx.fail(node, path,
             "packed documents under context parallelism (parallel.context " +
                 std::to_string(s.parallel.context) +
                 ") split each document over the ranks, which is not modelled yet: use context 1");
}

}  // namespace trainsim::scenario
