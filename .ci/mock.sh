# shellcheck shell=bash
# Mock solvers for the scripts that test packages against one (.ci/package-check.sh, bindings-wasm/test.sh).
# Sourced, not run: the mocks are children of the caller's shell, so its EXIT trap stops them (stop_mocks).
MOCK_PIDS=()
MOCK_OUTS=()

# start_mock BIN NAME CONFIG: starts the mock solver BIN on a free port with CONFIG (JSON) and sets $NAME
# to its URL once it listens.
start_mock() {
  local out url=
  out=$(mktemp "${TMPDIR:-/tmp}/captcha-dlq-mock.XXXXXX")
  MOCK_OUTS+=("$out")
  "$1" --port 0 --config "$3" >"$out" 2>&1 &
  MOCK_PIDS+=("$!")
  for _ in $(seq 100); do
    url=$(sed -nE 's/^listening (http:[^ ]+)$/\1/p' "$out")
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "the mock solver $1 did not start: $(cat "$out")" >&2; exit 1; }
  printf -v "$2" '%s' "$url"
}

# stop_mocks: stops every mock start_mock started and removes their output files.
stop_mocks() {
  local pid
  for pid in "${MOCK_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -f "${MOCK_OUTS[@]}"
}
