#!/usr/bin/env bash
# import_round_trip.sh TRAINSIM -- the Megatron-LM arguments of GPT-3 175B
# (tests/data/import/gpt3_175b.args) imported for 1024 A100-80GB play the same step as
# scenarios/parallel/06_gpt3_175b_megatron.yaml: every field of the JSON report agrees except
# the names and the optimizer's name (Megatron's adam is AdamW; the same 12 bytes of state).
# A torchtitan job in its 2024 layout (tests/data/import/torchtitan_2024_llama3_8b.toml)
# imported for 8 H100 plays the step of scenarios/validation/torchtitan_h100_fsdp.yaml on the
# H100 preset (the base's 96 GB, 500 W board is no preset), its AdamW foreach as torchtitan ran it.
# A torchtune config (tests/data/import/torchtune_l32_3b_full_adamw8bit.yaml) plays the step of
# its memory case, scenarios/validation/memory/tt_l32_3b_full_a100_adamw8bit.yaml. A LitGPT
# config (tests/data/import/litgpt_l2_7b_lora.yaml) plays scenarios/validation/litgpt/
# l2_7b_lora_mb1.yaml with today's RMSNorm (modules: eager; the 2023 Lit-GPT's did not upcast).
# An llm-foundry YAML (tests/data/import/llm_foundry_mpt_7b.yaml) plays scenarios/validation/
# mpt_foundry_a100_40gb.yaml on the A100 40GB preset (the base sets the Triton kernel's rates).
# Then every shipped example config imports to a scenario that `trainsim validate` accepts.
set -eu
TS=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-import.XXXXXX")
trap 'rm -rf "$work"' EXIT
# same IMPORTED_YAML SHIPPED_YAML [--set ...]: the two reports agree but for the names (an
# out-of-memory report, exit code 3, is compared too: it must be the same OOM).
same() {
  local imported=$1 shipped=$2 rc=0
  shift 2
  "$TS" run "$imported" --format json --no-diagnosis >"$work/imported.json" || rc=$?
  [ "$rc" -le 0 ] || [ "$rc" -eq 3 ] || { echo "FAIL: run $imported: exit $rc"; exit 1; }
  rc=0
  "$TS" run "$shipped" "$@" --format json --no-diagnosis >"$work/shipped.json" || rc=$?
  [ "$rc" -le 0 ] || [ "$rc" -eq 3 ] || { echo "FAIL: run $shipped: exit $rc"; exit 1; }
  python3 - "$work/imported.json" "$work/shipped.json" <<'PY'
import json, sys
def flat(v, p=""):
    if isinstance(v, dict):
        return {k2: v2 for k, x in v.items() for k2, v2 in flat(x, p + "." + k).items()}
    if isinstance(v, list):
        return {k2: v2 for i, x in enumerate(v) for k2, v2 in flat(x, "%s[%d]" % (p, i)).items()}
    return {p: v}
a, b = (flat(json.load(open(f))) for f in sys.argv[1:3])
allowed = {".name", ".model.name", ".training.optimizer"}
diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k) and k not in allowed)
for k in diff:
    print("differs: %s imported %r shipped %r" % (k, a.get(k), b.get(k)))
print("compared %d report fields; step_time_s %s, peak_bytes %s" % (len(b), a[".step_time_s"], a[".peak_bytes"]))
sys.exit(1 if diff or len(a) < 90 else 0)
PY
}
"$TS" import megatron tests/data/import/gpt3_175b.args --gpus 1024 --device a100-80gb \
  -o "$work/imported.yaml" 2>/dev/null
same "$work/imported.yaml" scenarios/parallel/06_gpt3_175b_megatron.yaml
"$TS" import torchtitan tests/data/import/torchtitan_2024_llama3_8b.toml --gpus 8 --device h100-80gb \
  -o "$work/titan.yaml" 2>/dev/null
same "$work/titan.yaml" scenarios/validation/torchtitan_h100_fsdp.yaml --set device=h100-80gb \
  --set training.optimizer_impl=foreach
"$TS" import torchtune tests/data/import/torchtune_l32_3b_full_adamw8bit.yaml --gpus 1 --device a100-80gb \
  --model models/hf/Llama-3.2-3B/config.json -o "$work/tune.yaml" 2>/dev/null
same "$work/tune.yaml" scenarios/validation/memory/tt_l32_3b_full_a100_adamw8bit.yaml
"$TS" import litgpt tests/data/import/litgpt_l2_7b_lora.yaml --device a100-40gb --seq-len 1304 \
  -o "$work/lit.yaml" 2>/dev/null
same "$work/lit.yaml" scenarios/validation/litgpt/l2_7b_lora_mb1.yaml --set training.modules=eager
"$TS" import llm-foundry tests/data/import/llm_foundry_mpt_7b.yaml --gpus 8 --device a100-40gb \
  -o "$work/mpt.yaml" 2>/dev/null
same "$work/mpt.yaml" scenarios/validation/mpt_foundry_a100_40gb.yaml --set device=a100-40gb
for c in "megatron tests/data/import/llama2_7b.args --gpus 8" \
         "deepspeed tests/data/import/ds_zero2_offload.json --model llama2-7b --seq-len 4096" \
         "hf-trainer tests/data/import/training_args.json --model models/hf/Llama-2-7b-hf/config.json --gpus 8 --seq-len 2048" \
         "torchtitan tests/data/import/llama3_8b.toml --gpus 8" \
         "torchtitan tests/data/import/torchtitan_2024_llama3_8b.toml --gpus 64" \
         "torchtune tests/data/import/torchtune_l32_3b_full_adamw8bit.yaml --model llama3-8b --gpus 1" \
         "litgpt tests/data/import/litgpt_l2_7b_lora.yaml --seq-len 2048" \
         "llm-foundry tests/data/import/llm_foundry_mpt_7b.yaml --gpus 32" \
         "trl tests/data/import/trl_sft_qlora.yaml --gpus 1"; do
  # shellcheck disable=SC2086
  "$TS" import $c -o "$work/example.yaml" 2>/dev/null
  "$TS" validate "$work/example.yaml" >/dev/null || { echo "FAIL: import $c does not validate"; exit 1; }
done
echo "ok"
