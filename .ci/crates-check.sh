#!/usr/bin/env bash
# The library crates as crates.io would take them, and the library's tree without the CLI's deps:
#   - `cargo package` of captcha-dlq-core, captcha-dlq-client and captcha-dlq together (each later
#     one resolves the earlier ones from the packed copies). CI passes --no-verify to skip the
#     rebuild of the packed sources in a cold target dir (minutes); run it without for the full check.
#   - `cargo tree -p captcha-dlq -e normal` (what a library user compiles) holds no clap, indicatif,
#     axum, server-side hyper, the mock solver or the dashboard.
# Usage: .ci/crates-check.sh [--no-verify]
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo package ${1:-} -p captcha-dlq-core -p captcha-dlq-client -p captcha-dlq"
cargo package --quiet --allow-dirty ${1:+"$1"} -p captcha-dlq-core -p captcha-dlq-client -p captcha-dlq
ls -l target/package/captcha-dlq-core-*.crate target/package/captcha-dlq-client-*.crate target/package/captcha-dlq-[0-9]*.crate

echo "== cargo tree -p captcha-dlq -e normal: no CLI, server or test-only crates"
tree=$(cargo tree -p captcha-dlq -e normal --prefix none --format '{p} [{f}]')
forbidden=$(grep -E '^(clap|clap_builder|indicatif|axum|axum-core|captcha-dlq-mock|captcha-dlq-dashboard|captcha-dlq-cli|tracing-subscriber) ' <<<"$tree" | sort -u || true)
# hyper is reqwest's HTTP client; its server half must not be switched on.
server_hyper=$(grep -E '^hyper v[^ ]+ .*\[[^]]*\bserver\b' <<<"$tree" | sort -u || true)
if [ -n "$forbidden$server_hyper" ]; then
  echo "crates-check: the library pulls in what only the CLI, the mock or a server needs:" >&2
  printf '%s\n' $forbidden "$server_hyper" >&2
  exit 1
fi
echo "ok: $(sort -u <<<"$tree" | wc -l) crates, none of clap, indicatif, axum, hyper's server, the mock, the dashboard"
