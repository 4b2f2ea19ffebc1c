#!/usr/bin/env bash
# The Node package's checks from the source tree, run by hand (test.sh runs the same suite once, on the installed
# tarballs: .ci/package-check.sh node): install the dev dependencies, build the addon (npm run build), build the mock solver,
# type-check the typed example against index.d.ts, run the JS suite: the shared one
# (tests/js/suite.js, which the browser package also runs, in Chromium) and the
# Node-only checks (files, util.inspect, the CommonJS entry, the wire vectors), traces to a local OTLP
# receiver (tests/js/node-traces.test.js), and the page front end
# (captcha-dlq/page) on the fixture site in headless Chromium (tests/page).
# Works from a fresh clone; needs cargo, node >= 20.19 and npm (reaches the registry).
# CAPTCHA_DLQ_BUILD_PROFILE=debug (the default here) keeps the build short; set it
# to `release` to test the optimised addon. CAPTCHA_DLQ_ADDON_PREBUILT=1 skips the build and tests the
# addon ./package.sh left in this folder.
set -euo pipefail
cd "$(dirname "$0")"

export CAPTCHA_DLQ_BUILD_PROFILE="${CAPTCHA_DLQ_BUILD_PROFILE:-debug}"

echo "== npm install (dev dependencies: @napi-rs/cli, typescript, playwright-core, puppeteer-core; no browser downloads)"
PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund

if [ "${CAPTCHA_DLQ_ADDON_PREBUILT:-}" = 1 ]; then
  echo "== the addon ./package.sh built: $(ls ./*.node)"
  [ -f native.cjs ] || { echo "ci.sh: CAPTCHA_DLQ_ADDON_PREBUILT=1 but no native.cjs: run ./package.sh" >&2; exit 1; }
else
  echo "== npm run build (the addon, $CAPTCHA_DLQ_BUILD_PROFILE)"
  npm run build
fi

echo "== cargo build -p captcha-dlq-mock"
cargo build -p captcha-dlq-mock

echo "== tsc --noEmit (examples/typed.ts against index.d.ts)"
npx --no-install tsc -p tsconfig.json

echo "== node --test (tests/js: the shared suite against this package, then the Node-only checks; tests/page: captcha-dlq/page in headless Chromium through playwright-core and puppeteer-core)"
# Each file starts its own mock solver; its tests run one after another (they set its script in turn).
# The page tests drive the system's chromium (CHROMIUM overrides); the drivers never download a browser.
export PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
timeout 900 node --test --test-concurrency=1 ../tests/js/node.test.js ../tests/js/node-only.test.js ../tests/js/node-audit.test.js ../tests/js/node-traces.test.js ../tests/page/node-page.test.js
