#!/usr/bin/env bash
# Runs every browser test of captcha-dlq-web in headless Chromium:
#  1. the Rust tests under wasm-bindgen-test (the shared vectors through a `vectors` build, IndexedDB store suite, the seeds' batch against the
#     mock solver in a page, a dedicated worker and a service worker, recovery, host store, bad input);
#  2. the built package (`build.sh`) from JS: a module service worker solving through it, and the
#     example extension's popup driving its service worker.
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
export CAPTCHA_DLQ_MOCK_URL
echo "mock solver at $CAPTCHA_DLQ_MOCK_URL"

# wasm-bindgen-test-runner reads webdriver.json (Chromium flags) from the package directory.
export CHROMEDRIVER=${CHROMEDRIVER:-/usr/bin/chromedriver}
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
export WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-120}
cargo test -p captcha-dlq-wasm --target wasm32-unknown-unknown --features vectors

"$HERE/build.sh"
(cd "$HERE/tests/js" && npm install --no-audit --no-fund --silent)
node "$HERE/tests/js/run.mjs" "$CAPTCHA_DLQ_MOCK_URL"
