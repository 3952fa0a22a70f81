#!/usr/bin/env bash
# import_round_trip.sh TRAINSIM -- the Megatron-LM arguments of GPT-3 175B
# (tests/data/import/gpt3_175b.args) imported for 1024 A100-80GB play the same step as
# scenarios/parallel/06_gpt3_175b_megatron.yaml: every field of the JSON report agrees except
# the names and the optimizer's name (Megatron's adam is AdamW; the same 12 bytes of state).
# Then every shipped example config imports to a scenario that `trainsim validate` accepts.
set -eu
TS=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-import.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$TS" import megatron tests/data/import/gpt3_175b.args --gpus 1024 --device a100-80gb \
  -o "$work/imported.yaml" 2>/dev/null
"$TS" run "$work/imported.yaml" --format json --no-diagnosis >"$work/imported.json"
"$TS" run scenarios/parallel/06_gpt3_175b_megatron.yaml --format json --no-diagnosis >"$work/shipped.json"
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
sys.exit(1 if diff or len(a) < 100 else 0)
PY
for c in "megatron tests/data/import/llama2_7b.args --gpus 8" \
         "deepspeed tests/data/import/ds_zero2_offload.json --model llama2-7b --seq-len 4096" \
         "hf-trainer tests/data/import/training_args.json --model models/hf/Llama-2-7b-hf/config.json --gpus 8 --seq-len 2048" \
         "torchtitan tests/data/import/llama3_8b.toml --gpus 8"; do
  # shellcheck disable=SC2086
  "$TS" import $c -o "$work/example.yaml" 2>/dev/null
  "$TS" validate "$work/example.yaml" >/dev/null || { echo "FAIL: import $c does not validate"; exit 1; }
done
echo "ok"
