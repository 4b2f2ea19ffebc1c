#!/usr/bin/env bash
# The whole test suite, as CI runs it. Installs what it needs that a fresh
# machine lacks (redis-server, the wasm32 target, Chromium for the browser
# package) when run as root; otherwise says what to install.
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
step() { printf '\n=== %s ===\n' "$*"; }

need_apt=()
command -v redis-server >/dev/null || need_apt+=(redis-server)
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

RUST_PACKAGES=(-p captcha-dlq-core -p captcha-dlq -p captcha-dlq-mock -p captcha-dlq-bench-engine -p captcha-dlq-bench-native -p captcha-dlq-wasm-probe -p captcha-dlq-python -p captcha-dlq-node)

step "rustfmt"
cargo fmt --all --check

step "clippy (warnings are errors)"
cargo clippy "${RUST_PACKAGES[@]}" --all-targets --features captcha-dlq-core/testkit -- -D warnings

step "Rust tests: core (vectors, scenarios, memory store), native (SQLite, Redis, e2e, CLI), mock solver"
cargo test "${RUST_PACKAGES[@]}" --features captcha-dlq-core/testkit

step "the core on wasm32: no host imports, same answers"
cargo build -q -p captcha-dlq-wasm-probe --target wasm32-unknown-unknown --release
node .ci/wasm-probe.mjs target/wasm32-unknown-unknown/release/captcha_dlq_wasm_probe.wasm

step "Python package: pip install ./bindings-python in a fresh venv, stubtest, mypy, pytest"
bash bindings-python/ci.sh

step "Node package: npm install (builds the addon), tsc --noEmit on a typed example, node --test"
bash bindings-node/ci.sh

step "browser package: clippy for wasm32, then wasm-bindgen-test and the built package in headless Chromium"
cargo clippy -p captcha-dlq-wasm --target wasm32-unknown-unknown --all-targets --all-features -- -D warnings
bash bindings-wasm/test.sh

step "browser package: within its size budgets (.wasm 230 KB, shipped JS 15 KB, gzipped)"
bash bench/wasm/size.sh --no-build

step "the demo (README's first command)"
cargo run -q -p captcha-dlq -- demo >/tmp/captcha-dlq-demo.out
grep -q "DLQ size after replay: 0" /tmp/captcha-dlq-demo.out && echo "demo ok"

echo
echo "all test stages passed"
