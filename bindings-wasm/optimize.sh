#!/usr/bin/env bash
# Optimizes a wasm-bindgen output for shipping: optimize.sh IN OUT. Used by build.sh for the package and by
# bench/wasm/size.sh for its floor row, so both measure the same pipeline. Needs tools/ installed (npm ci).
#
# The features stable Rust enables for wasm32-unknown-unknown, so wasm-opt accepts what rustc emitted.
# `-ocimfs 0`: no inlining of big functions into their one caller. With it wasm-opt's output is a little
# larger raw but ~25 KB smaller gzipped (inlined copies compress worse than calls); the budget is gzipped.
# `--reorder-functions-by-name` (before and after the passes, which add and drop functions): the copies of one
# generic (the B-tree's nodes, serde's visitors, the async state machines) end up next to each other, within
# gzip's 32 KB window of each other, and compress against each other: ~11 KB smaller gzipped. It reads the names
# wasm-bindgen kept (no --remove-name-section); --strip-debug then drops them.
# `--flatten --rereloop -Os` (after the first -Os): the control flow rebuilt from a flat form and shrunk again;
# ~1.4 KB smaller gzipped for ~50 s more of wasm-opt.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
"$HERE/tools/node_modules/.bin/wasm-opt" --reorder-functions-by-name -Os -ocimfs 0 --flatten --rereloop -Os --converge \
  --reorder-functions-by-name \
  --strip-debug --strip-producers \
  --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals \
  --enable-reference-types --enable-multivalue \
  -o "$2" "$1"
