#!/usr/bin/env bash
# Builds the browser package captcha-dlq-web into bindings-wasm/pkg/ with the stable toolchain:
#   cargo (stable, profile wasm-release) → wasm-bindgen --target web --weak-refs → wasm-opt -Oz (npm binaryen)
#   → the JS wrapper, error classes and types.
# Needs: rustup's stable toolchain with the wasm32-unknown-unknown target, wasm-bindgen-cli at the version pinned
# in the root Cargo.toml (cargo install wasm-bindgen-cli --version X), node/npm.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT="$HERE/pkg"

WB_VERSION=$(sed -nE 's/^wasm-bindgen = "=?([0-9.]+)"/\1/p' "$ROOT/Cargo.toml")
if ! wasm-bindgen --version 2>/dev/null | grep -q " $WB_VERSION\$"; then
  echo "build.sh: needs wasm-bindgen-cli $WB_VERSION: cargo install wasm-bindgen-cli --version $WB_VERSION" >&2
  exit 1
fi
rustup target list --installed 2>/dev/null | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown >&2

# Only this package for wasm32: a workspace-wide wasm build would reach crates that cannot build there (pyo3).
(cd "$ROOT" && CARGO_TARGET_DIR="$ROOT/target/wasm-package" \
  cargo build -q -p captcha-dlq-wasm --target wasm32-unknown-unknown --profile wasm-release ${CARGO_FEATURES:+--features "$CARGO_FEATURES"})
rm -rf "$OUT"
mkdir -p "$OUT/wasm"
# --weak-refs: a native object the page drops is freed by the garbage collector (FinalizationRegistry),
# so callers never call free().
wasm-bindgen --target web --weak-refs --no-typescript --remove-name-section --remove-producers-section \
  --out-dir "$OUT/wasm" "$ROOT/target/wasm-package/wasm32-unknown-unknown/wasm-release/captcha_dlq_wasm.wasm"

if [ ! -x "$HERE/tools/node_modules/.bin/wasm-opt" ]; then
  (cd "$HERE/tools" && npm install --no-audit --no-fund --silent)
fi
WASM="$OUT/wasm/captcha_dlq_wasm_bg.wasm"
# The features stable Rust enables for wasm32-unknown-unknown, so wasm-opt accepts what rustc emitted.
# `-ocimfs 0`: no inlining of big functions into their one caller. With it wasm-opt's output is a little
# larger raw but ~25 KB smaller gzipped (inlined copies compress worse than calls); the budget is gzipped.
"$HERE/tools/node_modules/.bin/wasm-opt" -Os -ocimfs 0 --converge --strip-debug --strip-producers \
  --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals \
  --enable-reference-types --enable-multivalue \
  -o "$WASM.opt" "$WASM"
mv "$WASM.opt" "$WASM"

# The public API. The wrapper shared with the Node package (bindings-node/lib) replaces js/index.js and
# js/errors.js once it is on main; until then these are the package's own minimal copies.
cp "$HERE/js/index.js" "$HERE/js/errors.js" "$HERE/js/index.d.ts" "$HERE/js/package.json" "$HERE/js/README.md" "$OUT/"
echo "built $OUT ($(wc -c <"$WASM") bytes of wasm)"
rm -rf "$HERE/examples/extension/captcha-dlq-web"
mkdir -p "$HERE/examples/extension/captcha-dlq-web" && cp -r "$OUT/." "$HERE/examples/extension/captcha-dlq-web/"
