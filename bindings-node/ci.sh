#!/usr/bin/env bash
# CI for the Node package: install (which builds the addon), build the mock solver,
# type-check the typed example against index.d.ts, run the JS suite: the shared one
# (tests/js/suite.js, which the browser package also runs, in Chromium) and the
# Node-only checks (files, util.inspect, the CommonJS entry, the wire vectors).
# Works from a fresh clone; needs cargo, node >= 20.19 and npm (reaches the registry).
# CAPTCHA_DLQ_BUILD_PROFILE=debug (the default here) keeps the build short; set it
# to `release` to test the optimised addon.
set -euo pipefail
cd "$(dirname "$0")"

export CAPTCHA_DLQ_BUILD_PROFILE="${CAPTCHA_DLQ_BUILD_PROFILE:-debug}"

echo "== npm install (builds the addon, $CAPTCHA_DLQ_BUILD_PROFILE)"
npm install --no-audit --no-fund

echo "== cargo build -p captcha-dlq-mock"
cargo build -p captcha-dlq-mock

echo "== tsc --noEmit (examples/typed.ts against index.d.ts)"
npx --no-install tsc -p tsconfig.json

echo "== node --test (tests/js: the shared suite against this package, then the Node-only checks)"
# Each file starts its own mock solver; its tests run one after another (they set its script in turn).
timeout 900 node --test --test-concurrency=1 ../tests/js/node.test.js ../tests/js/node-only.test.js
