#!/usr/bin/env bash
# import_variants.sh TRAINSIM -- every setting an importer maps, one variant at a time on its
# example config, gives a scenario `trainsim validate` accepts: a combination the importer
# writes but the scenario loader refuses would point the user at a line they never wrote.
# Variants: torchtitan's parallelisms and dtypes, LitGPT's precisions on 1 and 4 GPUs, TRL's
# bases and attention, llm-foundry's sharding strategies and mixed-precision modes.
set -eu
TS=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-variants.XXXXXX")
trap 'rm -rf "$work"' EXIT
n=0
check() {  # check KIND FILE [import options]
  local kind=$1 file=$2
  shift 2
  "$TS" import "$kind" "$file" "$@" -o "$work/v.yaml" 2>/dev/null ||
    { echo "FAIL: import $kind $(head -c 300 "$file") $*"; exit 1; }
  "$TS" validate "$work/v.yaml" >/dev/null 2>&1 ||
    { echo "FAIL: import $kind $file $*:"; "$TS" validate "$work/v.yaml" 2>&1 | tail -1; exit 1; }
  n=$((n + 1))
}
titan='[model]
name = "llama3"
flavor = "8B"
'
for extra in '' '[parallelism]
context_parallel_degree = 2' '[parallelism]
tensor_parallel_degree = 2' '[parallelism]
pipeline_parallel_degree = 2
pipeline_parallel_schedule = "Interleaved1F1B"' '[training]
dtype = "bfloat16"' '[parallelism]
data_parallel_shard_degree = 1
data_parallel_replicate_degree = 8' '[parallelism]
data_parallel_replicate_degree = 2' '[training]
enable_cpu_offload = true' '[model]
converters = ["float8"]' '[compile]
enable = true'; do
  if [ "$extra" = '[model]
converters = ["float8"]' ]; then
    printf '[model]\nname = "llama3"\nflavor = "8B"\nconverters = ["float8"]\n' >"$work/t.toml"
  else
    printf '%s%s\n' "$titan" "$extra" >"$work/t.toml"
  fi
  check torchtitan "$work/t.toml" --gpus 8
done
printf '%s[optimizer]\nearly_step_in_backward = true\n' "$titan" >"$work/t.toml"
check torchtitan "$work/t.toml" --gpus 1
for p in bf16-true bf16-mixed 16-true 16-mixed 32-true; do
  for d in 1 4; do
    sed "s/^precision: .*/precision: $p/; s/^devices: .*/devices: $d/" tests/data/import/litgpt_l2_7b_lora.yaml >"$work/l.yaml"
    check litgpt "$work/l.yaml" --seq-len 1024
    grep -v '^lora_' "$work/l.yaml" >"$work/f.yaml"
    check litgpt "$work/f.yaml" --seq-len 1024
  done
done
for q in bnb.nf4 bnb.nf4-dq bnb.fp4 bnb.int8-training; do
  sed "s/^quantize:.*/quantize: $q/" tests/data/import/litgpt_l2_7b_lora.yaml >"$work/l.yaml"
  check litgpt "$work/l.yaml" --seq-len 1024
done
for mod in 's/^dtype: .*/dtype: float32/' 's/^load_in_4bit: .*/load_in_8bit: true/' \
           's/^attn_implementation: .*/attn_implementation: eager/' 's/^dtype: .*/dtype: float16/; s/^packing: .*/fp16: true/'; do
  sed "$mod" tests/data/import/trl_sft_qlora.yaml >"$work/r.yaml"
  check trl "$work/r.yaml" --gpus 1
done
grep -v 'load_in_4bit\|use_bnb_nested_quant\|^use_peft\|^lora_' tests/data/import/trl_sft_qlora.yaml >"$work/r.yaml"
printf 'fsdp: full_shard auto_wrap\n' >>"$work/r.yaml"
check trl "$work/r.yaml" --gpus 8
for mp in DEFAULT PURE FULL; do
  for st in FULL_SHARD SHARD_GRAD_OP HYBRID_SHARD _HYBRID_SHARD_ZERO2 NO_SHARD; do
    sed "s/mixed_precision: PURE/mixed_precision: $mp/; s/sharding_strategy: FULL_SHARD/sharding_strategy: $st/" \
      tests/data/import/llm_foundry_mpt_7b.yaml >"$work/m.yaml"
    check llm-foundry "$work/m.yaml" --gpus 32
  done
done
check torchtune tests/data/import/torchtune_l32_3b_full_adamw8bit.yaml --model llama3-8b --gpus 1
# On 8 GPUs without what the distributed recipe cannot combine with FSDP here (the optimizer in
# backward, activation offloading), with each optimizer component.
for opt in torch.optim.AdamW torch.optim.SGD; do
  grep -v 'optimizer_in_bwd\|enable_activation_offloading' tests/data/import/torchtune_l32_3b_full_adamw8bit.yaml |
    sed "s/_component_: torchao.prototype.low_bit_optim.AdamW8bit/_component_: $opt/" >"$work/u.yaml"
  printf "custom_sharded_layers: ['tok_embeddings', 'output']\nfsdp_cpu_offload: True\n" >>"$work/u.yaml"
  check torchtune "$work/u.yaml" --model llama3-8b --gpus 8
done
echo "ok: $n variants import to valid scenarios"
