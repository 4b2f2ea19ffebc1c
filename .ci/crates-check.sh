#!/usr/bin/env bash
# The library crates as crates.io would take them, and the library's tree without the CLI's deps:
#   - `cargo package` of captcha-dlq-core, captcha-dlq-client and captcha-dlq together, verified: each
#     .crate is unpacked and built on its own, the later ones against the packed copies of the earlier
#     ones (cargo's local overlay), so a file outside a crate, a path-only dependency or a workspace key
#     the packed manifest lost fails here. The verify builds share the workspace's target dir
#     (CARGO_TARGET_DIR; left unset, cargo gives each crate a cold one under target/package/), so
#     dependencies the tests already compiled with the same features are not compiled again.
#   - `cargo tree -p captcha-dlq -e normal` (what a library user compiles) holds no clap, indicatif,
#     axum, server-side hyper, the mock solver or the dashboard.
# Usage: .ci/crates-check.sh [--no-verify]   (--no-verify: pack only, no build)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

# Cargo unpacks the packed crates for the verify builds under its registry sources (a directory per overlay,
# named `-<hash of the overlay's path>`) and reuses what it finds there for the same name and version: a second run
# from the same checkout path would build the previous run's sources. Only our own crates are ever unpacked there.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/captcha-dlq-*
echo "== cargo package ${1:-} -p captcha-dlq-core -p captcha-dlq-client -p captcha-dlq"
cargo package --quiet --allow-dirty ${1:+"$1"} -p captcha-dlq-core -p captcha-dlq-client -p captcha-dlq
ls -l "$CARGO_TARGET_DIR"/package/captcha-dlq-core-*.crate "$CARGO_TARGET_DIR"/package/captcha-dlq-client-*.crate \
  "$CARGO_TARGET_DIR"/package/captcha-dlq-[0-9]*.crate

echo "== cargo tree -p captcha-dlq -e normal: no CLI, server or test-only crates"
tree=$(cargo tree -p captcha-dlq -e normal --prefix none --format '{p} [{f}]')
forbidden=$(grep -E '^(clap|clap_builder|indicatif|axum|axum-core|captcha-dlq-mock|captcha-dlq-dashboard|captcha-dlq-cli|tracing-subscriber) ' <<<"$tree" | sort -u || true)
# hyper is reqwest's HTTP client; its server half must not be switched on.
server_hyper=$(grep -E '^hyper v[^ ]+ .*\[[^]]*\bserver\b' <<<"$tree" | sort -u || true)
if [ -n "$forbidden$server_hyper" ]; then
  echo "crates-check: the library pulls in what only the CLI, the mock or a server needs:" >&2
  printf '%s\n' "$forbidden" "$server_hyper" >&2
  exit 1
fi
echo "ok: $(sort -u <<<"$tree" | wc -l) crates, none of clap, indicatif, axum, hyper's server, the mock, the dashboard"
