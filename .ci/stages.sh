# shellcheck shell=bash
# Stages with their wall times, for test.sh: each stage prints its time as it ends, and `stage_table` prints
# them all (with the whole run's time) at the end, or at the failure that ended the run.
#   stage NAME CMD...        runs CMD in the foreground (in a subshell: a stage sets no variable of the run).
#   stage_bg NAME CMD...     starts CMD in the background, its output kept in a log; a build of the other
#                            core's share of work, or a test suite that waits on I/O, runs beside it.
#   stage_wait NAME          waits for a background stage, prints its log, and fails the run if it failed.
# Sourced by test.sh, not run.

STAGE_NAMES=()
STAGE_SECONDS=()
STAGE_RESULTS=()
STAGE_RUN_STARTED=$(date +%s.%N)
STAGE_LOGS=$(mktemp -d "${TMPDIR:-/tmp}/captcha-dlq-stages.XXXXXX")
declare -A STAGE_BG_PID=() STAGE_BG_STARTED=() STAGE_BG_ENDED=()

_stage_now() { date +%s.%N; }
_stage_since() { awk -v a="$1" -v b="$(_stage_now)" 'BEGIN { printf "%.1f", b - a }'; }

_stage_record() { # NAME STARTED RESULT
  local took
  took=$(_stage_since "$2")
  STAGE_NAMES+=("$1")
  STAGE_SECONDS+=("$took")
  STAGE_RESULTS+=("$3")
  printf -- '--- %s: %s in %s s\n' "$1" "$3" "$took"
}

stage() {
  local name=$1 started status=0
  shift
  printf '\n=== %s ===\n' "$name"
  started=$(_stage_now)
  # In a subshell with `set -e`, not under `||`, which would switch `set -e` off inside a function's body.
  set +e
  ( set -euo pipefail; "$@" )
  status=$?
  set -e
  if [ "$status" = 0 ]; then
    _stage_record "$name" "$started" ok
  else
    _stage_record "$name" "$started" "FAILED (exit $status)"
    exit "$status"
  fi
}

stage_bg() {
  local name=$1 file
  shift
  file=$STAGE_LOGS/${name//\//_}
  printf '\n=== %s (started in the background) ===\n' "$name"
  STAGE_BG_STARTED[$name]=$(_stage_now)
  # The stage's commands run with `set -e` as the foreground ones do (not under `||`, which would switch it off
  # for everything inside); the stage notes its end (status, time) for stage_wait.
  (
    set +e
    ( set -euo pipefail; "$@" )
    status=$?
    echo "$status $(_stage_since "${STAGE_BG_STARTED[$name]}")" >"$file.end"
  ) >"$file.log" 2>&1 &
  STAGE_BG_PID[$name]=$!
}

# _stage_bg_end NAME: records a background stage from its end note, or as stopped when it had not ended.
_stage_bg_end() {
  local name=$1 file status took
  file=$STAGE_LOGS/${name//\//_}
  printf '\n=== %s (background) ===\n' "$name"
  cat "$file.log" 2>/dev/null || true
  # Marked rather than unset: `unset` reads a key with a quote in it (README's) as a different word.
  STAGE_BG_ENDED[$name]=1
  STAGE_NAMES+=("$name [background]")
  if read -r status took 2>/dev/null <"$file.end"; then
    STAGE_SECONDS+=("$took")
    if [ "$status" = 0 ]; then STAGE_RESULTS+=(ok); else STAGE_RESULTS+=("FAILED (exit $status)"); fi
  else
    status=stopped
    STAGE_SECONDS+=("$(_stage_since "${STAGE_BG_STARTED[$name]}")")
    STAGE_RESULTS+=("stopped (the run failed)")
  fi
  printf -- '--- %s: %s in %s s\n' "$name" "${STAGE_RESULTS[-1]}" "${STAGE_SECONDS[-1]}"
  [ "$status" = 0 ]
}

stage_wait() {
  wait "${STAGE_BG_PID[$1]}" || true
  _stage_bg_end "$1" || exit 1
}

# Stops what still runs in the background (a failed foreground stage ends the run) and prints the table.
# _stage_kill_tree PID: stops PID and every process below it (a suite's mock solvers, Chromium, cargo's children).
_stage_kill_tree() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do _stage_kill_tree "$child"; done
  kill -- "$1" 2>/dev/null || true
}

stage_table() {
  local status=$? name i
  for name in "${!STAGE_BG_PID[@]}"; do
    [ -z "${STAGE_BG_ENDED[$name]:-}" ] || continue
    _stage_kill_tree "${STAGE_BG_PID[$name]}"
    wait "${STAGE_BG_PID[$name]}" 2>/dev/null || true
    _stage_bg_end "$name" || true
  done
  printf '\n%-100s %9s  %s\n' "stage" "seconds" "result"
  for i in "${!STAGE_NAMES[@]}"; do
    printf '%-100s %9s  %s\n' "${STAGE_NAMES[$i]}" "${STAGE_SECONDS[$i]}" "${STAGE_RESULTS[$i]}"
  done
  printf '%-100s %9s  %s\n' "the whole run (background stages overlap the others)" "$(_stage_since "$STAGE_RUN_STARTED")" \
    "$([ "$status" = 0 ] && echo ok || echo "FAILED (exit $status)")"
  rm -rf "$STAGE_LOGS"
}
