#!/usr/bin/env bash
# Runs every browser test of captcha-dlq-web in headless Chromium:
#  1. the Rust tests under wasm-bindgen-test, in a page: the shared vectors through a `vectors` build, and the
#     IndexedDB and memory stores (the store suite, filter keys, reopening);
#  2. the built package (`build.sh`) from JS, against the mock solver (tests/js/run.mjs): the client's suite
#     (tests/js/site/suite.js: the seeds' batch, recovery, host store, bad input, abort, balance/report,
#     resetCircuit) in a page and in a module dedicated worker, the seeds' batch in a dedicated worker and in a
#     module service worker (plus a restart mid-task), and the example extension's popup driving its service worker.
# Installs what is missing: Chromium + chromedriver (apt-get), wasm-bindgen-cli at the pinned version.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"

WB_VERSION=$(sed -nE 's/^wasm-bindgen = "=?([0-9.]+)"/\1/p' Cargo.toml)
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
fi
if ! wasm-bindgen --version 2>/dev/null | grep -q " $WB_VERSION\$"; then
  cargo install wasm-bindgen-cli --version "$WB_VERSION"
fi
rustup target add wasm32-unknown-unknown >/dev/null 2>&1 || true

cargo build -q -p captcha-dlq-mock
MOCK_OUT=$(mktemp)
"$ROOT/target/debug/captcha-dlq-mock" --port 0 >"$MOCK_OUT" &
MOCK_PID=$!
trap 'kill "$MOCK_PID" 2>/dev/null || true; rm -f "$MOCK_OUT"' EXIT
for _ in $(seq 100); do grep -q listening "$MOCK_OUT" && break; sleep 0.1; done
CAPTCHA_DLQ_MOCK_URL=$(sed -nE 's/^listening (http:[^ ]+)$/\1/p' "$MOCK_OUT")
[ -n "$CAPTCHA_DLQ_MOCK_URL" ] || { echo "the mock solver did not start" >&2; exit 1; }
echo "mock solver at $CAPTCHA_DLQ_MOCK_URL"

# wasm-bindgen-test-runner reads webdriver.json (Chromium flags) from the package directory.
export CHROMEDRIVER=${CHROMEDRIVER:-/usr/bin/chromedriver}
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
export WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-120}
cargo test -p captcha-dlq-wasm --target wasm32-unknown-unknown --features vectors,conformance

"$HERE/build.sh"
(cd "$HERE/tests/js" && npm install --no-audit --no-fund --silent)
node "$HERE/tests/js/run.mjs" "$CAPTCHA_DLQ_MOCK_URL"
