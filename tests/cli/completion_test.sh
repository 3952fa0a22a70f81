#!/usr/bin/env bash
# Loads tools/trainsim-completion.bash and checks completions the way bash asks for them
# (COMP_WORDS, COMP_CWORD, then the completion function). Usage: completion_test.sh TRAINSIM
set -uo pipefail
bin=$1
trainsim() { "$bin" "$@"; }
source tools/trainsim-completion.bash
fails=0
# complete WANT... -- COMP_WORDS...: sets want=(WANT...), asks for the completion of the last
# word as bash does, and leaves the offer in COMPREPLY.
complete_words() {
  want=()
  while [ "$1" != -- ]; do want+=("$1"); shift; done
  shift
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  _trainsim
}
# expect "WORD..." -- COMP_WORDS...: completing the last word must offer every WORD.
expect() {
  local want
  complete_words "$@"
  for w in "${want[@]}"; do
    if ! printf '%s\n' "${COMPREPLY[@]}" | grep -qx -- "$w"; then
      echo "FAIL: completing '${COMP_WORDS[*]}' did not offer '$w' (got: ${COMPREPLY[*]})"
      fails=1
    fi
  done
}
# exactly "WORD..." -- COMP_WORDS...: the offer is exactly these words.
exactly() {
  local want
  complete_words "$@"
  if [ "$(printf '%s\n' "${COMPREPLY[@]}" | sort)" != "$(printf '%s\n' "${want[@]}" | sort)" ]; then
    echo "FAIL: completing '${COMP_WORDS[*]}' offered '${COMPREPLY[*]}', expected '${want[*]}'"
    fails=1
  fi
}
exactly plan -- trainsim pl
expect run diagnose devices -- trainsim ""
expect --gpus --objective --quiet -- trainsim plan --
expect --no-diagnosis --set -- trainsim run --
exactly throughput -- trainsim plan --objective th
# Presets after --set device= (bash splits the word at '='), and after a whole device=...
exactly h100-80gb h100-pcie h100-nvl -- trainsim run s.yaml --set device = h100
expect rtx-4090 rtx-3090 rtx-a6000 -- trainsim run s.yaml --set device = rtx
exactly llama2-70b -- trainsim run s.yaml --set model = llama2-70
expect scenarios/quickstart.yaml -- trainsim run scenarios/quick
# import: its kinds, then any config file, and presets after --device / --model.
exactly torchtitan torchtune -- trainsim import torch
expect tests/data/import/llama3_8b.toml -- trainsim import torchtitan tests/data/import/llama3_8
exactly a100-40gb a100-80gb -- trainsim import torchtune c.yaml --device a100
exactly llama3-405b -- trainsim import torchtune c.yaml --model llama3-40
# The kinds offered are the kinds `trainsim import` knows (its error for an unknown kind lists them).
known=$("$bin" import no-such-kind x 2>&1 | sed -n "s/.*expected one of: //p" | tr -d ',' | tr ' ' '\n' | sort)
offered=$(printf '%s\n' $_trainsim_import_kinds | sort)
if [ -z "$known" ] || [ "$known" != "$offered" ]; then
  echo "FAIL: completion's import kinds '$offered' are not trainsim's '$known'"
  fails=1
fi
exit $fails
