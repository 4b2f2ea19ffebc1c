#!/usr/bin/env bash
# Runs every browser test of captcha-dlq-web in headless Chromium, with the stable toolchain:
#  1. the Rust tests under wasm-bindgen-test, in a page: the store conformance suite (dlq::testkit) on the
#     IndexedDB store, the memory store and a JS store object, reopening a database, Web Locks liveness, and the
#     shared wire vectors through a `vectors` build;
#  2. the built package (`build.sh`) from JS, against the mock solver over loopback HTTP (tests/js/run.mjs): the
#     JS suite shared with the Node package (tests/js/suite.js) and the browser's own (tests/js/site/suite.js:
#     IndexedDB, Web Locks, fetch failures), each in a page and in a module dedicated worker, the seeds' batch in a
#     dedicated worker and in a module service worker (plus a restart mid-task), 20 tasks against a mock without
#     CORS headers, the example extension's popup driving its service worker and its auto-solve mode on the page
#     tests' fixture site (tests/page), and captcha-dlq-web/page solving that site's widgets in a page. Pages import the package by its
#     bare specifier through an import map, workers run esbuild bundles of it (run.mjs).
# --rust-only runs 1. alone: CI (test.sh) runs 2. on the installed tarball instead (.ci/package-check.sh browser).
# Installs what is missing: Chromium + chromedriver (apt-get), wasm-bindgen-cli at the pinned version, the build
# tools (build.sh: npm's binaryen and esbuild), playwright-core and esbuild (tests/js).
# Usage: bindings-wasm/test.sh [--rust-only]
set -euo pipefail
RUST_ONLY=
case "${1:-}" in
  "") ;;
  --rust-only) RUST_ONLY=1 ;;
  *) echo "usage: bindings-wasm/test.sh [--rust-only]" >&2; exit 2 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
fi
bash "$ROOT/.ci/wasm-bindgen-cli.sh"
rustup target list --installed | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown

# wasm-bindgen-test-runner reads webdriver.json (Chromium flags) from the package directory.
export CHROMEDRIVER=${CHROMEDRIVER:-/usr/bin/chromedriver}
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
export WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-120}
cargo test -p captcha-dlq-wasm --target wasm32-unknown-unknown --features vectors
[ -z "$RUST_ONLY" ] || exit 0

cargo build -q -p captcha-dlq-mock
# shellcheck source=../.ci/mock.sh
. "$ROOT/.ci/mock.sh"
trap stop_mocks EXIT
MOCK_BIN="$ROOT/target/debug/captcha-dlq-mock"
start_mock "$MOCK_BIN" MOCK_URL '{}'
start_mock "$MOCK_BIN" NOCORS_URL '{"cors": false}'
echo "mock solver at $MOCK_URL, without CORS headers at $NOCORS_URL"
"$HERE/build.sh"
(cd "$HERE/tests/js" && npm install --no-audit --no-fund --silent)
node "$HERE/tests/js/run.mjs" "$MOCK_URL" "$NOCORS_URL"
