// Mixture-of-experts Hugging Face imports (qwen2_moe, qwen3_moe, olmoe, deepseek_v3, mixtral): parameter
// counts computed by hand from each shipped config.json, the structure each family builds, and
// located errors for the new fields.
#include <catch2/catch.hpp>

#include "hf_files.hpp"

using namespace trainsim;
using namespace trainsim::models;
using namespace trainsim::test;

namespace {

std::string error_text(const std::string& json) { return error_of(json).what(); }

}  // namespace

TEST_CASE("MoE HF configs give the parameter counts computed from their configs",
          "[hf][moe][oracle]") {
  // Mixtral-8x7B: h 4096, 32 layers, 32 heads of 128, 8 KV heads, f 14336, 8 experts, V 32000.
  //   attn 4096*(4096 + 2*1024) + 4096*4096 = 41,943,040; norms 2*4096 = 8,192;
  //   experts 8 * 3*4096*14336 = 1,409,286,144; router 8*4096 = 32,768;
  //   block 1,451,270,144 x 32 = 46,440,644,608; embed + untied head 2*32000*4096 =
  //   262,144,000; ln_f 4,096: 46,702,792,704.
  CHECK(hf("Mixtral-8x7B-v0.1").parameters() == 46'702'792'704);
  // Mixtral-8x22B: h 6144, 56 layers, 48 heads of 128, 8 KV heads, f 16384, 8 experts, V 32768.
  //   attn 6144*(6144 + 2*1024) + 6144*6144 = 88,080,384; norms 2*6144 = 12,288;
  //   experts 8 * 3*6144*16384 = 2,415,919,104; router 8*6144 = 49,152;
  //   block 2,504,060,928 x 56 = 140,227,411,968; embed + untied head 2*32768*6144 =
  //   402,653,184; ln_f 6,144: 140,630,071,296 (the model card's 141B).
  CHECK(hf("Mixtral-8x22B-v0.1").parameters() == 140'630'071'296);
  // Qwen1.5-MoE-A2.7B: h 2048, 24 layers, 16 heads, V 151936, 60 experts of 1408, shared 5632.
  //   attn 3*(2048*2048 + 2048) + 2048*2048 = 16,783,360; norms 4,096;
  //   experts 60 * 3*2048*1408 = 519,045,120; router 60*2048 = 122,880;
  //   shared 3*2048*5632 = 34,603,008; shared gate 2,048; MLP 553,773,056;
  //   block 570,560,512 x 24 = 13,693,452,288; embed + head 2*151936*2048 = 622,329,856;
  //   ln_f 2,048: 14,315,784,192 (the model card's 14.3B).
  CHECK(hf("Qwen1.5-MoE-A2.7B").parameters() == 14'315'784'192);
  // OLMoE-1B-7B-0924: h 2048, 16 layers, 16 heads, V 50304, 64 experts of 1024.
  //   attn 4*2048*2048 = 16,777,216 + q_norm 2048 + k_norm 2048 = 16,781,312; norms 4,096;
  //   experts 64 * 3*2048*1024 = 402,653,184; router 64*2048 = 131,072;
  //   block 419,569,664 x 16 = 6,713,114,624; embed + head 2*50304*2048 = 206,045,184;
  //   ln_f 2,048: 6,919,161,856 (the paper's 6.9B).
  CHECK(hf("OLMoE-1B-7B-0924").parameters() == 6'919'161'856);
  // Qwen3-30B-A3B: h 2048, 48 layers, 32 heads of 128 (q 4096 wide), 4 KV heads, V 151936,
  // 128 experts of 768, no shared expert.
  //   attn 2048*4096 + 2*2048*512 + 4096*2048 = 18,874,368; q/k norms counted as OLMoE's
  //   (over the whole projections) 4096 + 512 = 4,608; norms 4,096;
  //   experts 128 * 3*2048*768 = 603,979,776; router 128*2048 = 262,144;
  //   block 623,124,992 x 48 = 29,909,999,616; embed + head 2*151936*2048 = 622,329,856;
  //   ln_f 2,048: 30,532,331,520. Qwen3's norms are per head (128 + 128 weights per block), so
  //   the published 30,532,122,624 is 48 x 4,352 = 208,896 fewer.
  CHECK(hf("Qwen3-30B-A3B").parameters() == 30'532'331'520);
  // DeepSeek-V3 without the MTP module: h 7168, 61 layers, 128 heads, V 129280.
  //   MLA: q_a 7168*1536 = 11,010,048; q_a norm 1,536; q_b 1536*128*192 = 37,748,736;
  //   kv_a 7168*(512 + 64) = 4,128,768; kv_a norm 512; kv_b 512*128*(128 + 128) =
  //   16,777,216; o 128*128*7168 = 117,440,512: 187,107,328. Norms 2*7168 = 14,336.
  //   dense MLP 3*7168*18432 = 396,361,728: dense block 583,483,392 x 3 = 1,750,450,176.
  //   MoE: 256 experts * 3*7168*2048 = 11,274,289,152; shared 3*7168*2048 = 44,040,192;
  //   router 256*7168 = 1,835,008; score bias 256: 11,320,164,608;
  //   MoE block 11,507,286,272 x 58 = 667,422,603,776.
  //   embed + head 2*129280*7168 = 1,853,358,080; ln_f 7,168: 671,026,419,200 (the 671B of
  //   the DeepSeek-V3 report, which counts the 14B MTP module apart).
  CHECK(hf("DeepSeek-V3").parameters() == 671'026'419'200);
}

TEST_CASE("MoE HF families build their blocks as published", "[hf][moe]") {
  const Model ds = hf("DeepSeek-V3");
  // The first three blocks are dense, the rest MoE with a shared expert.
  CHECK(layer(ds, "block.2.mlp").experts == 0);
  CHECK(layer(ds, "block.2.mlp").params == 396'361'728);
  const Layer& moe = layer(ds, "block.3.mlp");
  CHECK(moe.experts == 256);
  CHECK(moe.top_k == 8);
  CHECK(moe.expert_params == 11'274'289'152);
  CHECK(moe.params == 11'320'164'608);
  // MLA: per-head up projections and o split, down projections and norms replicated.
  const Layer& mla = layer(ds, "block.3.attn");
  CHECK(mla.params == 187'107'328);
  CHECK(mla.params_split == 37'748'736 + 16'777'216 + 117'440'512);
  // FLOPs at s = 128: projections 2*128*(11,010,048 + 37,748,736 + 4,128,768 + 16,777,216 +
  // 117,440,512) = 2*128*187,105,280 = 47,898,951,680; core 2*128^2*128*(192 + 128) = 1,342,177,280.
  CHECK(mla.flops == Approx(47'898'951'680.0 + 1'342'177'280.0).epsilon(1e-12));

  const Model qwen = hf("Qwen1.5-MoE-A2.7B");
  const Layer& q = layer(qwen, "block.0.mlp");
  CHECK(q.expert_params == 519'045'120);
  // Saved at s = 128, bf16: input 2*128*2048 + router probs 4*128*60 + gate output 2*128
  //   + 4 experts * 3 * 2*128*1408 (routed) + 3 * 2*128*5632 (shared).
  CHECK(q.saved.value == 524'288 + 30'720 + 256 + 4'325'376 + 4'325'376);
  CHECK(q.expert_saved.value == 4'325'376);
  // FLOPs: router 2*128*2048*60 + 4 * 6*128*2048*1408 routed + 6*128*2048*5632 shared
  //   + 2*128*2048 gate.
  CHECK(q.expert_flops == Approx(4.0 * 6 * 128 * 2048 * 1408));
  CHECK(q.flops == Approx(2.0 * 128 * 2048 * 60 + 4.0 * 6 * 128 * 2048 * 1408 +
                          6.0 * 128 * 2048 * 5632 + 2.0 * 128 * 2048));

  // OLMoE: QK norms over the whole Q and K widths.
  const Model olmoe = hf("OLMoE-1B-7B-0924");
  CHECK(layer(olmoe, "block.0.attn").params == 4 * 2048 * 2048 + 2 * 2048);
  CHECK(layer(olmoe, "block.0.mlp").top_k == 8);
}

TEST_CASE("qwen2_moe dense layers follow decoder_sparse_step and mlp_only_layers", "[hf][moe]") {
  const std::string base = R"({"model_type": "qwen2_moe", "hidden_size": 64,
    "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 4,
    "vocab_size": 100, "num_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 32, "shared_expert_intermediate_size": 64, )";
  // step 2: blocks 1 and 3 sparse ((i + 1) % 2 == 0); mlp_only_layers [3] makes 3 dense.
  const Model m =
      build("model: {hf_config: " +
            write_json(base + R"("decoder_sparse_step": 2, "mlp_only_layers": [3]})") + "}");
  CHECK(layer(m, "block.0.mlp").experts == 0);
  CHECK(layer(m, "block.1.mlp").experts == 4);
  CHECK(layer(m, "block.2.mlp").experts == 0);
  CHECK(layer(m, "block.3.mlp").experts == 0);
  // A dense block: 3*64*128 (intermediate_size, no shared expert).
  CHECK(layer(m, "block.0.mlp").params == 3 * 64 * 128);
  // A sparse block: 4 * 3*64*32 + router 4*64 + shared 3*64*64 + gate 64.
  CHECK(layer(m, "block.1.mlp").params == 4 * 3 * 64 * 32 + 4 * 64 + 3 * 64 * 64 + 64);

  CHECK_THAT(error_text(base + R"("mlp_only_layers": [4]})"),
             Catch::Contains("'mlp_only_layers': expected layer indices from 0 to 3, got 4"));
  CHECK_THAT(error_text(base + R"("mlp_only_layers": 1})"),
             Catch::Contains("expected an array of layer indices"));
}

TEST_CASE("deepseek_v3 options and errors", "[hf][moe][errors]") {
  const std::string base = R"({"model_type": "deepseek_v3", "hidden_size": 64,
    "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
    "vocab_size": 100, "n_routed_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 16, "first_k_dense_replace": 0, "kv_lora_rank": 8,
    "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8, )";
  // q_lora_rank null: one q projection 64 * 4*(8 + 4) = 3,072; kv_a 64*(8 + 4) = 768; norm 8;
  // kv_b 8 * 4*(8 + 8) = 512; o 4*8*64 = 2,048: 6,408.
  const Model m = build("model: {hf_config: " +
                        write_json(base + R"("q_lora_rank": null, "n_shared_experts": 0})") + "}");
  CHECK(layer(m, "block.0.attn").params == 6'408);
  // No shared expert: 4 * 3*64*16 + router 4*64 + score bias 4.
  CHECK(layer(m, "block.0.mlp").params == 4 * 3 * 64 * 16 + 4 * 64 + 4);
  CHECK_THAT(error_text(base + R"("attention_bias": true})"),
             Catch::Contains("'attention_bias': true is not supported"));
  std::string eight = base;
  const std::string two = "\"num_experts_per_tok\": 2";
  eight.replace(eight.find(two), two.size(), "\"num_experts_per_tok\": 8");
  CHECK_THAT(error_text(eight + "\"q_lora_rank\": 16}"),
             Catch::Contains("must be at most the number of experts (4)"));
}
