# Bash completion for trainsim: subcommands, each subcommand's options (read from its --help),
# preset names after --set device=/model= (from `trainsim devices` / `trainsim models`), the
# values of --objective, --format and --measured-unit, import's KIND and the presets after its
# --device / --model, and scenario (.yaml) or table (.csv) files.
# Load it with `source tools/trainsim-completion.bash` (or copy it to
# ~/.local/share/bash-completion/completions/trainsim); it calls the `trainsim` on your PATH.

_trainsim_commands="run validate diagnose models devices sweep fit plan merge compare compare-memory calibrate import"
# `trainsim import KIND FILE`: the kinds its --help lists.
_trainsim_import_kinds="megatron deepspeed torchtitan hf-trainer trl torchtune litgpt llm-foundry"

# The options a subcommand's --help lists, e.g. "--set --format --quiet".
_trainsim_options() {
  trainsim "$1" --help 2>/dev/null | grep -oE -- '--[a-z][a-z-]*' | sort -u | tr '\n' ' '
}

# The first column of a listing, up to its first blank line (devices: not the links after it).
_trainsim_presets() {
  trainsim "$1" 2>/dev/null | awk -v skip="$2" 'NR == 1 && skip { next } /^$/ { exit } { print $1 }'
}

_trainsim() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local cmd=${COMP_WORDS[1]}
  COMPREPLY=()
  if [ "$COMP_CWORD" -eq 1 ]; then
    mapfile -t COMPREPLY < <(compgen -W "$_trainsim_commands --help --version" -- "$cur")
    return
  fi
  # `--set device=PRESET`: bash splits at '=' (COMP_WORDBREAKS), giving ... device = PRESET.
  local key="" value=""
  if [ "$prev" = "=" ] && [ "$COMP_CWORD" -ge 3 ]; then
    key=${COMP_WORDS[COMP_CWORD-2]}; value=$cur
  elif [ "$cur" = "=" ]; then
    key=$prev; value=""
  elif [[ "$cur" == *=* ]]; then
    key=${cur%%=*}; value=${cur#*=}
  fi
  case "$key" in
    device | device.preset)
      mapfile -t COMPREPLY < <(compgen -W "$(_trainsim_presets devices 1)" -- "$value"); return ;;
    model | model.preset)
      mapfile -t COMPREPLY < <(compgen -W "$(_trainsim_presets models 0)" -- "$value"); return ;;
  esac
  case "$prev" in
    --device) mapfile -t COMPREPLY < <(compgen -W "$(_trainsim_presets devices 1)" -- "$cur"); return ;;
    --model) mapfile -t COMPREPLY < <(compgen -W "$(_trainsim_presets models 0)" -- "$cur"; compgen -f -X '!*.json' -- "$cur")
             return ;;
    --objective) mapfile -t COMPREPLY < <(compgen -W "throughput memory cost" -- "$cur"); return ;;
    --format) mapfile -t COMPREPLY < <(compgen -W "text json" -- "$cur"); return ;;
    --measured-unit)
      mapfile -t COMPREPLY < <(compgen -W "ms s tokens/s tokens/s/gpu samples/s tflops/gpu mfu" -- "$cur"); return ;;
    --set) mapfile -t COMPREPLY < <(compgen -W "device= model= training. parallel. cluster. name=" -- "$cur")
           compopt -o nospace 2>/dev/null; return ;;
    -o | --output | --csv | --jsonl | --plot | --html | --trace | --rows | --ratchet | --base)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
  esac
  if [[ "$cur" == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_trainsim_options "$cmd")" -- "$cur")
    return
  fi
  if [ "$cmd" = import ] && [ "$COMP_CWORD" -eq 2 ]; then
    mapfile -t COMPREPLY < <(compgen -W "$_trainsim_import_kinds" -- "$cur")
    return
  fi
  local ext=yaml
  case "$cmd" in compare | calibrate | merge) ext=csv ;; import) ext="*" ;; models | devices) return ;; esac
  if [ "$ext" = "*" ]; then
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    return
  fi
  mapfile -t COMPREPLY < <(compgen -f -X "!*.$ext" -- "$cur"; compgen -d -- "$cur")
}

complete -F _trainsim trainsim
