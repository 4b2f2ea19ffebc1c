#!/usr/bin/env bash
# Installs the wasm-bindgen CLI (wasm-bindgen, wasm-bindgen-test-runner) at the version Cargo.toml pins, unless
# that version is already on PATH. Used by test.sh, bindings-wasm/build.sh, bindings-wasm/test.sh and release.yml.
#
# It is compiled unoptimised, without debug info or debug assertions: on the 2-core CI machine that costs about
# 100 CPU-seconds instead of about 4 CPU-minutes for the release build `cargo install` makes by default. Its output
# is the same bytes (the tool is deterministic; its optimisation level changes only how fast it runs); it runs
# about 2 s slower for each test binary it prepares (measured on this crate's 16 MB test .wasm: 2.8 s against
# 0.55 s), a few seconds per run. --locked is not used: the CLI's own lock file names a yanked crate.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -nE 's/^wasm-bindgen = "=?([0-9.]+)"/\1/p' "$ROOT/Cargo.toml")
[ -n "$version" ] || { echo "wasm-bindgen-cli.sh: Cargo.toml pins no wasm-bindgen version" >&2; exit 1; }
if wasm-bindgen --version 2>/dev/null | grep -q " $version\$" \
  && wasm-bindgen-test-runner --version 2>/dev/null | grep -q " $version\$"; then
  echo "wasm-bindgen $version is installed"
  exit 0
fi
echo "installing wasm-bindgen-cli $version (an unoptimised build; see .ci/wasm-bindgen-cli.sh)" >&2
# --force: cargo's record of installed crates may name it though its binaries are gone.
CARGO_PROFILE_DEV_DEBUG=0 CARGO_PROFILE_DEV_DEBUG_ASSERTIONS=false CARGO_PROFILE_DEV_OVERFLOW_CHECKS=false \
  cargo install -q --force --debug wasm-bindgen-cli --version "$version"
echo "installed wasm-bindgen-cli $version"
