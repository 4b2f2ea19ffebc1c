#!/usr/bin/env bash
# The library crates as crates.io would take them, and the library's tree without the CLI's deps:
#   - `cargo package` of captcha-dlq-core, captcha-dlq-client and captcha-dlq together; each .crate is
#     unpacked and checked on its own (`cargo check -p`, its default features, its own feature resolution),
#     the later ones against the unpacked copies of the earlier ones (a `[patch]` in a scratch workspace
#     around them), so a file outside a crate, a path-only dependency or a workspace key the packed manifest
#     lost fails here. `cargo check` finds all of these (it reads every source file and runs the build
#     scripts) at a third of the cost of `cargo package`'s own verify, which builds; the workspace's tests
#     build the same sources. The checks share the workspace's target dir and its lock file's versions.
#   - the CLI and the library without their default features (no Redis store, no OTLP), as `cargo demo` builds them;
#   - the core and the client with none of their features (ARCHITECTURE.md "Features"), natively: what a feature
#     gates is not needed without it. Their build with the browser's features (none) for wasm32 is the clippy
#     stage's, of the browser crate;
#   - `cargo tree -p captcha-dlq -e normal` (what a library user compiles) holds no clap, indicatif,
#     axum, server-side hyper, the mock solver or the dashboard.
# Usage: .ci/crates-check.sh [--verify]   (--verify: cargo package's own verify build as well, as a release does)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
VERIFY=--no-verify
case "${1:-}" in
  "") ;;
  --verify) VERIFY= ;;
  *) echo "usage: .ci/crates-check.sh [--verify]" >&2; exit 2 ;;
esac
CRATES=(captcha-dlq-core captcha-dlq-client captcha-dlq)
VERSION=$(sed -nE '/^\[workspace.package\]/,/^\[/ s/^version = "(.*)"/\1/p' Cargo.toml)

if [ -z "$VERIFY" ]; then
  # Cargo unpacks the packed crates for its verify builds under its registry sources (a directory per
  # overlay, named `-<hash of the overlay's path>`) and reuses what it finds there for the same name and
  # version: a second run from the same checkout path would build the previous run's sources.
  rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/captcha-dlq-*
fi
echo "== cargo package ${VERIFY:---verify} -p ${CRATES[*]}"
cargo package --quiet --allow-dirty ${VERIFY:+"$VERIFY"} "${CRATES[@]/#/-p=}"

# The scratch workspace: the three crates as unpacked from their .crate files, nothing else of the repository.
SCRATCH=$CARGO_TARGET_DIR/package/unpacked
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
members=()
for crate in "${CRATES[@]}"; do
  file=$CARGO_TARGET_DIR/package/$crate-$VERSION.crate
  ls -l "$file"
  tar -xzf "$file" -C "$SCRATCH"
  members+=("\"$crate-$VERSION\"")
done
{
  echo "# Written by .ci/crates-check.sh: the packed crates, each resolving the others to its unpacked copy."
  echo "[workspace]"
  echo "members = [$(IFS=,; echo "${members[*]}")]"
  echo "resolver = \"3\""
  echo "[patch.crates-io]"
  for crate in "${CRATES[@]}"; do
    echo "$crate = { path = \"$crate-$VERSION\" }"
  done
} >"$SCRATCH/Cargo.toml"
# The workspace's versions of every dependency (cargo adjusts the lock file to the patched members).
cp Cargo.lock "$SCRATCH/Cargo.lock"
for crate in "${CRATES[@]}"; do
  echo "== cargo check -p $crate, unpacked"
  (cd "$SCRATCH" && cargo check --quiet -p "$crate")
done
rm -rf "$SCRATCH"
# `cargo demo` (the README's first command): the CLI, and the library under it, without Redis and OTLP.
echo "== cargo check -p captcha-dlq-cli --no-default-features (cargo demo's build)"
cargo check --quiet -p captcha-dlq-cli --no-default-features
echo "== cargo check -p captcha-dlq-core -p captcha-dlq-client --no-default-features"
cargo check --quiet -p captcha-dlq-core -p captcha-dlq-client --no-default-features

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
