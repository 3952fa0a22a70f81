#!/usr/bin/env bash
# sweep_cli.sh TRAINSIM CHECK — end-to-end checks of `trainsim sweep | merge | fit | plan`,
# run from the repository root. Each CHECK is one ctest test (see CMakeLists.txt).
set -euo pipefail
ts=$1
check=$2
grid=tests/sweep/data/grid.yaml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
same() { cmp "$1" "$2" || fail "$1 and $2 differ"; }

case $check in
determinism)
  # Byte-identical files whatever the number of worker threads.
  "$ts" sweep $grid --csv $work/j1.csv --jsonl $work/j1.jsonl -j 1 > $work/j1.txt
  "$ts" sweep $grid --csv $work/j2.csv --jsonl $work/j2.jsonl -j 2 > $work/j2.txt
  "$ts" sweep $grid --csv $work/j4.csv --jsonl $work/j4.jsonl -j 4 > /dev/null
  same $work/j1.csv $work/j2.csv; same $work/j1.jsonl $work/j2.jsonl
  same $work/j1.csv $work/j4.csv; same $work/j1.jsonl $work/j4.jsonl
  same $work/j1.txt $work/j2.txt
  [ "$(wc -l < $work/j1.csv)" -eq 34 ] || fail "expected a header and 33 rows"
  grep -q '^33 of 33 points: ' $work/j1.txt || fail "summary line"
  # A row reproduces with `trainsim run BASE --set ...`.
  row=$(sed -n 2p $work/j1.csv)
  want=$(echo "$row" | cut -d, -f9)
  got=$("$ts" run tests/sweep/data/toy_fit.yaml --set training.micro_batch=16 --set training.gradient_accumulation=1 \
        --set device.memory=64MiB --format json | grep '"step_time_s"' | head -1 | sed 's/.*: //; s/,$//')
  [ "$want" = "$got" ] || fail "point 0 step time $want, trainsim run says $got"
  ;;
resume)
  "$ts" sweep $grid --csv $work/full.csv --jsonl $work/full.jsonl -j 2 > /dev/null
  set +e
  "$ts" sweep $grid --csv $work/r.csv --jsonl $work/r.jsonl -j 2 --stop-after 10 > /dev/null 2>&1
  rc=$?
  set -e
  [ $rc -eq 130 ] || fail "an interrupted sweep exits 130, got $rc"
  [ "$(wc -l < $work/r.csv)" -eq 11 ] || fail "10 rows after --stop-after 10"
  printf '27,partial' >> $work/r.csv   # a record cut mid-write is dropped on resume
  "$ts" sweep $grid --csv $work/r.csv --jsonl $work/r.jsonl -j 2 --resume > /dev/null
  same $work/full.csv $work/r.csv; same $work/full.jsonl $work/r.jsonl
  # Resuming a finished sweep changes nothing; a different sweep's file is refused.
  "$ts" sweep $grid --csv $work/r.csv --resume -j 1 > /dev/null
  same $work/full.csv $work/r.csv
  set +e
  out=$("$ts" sweep scenarios/sweeps/13b_batch_x_pipeline.yaml --csv $work/r.csv --resume 2>&1)
  rc=$?
  set -e
  [ $rc -eq 2 ] && echo "$out" | grep -q "header differs" || fail "resume of another sweep: $rc $out"
  # A shard resumes under its tag; another part's file is refused.
  "$ts" sweep $grid --shard 1/2 --csv $work/s.csv --jsonl $work/s.jsonl -j 1 > /dev/null
  set +e
  "$ts" sweep $grid --shard 1/2 --csv $work/p.csv --jsonl $work/p.jsonl -j 1 --stop-after 5 > /dev/null 2>&1
  set -e
  "$ts" sweep $grid --shard 1/2 --csv $work/p.csv --jsonl $work/p.jsonl -j 2 --resume > /dev/null
  same $work/s.csv $work/p.csv; same $work/s.jsonl $work/p.jsonl
  set +e
  out=$("$ts" sweep $grid --shard 2/2 --csv $work/p.csv --resume 2>&1)
  rc=$?
  set -e
  [ $rc -eq 2 ] && echo "$out" | grep -q "shard tag differs" || fail "resume of another shard: $rc $out"
  ;;
sigterm)
  # A real signal: whenever it lands, the files stay a valid prefix and --resume completes them.
  sweep=scenarios/sweeps/data_vs_pipeline_batch_limit.yaml
  "$ts" sweep $sweep --csv $work/full.csv -j 1 > /dev/null
  # Starts the sweep, signals it as "$1" says once it has started writing, checks the exit code,
  # and resumes it to the full result.
  signalled() {
    rm -f $work/s.csv
    "$ts" sweep $sweep --csv $work/s.csv -j 1 > /dev/null 2>&1 &
    pid=$!
    if [ "$1" = once ]; then
      # Once the run has started writing (slow under sanitizers), or after 20 s at most.
      for _ in $(seq 200); do [ -s $work/s.csv ] && break; sleep 0.1; done
      kill -TERM $pid 2>/dev/null || true
    else
      # Until it exits, busy-waiting (the whole sweep takes some 70 ms): a signal that lands
      # after the last point (files closing, digest printing) must not get the default action's
      # 143, as it did on every try before the handler stayed installed to exit.
      until [ -s $work/s.csv ] || ! kill -0 $pid 2>/dev/null; do :; done
      while kill -TERM $pid 2>/dev/null; do :; done
    fi
    set +e
    wait $pid
    rc=$?
    set -e
    [ $rc -eq 130 ] || [ $rc -eq 0 ] || fail "SIGTERM ($1): exit 130 (or 0 if done), got $rc"
    "$ts" sweep $sweep --csv $work/s.csv -j 2 --resume > /dev/null
    same $work/full.csv $work/s.csv
  }
  signalled once
  signalled repeatedly
  ;;
shards)
  if ! command -v parallel > /dev/null; then
    [ "${TRAINSIM_SKIP_PARALLEL:-0}" = 1 ] && { echo "skipped: GNU parallel not installed"; exit 0; }
    fail "GNU parallel is not installed (apt-get install parallel), or set TRAINSIM_SKIP_PARALLEL=1"
  fi
  "$ts" sweep $grid --csv $work/one.csv --jsonl $work/one.jsonl -j 2 > /dev/null
  parallel --will-cite -j 4 "$ts" sweep $grid --shard {}/4 --csv $work/s{}.csv --jsonl $work/s{}.jsonl -j 1 ">" /dev/null ::: 1 2 3 4
  "$ts" merge $work/m.csv $work/s1.csv $work/s2.csv $work/s3.csv $work/s4.csv
  "$ts" merge $work/m.jsonl $work/s4.jsonl $work/s3.jsonl $work/s2.jsonl $work/s1.jsonl
  same $work/one.csv $work/m.csv; same $work/one.jsonl $work/m.jsonl
  ;;
plan_megatron)
  # The planner finds a layout at least as fast as the published Megatron-LM one.
  s=scenarios/parallel/06_gpt3_175b_megatron.yaml
  own=$("$ts" run $s --format json | grep '"step_time_s"' | head -1 | sed 's/.*: //; s/,$//')
  "$ts" plan $s --gpus 1024 --top 3 --format json -j 2 > $work/plan.json
  best=$(grep '"step_time_s"' $work/plan.json | head -1 | sed 's/.*: //; s/,$//')
  awk -v b="$best" -v o="$own" 'BEGIN { exit !(b + 0 > 0 && b + 0 <= o + 0) }' || fail "best $best s > Megatron's $own s"
  # Its overrides reproduce it.
  mapfile -t sets < <(awk '/"set"/ { on = 1; next } on && /\]/ { exit } on' $work/plan.json | sed 's/^ *"//; s/",\{0,1\}$//')
  args=(); for x in "${sets[@]}"; do args+=(--set "$x"); done
  again=$("$ts" run $s "${args[@]}" --format json | grep '"step_time_s"' | head -1 | sed 's/.*: //; s/,$//')
  [ "$again" = "$best" ] || fail "reproduced step $again != planned $best"
  # The text output explains the ranking (on the small problem: a second 1024-GPU search would
  # double the check's time).
  "$ts" plan tests/sweep/data/plan_small.yaml --gpus 8 --top 2 -j 2 | grep -q "why 1 beats 2: " || fail "no explanation"
  ;;
plan_memory)
  # Under --objective memory every layout's leanest ZeRO/recomputation rung is ranked: the best
  # peak is no higher than the scenario's own layout with ZeRO-3 and full recomputation.
  s=tests/sweep/data/plan_small.yaml
  "$ts" plan $s --gpus 8 --objective memory --top 5 --format json -j 2 > $work/plan.json
  peaks=$(grep '"peak_bytes"' $work/plan.json | sed 's/.*: //; s/,$//')
  [ "$(echo "$peaks" | wc -l)" -eq 5 ] || fail "expected 5 ranked layouts"
  [ "$peaks" = "$(echo "$peaks" | sort -n)" ] || fail "not ranked by peak: $peaks"
  lean=$("$ts" run $s --set parallel.zero=3 --set training.recompute=full --format json | grep '"peak_bytes"' | head -1 | sed 's/.*: //; s/,$//')
  best=$(echo "$peaks" | head -1)
  [ "$best" -le "$lean" ] || fail "best peak $best > $lean of the own layout at ZeRO-3 + full recomputation"
  ;;
scenarios)
  for f in scenarios/sweeps/*.yaml; do
    "$ts" sweep "$f" --csv $work/x.csv -j 2 > $work/x.txt || fail "$f"
    grep -q ' 0 invalid$' $work/x.txt || fail "$f has invalid points"
  done
  ;;
bench)
  # The speed checks' sweep files stay valid: a shard of each runs and every point plays.
  for f in bench/sweeps/*.yaml; do
    "$ts" sweep "$f" --shard 1/1024 --csv $work/x.csv -j 2 > $work/x.txt || fail "$f"
    grep -Eq '^[0-9]+ of [0-9]+ points: ' $work/x.txt || fail "$f: no summary"
    [ "$(wc -l < $work/x.csv)" -gt 90 ] || fail "$f: too few points in the shard"
  done
  ;;
data_vs_pipeline)
  # The largest micro-batch that fits: the same for every data width, larger for deeper pipelines.
  "$ts" sweep scenarios/sweeps/data_vs_pipeline_batch_limit.yaml --csv $work/d.csv -j 2 > /dev/null
  awk -F, 'NR > 1 && $5 == "fits" { k = $2; if ($4 > best[k "," $3]) best[k "," $3] = $4 }
           END { for (p = 2; p <= 8; p *= 2) { for (d = 2; d <= 4; d *= 2)
                   if (best[p "," d] != best[p ",1"]) { print "p" p " d" d " differs"; exit 1 }
                 if (p > 2 && best[p ",1"] <= best[p / 2 ",1"]) { print "p" p " not larger"; exit 1 } } }' $work/d.csv \
    || fail "data width changed, or pipeline depth did not change, the largest micro-batch"
  ;;
bucket_buffers)
  # PyTorch DDP's kept copy of the gradients (6,738,415,616 x 2 bytes, one block in 2 MiB
  # segments) raises the peak of every micro-batch that fits either way by exactly its size over
  # in_place, and lowers the largest micro-batch that fits.
  "$ts" sweep scenarios/sweeps/ddp_bucket_buffers.yaml --csv $work/b.csv -j 2 > /dev/null
  awk -F, -v copy=$(( (6738415616 * 2 + 2097151) / 2097152 * 2097152 )) '
    NR > 1 { peak[$2 "," $3] = $7; if ($4 == "fits" && $3 > best[$2]) best[$2] = $3 }
    END { if (best["persistent"] < 1) { print "nothing fits with the copy"; exit 1 }
          for (mb = 1; mb <= best["persistent"]; ++mb)
            if (peak["persistent," mb] - peak["in_place," mb] != copy) { print "mb " mb ": not the copy"; exit 1 }
          if (!(best["persistent"] < best["in_place"])) { print "largest micro-batch not lower"; exit 1 } }' $work/b.csv \
    || fail "the DDP copy is not what persistent adds"
  ;;
fit_cli)
  out=$("$ts" fit tests/sweep/data/toy_fit.yaml --find training.micro_batch --format json)
  echo "$out" | grep -q '"value": 84' && echo "$out" | grep -q '"next_value": 85' || fail "$out"
  set +e
  "$ts" fit tests/sweep/data/toy_fit.yaml --find training.micro_batch --set device.memory=10MiB > /dev/null; rc=$?
  "$ts" fit tests/sweep/data/toy_fit.yaml --find training.nope > /dev/null 2>&1; rc2=$?
  set -e
  [ $rc -eq 3 ] || fail "fit exits 3 when even 1 does not fit, got $rc"
  [ $rc2 -eq 2 ] || fail "fit of an unknown key exits 2, got $rc2"
  # Accumulation does not change the toy's peak: the search ends after three equal doublings.
  out=$("$ts" fit tests/sweep/data/toy_fit.yaml --find training.gradient_accumulation --format json)
  echo "$out" | grep -q '"value": 8' && echo "$out" | grep -q '"direction": "flat"' || fail "$out"
  # The QLoRA load's cached segments (quantize_on_load) hold the peak over the first doublings
  # while the allocated bytes grow inside them: the search goes on to the micro-batch that does
  # not fit instead of calling it flat.
  out=$("$ts" fit scenarios/validation/memory/tt_l2_7b_qlora_tutorial.yaml --find training.micro_batch --format json)
  echo "$out" | grep -q '"direction": "grows"' && echo "$out" | grep -q '"next_value"' || fail "$out"
  # Memory falls as the ZeRO stage grows: ZeRO-1 does not fit, ZeRO-2 does (the search turns).
  out=$("$ts" fit tests/sweep/data/plan_small.yaml --find parallel.zero --format json)
  echo "$out" | grep -q '"value": 2' && echo "$out" | grep -q '"next_value": 1' && echo "$out" | grep -q '"direction": "falls"' || fail "$out"
  set +e  # (run exits 3 when the step does not fit)
  z1=$("$ts" run tests/sweep/data/plan_small.yaml --set parallel.zero=1 --format json | grep -m1 '"fits"')
  z2=$("$ts" run tests/sweep/data/plan_small.yaml --set parallel.zero=2 --format json | grep -m1 '"fits"')
  set -e
  echo "$z1 $z2" | grep -q 'false.*true' || fail "zero 1 / 2: $z1 $z2"
  ;;
errors)
  printf 'base: {file: toy_fit.yaml}\naxes:\n  training.micro_bach: [1, 2]\n' > $work/typo.yaml
  cp tests/sweep/data/toy_fit.yaml $work/
  set +e
  out=$("$ts" sweep $work/typo.yaml 2>&1); rc=$?
  set -e
  [ $rc -eq 2 ] && echo "$out" | grep -q "typo.yaml:3:3: axes.training.micro_bach: unknown key 'micro_bach'" || fail "$rc $out"
  # A bad axis value makes its points invalid (the sweep goes on), located at the value.
  printf 'base: {file: toy_fit.yaml}\naxes:\n  device.memory: [64MiB, 40MiBB]\n  training.recompute: [none, "ful"]\n' > $work/values.yaml
  "$ts" sweep $work/values.yaml --csv $work/values.csv > /dev/null || fail "a sweep with invalid points exits 0"
  grep -q "^2,40MiBB,none,invalid,.*values.yaml:3:26: device.memory: unknown size unit 'MiBB'" $work/values.csv || fail "$(cat $work/values.csv)"
  grep -q "^1,64MiB,ful,invalid,.*values.yaml:4:31: training.recompute: expected one of" $work/values.csv || fail "$(cat $work/values.csv)"
  ;;
*) fail "unknown check $check" ;;
esac
echo "ok: $check"
