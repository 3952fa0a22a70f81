// compare's schedule and fine-tuning columns (virtual_stages, lora, lora_targets), as the
// recipes of NeMo's and Megatron-Bridge's published tables map them (docs/validation.md,
// "Comparing other published tables"). Synthetic tables: the measured cells are made up; the
// tests check the overrides each cell becomes and what the simulated steps do with them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "sim/validation/compare.hpp"
#include "tests/validation/table_files.hpp"

using namespace trainsim;

namespace {

std::string write(const std::string& name, const std::string& text) {
  return test::write_table("layout-test-" + name, text);
}

using test::error_of;

// A 4-layer Llama-style model on 8 A100s: pipeline 2 x data 4, micro-batch 4, global batch 32,
// so 32 / (4 x 4) = 2 micro-batches per step, a multiple of the pipeline as the interleaved
// schedule needs; 4 blocks over 2 stages x 2 chunks is one block per chunk.
const char* kBase =
    "name: layout test\n"
    "model: {preset: llama2-7b, layers: 4, hidden: 1024, heads: 16, kv_heads: 16, ffn: 2816, vocab: 32000}\n"
    "device: a100-80gb\n"
    "training: {micro_batch: 4, global_batch: 32, seq_len: 1024, precision: bf16, attention: flash}\n"
    "parallel: {data: 4, pipeline: 2}\n"
    "cluster: {nodes: 1, gpus_per_node: 8}\n";

const std::string kHeader =
    "sequence length,micro batch,global batch,tensor parallelism,data parallelism,"
    "pipeline parallelism,iteration time (ms),vp,lora,targets\n";

bool has(const validation::RowResult& r, const std::string& set) {
  return std::find(r.sets.begin(), r.sets.end(), set) != r.sets.end();
}

// kBase laid out as `parallel` (in place of its data 4 x pipeline 2) and, when given, `cluster`.
std::string fsdp_base(const std::string& name, const std::string& parallel, const std::string& cluster = "") {
  std::string text = kBase;
  const std::string layout = "parallel: {data: 4, pipeline: 2}";
  if (!parallel.empty()) text.replace(text.find(layout), layout.size(), parallel);
  const std::string one_node = "cluster: {nodes: 1, gpus_per_node: 8}";
  if (!cluster.empty()) text.replace(text.find(one_node), one_node.size(), cluster);
  return write(name + ".yaml", text);
}

// Rows with an fsdp column, one per cell, laid out as `layout` (sequence to time, e.g.
// "1024,4,32,1,8,1,900,": 8 data ranks), compared against `base`.
std::vector<validation::RowResult> fsdp_rows(const std::string& base, const std::string& name,
                                             const std::vector<std::string>& cells,
                                             const std::string& layout = "1024,4,32,1,8,1,900,") {
  std::string csv = "sequence length,micro batch,global batch,tensor parallelism,data parallelism,"
                    "pipeline parallelism,iteration time (ms),fsdp\n";
  for (const auto& c : cells) csv += layout + c + "\n";
  validation::ColumnMap map;
  map.columns["fsdp"] = "fsdp";
  return validation::compare(validation::read_csv(write(name, csv)), map, base);
}

validation::ColumnMap layout_map() {
  validation::ColumnMap map;
  map.columns["virtual_stages"] = "vp";
  map.columns["lora"] = "lora";
  map.columns["lora_targets"] = "targets";
  return map;
}

}  // namespace

TEST_CASE("virtual_stages and lora cells become the schedule and adapter overrides", "[validation][compare]") {
  const std::string base = write("base.yaml", kBase);
  const auto t = validation::read_csv(write("rows.csv", kHeader +
      "1024,4,32,1,4,2,900,1,none,\n"         // 1F1B, every parameter trained
      "1024,4,32,1,4,2,800,2,none,\n"         // interleaved, 2 chunks per stage
      "1024,4,32,1,4,2,700,1,16,q v\n"        // LoRA rank 16 on q and v
      "1024,4,32,1,4,2,600,1,8,all-linear\n"  // LoRA rank 8 on every linear of the blocks
      "1024,4,32,1,4,2,500,1,8,q;k; v\n"));   // ';' and blanks both separate targets
  const auto r = validation::compare(t, layout_map(), base);
  REQUIRE(r.size() == 5);
  for (const auto& row : r) CHECK(row.skipped == "");
  // VP 1 on a 1F1B base: no schedule override, one chunk per stage.
  CHECK(has(r[0], "parallel.virtual_stages=1"));
  CHECK(std::none_of(r[0].sets.begin(), r[0].sets.end(),
                     [](const std::string& s) { return s.rfind("parallel.schedule", 0) == 0; }));
  CHECK(std::none_of(r[0].sets.begin(), r[0].sets.end(),
                     [](const std::string& s) { return s.rfind("training.lora", 0) == 0; }));
  // VP 2: Megatron's interleaved schedule with 2 model chunks per stage.
  CHECK(has(r[1], "parallel.schedule=interleaved"));
  CHECK(has(r[1], "parallel.virtual_stages=2"));
  CHECK(has(r[2], "training.lora.rank=16"));
  CHECK(has(r[2], "training.lora.targets=[q, v]"));
  CHECK(has(r[3], "training.lora.targets=all-linear"));
  CHECK(has(r[4], "training.lora.targets=[q, k, v]"));
  // A frozen base computes no weight gradients: each block's backward does about half the
  // GEMM FLOPs (input gradients only), so the LoRA rows' steps are shorter than full training.
  CHECK(r[2].predicted_s < r[0].predicted_s);
  CHECK(r[3].predicted_s < r[0].predicted_s);
  // The errors are against the made-up measured cells: (predicted - measured) / measured.
  CHECK(r[2].error == Approx((r[2].predicted_s - 0.7) / 0.7));
}

TEST_CASE("VP 1 turns an interleaved base back to 1F1B", "[validation][compare]") {
  std::string text = kBase;
  text.replace(text.find("pipeline: 2}"), 12, "pipeline: 2, schedule: interleaved, virtual_stages: 2}");
  const std::string base = write("base-interleaved.yaml", text);
  const auto t = validation::read_csv(write("vp1.csv", kHeader + "1024,4,32,1,4,2,900,1,none,\n"));
  const auto r = validation::compare(t, layout_map(), base);
  CHECK(r[0].skipped == "");
  CHECK(has(r[0], "parallel.schedule=1f1b"));
  CHECK(has(r[0], "parallel.virtual_stages=1"));
}

TEST_CASE("bad schedule and LoRA cells are located", "[validation][compare]") {
  const std::string base = write("base.yaml", kBase);
  auto msg = [&](const std::string& base_path, const std::string& cells) {
    const std::string path = write("bad.csv", kHeader + "1024,4,32,1,4,2,900," + cells + "\n");
    return error_of([&] { validation::compare(validation::read_csv(path), layout_map(), base_path); });
  };
  // "1024,4,32,1,4,2,900," is 20 characters: the vp cell starts at column 21.
  CHECK(msg(base, "0,none,").find("bad.csv:2:21: column 'vp': expected a positive whole number, got '0'") != std::string::npos);
  // "1,": the lora cell at column 23, the targets cell after "16," at column 26.
  CHECK(msg(base, "1,half,").find(":2:23: column 'lora': expected a LoRA rank (a positive whole number) or none, got 'half'") != std::string::npos);
  CHECK(msg(base, "1,16,{a: 1}").find(":2:26: column 'targets': expected LoRA targets") != std::string::npos);
  // A cell starts at its first non-blank character: " ; " at column 27.
  CHECK(msg(base, "1,16, ; ").find(":2:27: column 'targets': expected LoRA targets (q, k, v, o, gate, up, down or all-linear) separated by blanks or ';', got ';'") != std::string::npos);
  // Cells are checked before the base scenario is read, as the other columns are.
  CHECK(msg("no/such/base.yaml", "1,half,").find(":2:23: column 'lora'") != std::string::npos);
  // A base that trains adapters cannot be turned back into full training by a row.
  std::string text = kBase;
  text.replace(text.find("attention: flash}"), 17, "attention: flash, lora: {rank: 4, targets: [q]}}");
  const std::string lora_base = write("base-lora.yaml", text);
  CHECK(msg(lora_base, "1,none,").find(":2:23: column 'lora': expected a rank: the base scenario gives training.lora") != std::string::npos);
}

TEST_CASE("an fsdp cell keeps the base's other FSDP keys", "[validation][compare]") {
  // A base sharding with FSDP1's settings (bf16 reduction, flat parameters): a row's `yes`
  // shards over its data ranks, a size N makes HSDP of N, `no` turns FSDP off; the base's
  // dtypes and flat parameters stay (they would fall back to fp32 reduction and FSDP2's copy-out
  // if the cell replaced the whole mapping).
  const std::string base = fsdp_base("base-fsdp", "parallel: {data: 8, fsdp: {reduce_dtype: bf16, flat_parameter: true}}");
  const auto r = fsdp_rows(base, "fsdp.csv", {"yes", "2", "no"});
  REQUIRE(r.size() == 3);
  for (const auto& row : r) CHECK(row.skipped == "");
  CHECK(has(r[0], "parallel.fsdp.shard_size=8"));
  CHECK(has(r[1], "parallel.fsdp.shard_size=2"));
  CHECK(has(r[2], "parallel.fsdp=false"));
  // `yes` on this base is the base itself: the same step as a row with no fsdp column.
  validation::ColumnMap plain;
  const auto same = validation::compare(
      validation::read_csv(write("plain.csv",
                                 "sequence length,micro batch,global batch,tensor parallelism,"
                                 "data parallelism,pipeline parallelism,iteration time (ms)\n"
                                 "1024,4,32,1,8,1,900\n")),
      plain, base);
  CHECK(r[0].predicted_s == same[0].predicted_s);
  // A base without FSDP gets it whole from the cell.
  const auto r2 = fsdp_rows(fsdp_base("base-off", ""), "fsdp2.csv", {"yes", "2"}, "1024,4,32,1,4,2,900,");
  CHECK(has(r2[0], "parallel.fsdp=true"));
  CHECK(has(r2[1], "parallel.fsdp={shard_size: 2}"));
}

TEST_CASE("an fsdp cell takes FSDP's sharding-strategy names", "[validation][compare]") {
  // llm-foundry's tables print PyTorch's ShardingStrategy: FULL_SHARD reshards after forward,
  // SHARD_GRAD_OP keeps the gathered parameters until backward (ZeRO-2-like), HYBRID_SHARD
  // shards within a node of the base's 4 GPUs, NO_SHARD is no FSDP. Each runs.
  const std::string base = fsdp_base("base-strategy", "parallel: {data: 8, fsdp: {reshard_after_forward: false}}",
                                     "cluster: {nodes: 2, gpus_per_node: 4}");
  const auto r = fsdp_rows(base, "strategy.csv", {"FULL_SHARD", "SHARD_GRAD_OP", "HYBRID_SHARD", "NO_SHARD"});
  REQUIRE(r.size() == 4);
  for (const auto& row : r) CHECK(row.skipped == "");
  CHECK(has(r[0], "parallel.fsdp.shard_size=8"));
  CHECK(has(r[0], "parallel.fsdp.reshard_after_forward=true"));
  CHECK(has(r[1], "parallel.fsdp.reshard_after_forward=false"));
  CHECK(has(r[2], "parallel.fsdp.shard_size=4"));
  CHECK(has(r[2], "parallel.fsdp.reshard_after_forward=true"));
  CHECK(has(r[3], "parallel.fsdp=false"));
  // Keeping the gathered parameters saves the backward's all-gathers: never slower.
  CHECK(r[1].predicted_s <= r[0].predicted_s);
}

TEST_CASE("a sequence_parallel cell turns Megatron's sequence parallelism on or off", "[validation][compare]") {
  const std::string base = write("base.yaml", kBase);
  const std::string header =
      "sequence length,micro batch,global batch,tensor parallelism,data parallelism,"
      "pipeline parallelism,iteration time (ms),sp\n";
  validation::ColumnMap map;
  map.columns["sequence_parallel"] = "sp";
  // Tensor 2 x data 2 x pipeline 2 on the base's 8 GPUs.
  const auto r = validation::compare(
      validation::read_csv(write("sp.csv", header + "1024,4,32,2,2,2,900,yes\n1024,4,32,2,2,2,900,false\n")), map, base);
  REQUIRE(r.size() == 2);
  CHECK(r[0].skipped == "");
  CHECK(r[1].skipped == "");
  CHECK(has(r[0], "parallel.sequence_parallel=true"));
  CHECK(has(r[1], "parallel.sequence_parallel=false"));
  // "1024,4,32,2,2,2,900," is 20 characters: the sp cell starts at column 21.
  const std::string bad = write("sp-bad.csv", header + "1024,4,32,2,2,2,900,on\n");
  CHECK(error_of([&] { validation::compare(validation::read_csv(bad), map, base); })
            .find("sp-bad.csv:2:21: column 'sp': expected yes, no, true or false, got 'on'") != std::string::npos);
}
