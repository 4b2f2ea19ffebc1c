#!/usr/bin/env bash
# Builds the browser package captcha-dlq-web into bindings-wasm/pkg/:
#   cargo (profile wasm-release) → wasm-bindgen --target web → wasm-opt -Oz (npm binaryen) → JS wrapper + types.
# Needs: the wasm32-unknown-unknown target, wasm-bindgen-cli at the version pinned in the root Cargo.toml, node/npm.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT="$HERE/pkg"

WB_VERSION=$(sed -nE 's/^wasm-bindgen = "=?([0-9.]+)"/\1/p' "$ROOT/Cargo.toml")
if ! wasm-bindgen --version 2>/dev/null | grep -q " $WB_VERSION\$"; then
  echo "build.sh: needs wasm-bindgen-cli $WB_VERSION: cargo install wasm-bindgen-cli --version $WB_VERSION" >&2
  exit 1
fi

(cd "$ROOT" && cargo build -q -p captcha-dlq-wasm --target wasm32-unknown-unknown --profile wasm-release)
rm -rf "$OUT"
mkdir -p "$OUT/wasm"
wasm-bindgen --target web --no-typescript --remove-name-section --remove-producers-section --out-dir "$OUT/wasm" \
  "$ROOT/target/wasm32-unknown-unknown/wasm-release/captcha_dlq_wasm.wasm"

if [ ! -x "$HERE/tools/node_modules/.bin/wasm-opt" ]; then
  (cd "$HERE/tools" && npm install --no-audit --no-fund --silent)
fi
WASM="$OUT/wasm/captcha_dlq_wasm_bg.wasm"
"$HERE/tools/node_modules/.bin/wasm-opt" -Oz --strip-debug --strip-producers \
  --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals \
  --enable-reference-types --enable-multivalue \
  -o "$WASM.opt" "$WASM"
mv "$WASM.opt" "$WASM"

cp "$HERE/js/index.js" "$HERE/js/errors.js" "$HERE/js/index.d.ts" "$HERE/js/package.json" "$HERE/js/README.md" "$OUT/"
echo "built $OUT ($(wc -c <"$WASM") bytes of wasm)"
mkdir -p "$HERE/examples/extension/captcha-dlq-web" && cp -r "$OUT/." "$HERE/examples/extension/captcha-dlq-web/"
