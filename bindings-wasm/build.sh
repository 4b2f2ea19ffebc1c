#!/usr/bin/env bash
# Builds the browser package captcha-dlq-web into bindings-wasm/pkg/ with the stable toolchain:
#   cargo (stable, profile wasm-release) → wasm-bindgen --target web --weak-refs → optimize.sh (wasm-opt -Os, functions
#   ordered by name; npm binaryen)
#   → the JS wrapper, error classes and types shared with the Node package → every shipped .js minified by esbuild
#   (whitespace and syntax only: names are kept, error classes report theirs).
# Needs: rustup's stable toolchain with the wasm32-unknown-unknown target, node/npm; installs what is missing:
# wasm-bindgen-cli at the version pinned in the root Cargo.toml, the build tools of tools/package.json
# (binaryen's wasm-opt, esbuild).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT="$HERE/pkg"

bash "$ROOT/.ci/wasm-bindgen-cli.sh" >&2
TOOLS="$HERE/tools/node_modules/.bin"
if [ ! -x "$TOOLS/wasm-opt" ] || [ ! -x "$TOOLS/esbuild" ]; then
  (cd "$HERE/tools" && npm ci --no-audit --no-fund --silent)
fi
rustup target list --installed 2>/dev/null | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown >&2

# Panic locations name source files: the dependencies' paths in cargo's registry are written relative to it
# (`base64-0.23.1/src/…`), so the shipped .wasm carries no path of the machine that built it.
REMAP=""
for index in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
  [ -d "$index" ] && REMAP="$REMAP --remap-path-prefix=$index="
done
# Only this package for wasm32: a workspace-wide wasm build would reach crates that cannot build there (pyo3).
(cd "$ROOT" && CARGO_TARGET_DIR="$ROOT/target/wasm-package" RUSTFLAGS="${RUSTFLAGS:-}$REMAP" \
  cargo build -q -p captcha-dlq-wasm --target wasm32-unknown-unknown --profile wasm-release ${CARGO_FEATURES:+--features "$CARGO_FEATURES"})
rm -rf "$OUT"
mkdir -p "$OUT/wasm"
# --weak-refs: a native object the page drops is freed by the garbage collector (FinalizationRegistry),
# so callers never call free().
wasm-bindgen --target web --weak-refs --no-typescript --remove-producers-section \
  --out-dir "$OUT/wasm" "$ROOT/target/wasm-package/wasm32-unknown-unknown/wasm-release/captcha_dlq_wasm.wasm"

WASM="$OUT/wasm/captcha_dlq_wasm_bg.wasm"
"$HERE/optimize.sh" "$WASM" "$WASM.opt"
mv "$WASM.opt" "$WASM"

# The public API: the JS wrapper, error classes and types shared with the Node package (js-api/: client.js,
# errors.js, index.d.ts), bound to the wasm by this package's entry (js/index.js); the page detector from its one
# copy (page-detector-js/, the crate the Python extension embeds it from).
JS_API="$ROOT/js-api"
mkdir -p "$OUT/lib"
cp "$JS_API/client.js" "$JS_API/errors.js" "$ROOT/page-detector-js/page-detector.js" "$OUT/lib/"
cp "$JS_API/index.d.ts" "$OUT/index.d.ts"
cp "$HERE/js/index.js" "$HERE/js/page.js" "$HERE/js/page.d.ts" "$HERE/js/package.json" "$HERE/js/README.md" "$OUT/"
# Shipped JS without comments and whitespace: the readable sources are in the repository; index.d.ts documents
# the API. Identifiers are not mangled (error classes' names are part of the API).
for js in $(cd "$OUT" && find . -name '*.js'); do
  "$TOOLS/esbuild" --log-level=warning --minify-whitespace --minify-syntax --allow-overwrite --outfile="$OUT/$js" "$OUT/$js"
done
echo "built $OUT ($(wc -c <"$WASM") bytes of wasm)"
rm -rf "$HERE/examples/extension/captcha-dlq-web"
mkdir -p "$HERE/examples/extension/captcha-dlq-web" && cp -r "$OUT/." "$HERE/examples/extension/captcha-dlq-web/"
