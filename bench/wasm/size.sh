#!/usr/bin/env bash
# Prints the raw and gzipped (-9) sizes of captcha-dlq-web's .wasm and JS glue, and checks the .wasm
# against its budget (150 KB gzipped). Builds the package first unless --no-build is given.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PKG="$HERE/../../bindings-wasm/pkg"
BUDGET=$((150 * 1024))
[ "${1:-}" = "--no-build" ] || "$HERE/../../bindings-wasm/build.sh" >/dev/null

row() { printf '%-60s %10s %10s\n' "$1" "$2" "$3"; }
row file raw gzip
total_raw=0
total_gz=0
# Every JS file ships: the wasm-bindgen glue, the wrapper, and the JS stores (a wasm-bindgen snippet).
files=$(cd "$PKG" && find . -name '*.js' ! -path './node_modules/*' | sed 's|^\./||' | sort)
for f in wasm/captcha_dlq_wasm_bg.wasm $files; do
  raw=$(wc -c <"$PKG/$f")
  gz=$(gzip -9c "$PKG/$f" | wc -c)
  row "$f" "$raw" "$gz"
  total_raw=$((total_raw + raw))
  total_gz=$((total_gz + gz))
  [ "$f" = wasm/captcha_dlq_wasm_bg.wasm ] && wasm_gz=$gz
done
row total "$total_raw" "$total_gz"
if [ "$wasm_gz" -gt "$BUDGET" ]; then
  echo "over budget: the .wasm is $wasm_gz bytes gzipped, the budget is $BUDGET" >&2
  exit 1
fi
echo "within budget: $wasm_gz <= $BUDGET bytes gzipped"
