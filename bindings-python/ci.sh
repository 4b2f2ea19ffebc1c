#!/usr/bin/env bash
# The Python package's checks from the source tree, run by hand (test.sh runs the same suites once, on the
# installed wheel: .ci/package-check.sh python): the Rust side's own test (the store conformance suite over a
# Python store, in an embedded interpreter), a fresh venv, `pip install ./bindings-python[test]`
# (a real wheel build through maturin), the mock solver binary, stubtest + mypy, then pytest, then the page tests
# (tests_page: Playwright and Selenium in headless Chromium; needs node, chromium, chromedriver).
# CAPTCHA_DLQ_WHEEL=dist/<wheel> installs that wheel instead of building one from the source tree.
# Usage: bindings-python/ci.sh   (from anywhere; needs cargo, python3 >= 3.9, network to PyPI)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
PYTHON="${PYTHON:-python3}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/captcha-dlq-py-ci.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

echo "== venv in $WORK"
"$PYTHON" -m venv "$WORK/venv"
# shellcheck disable=SC1091
source "$WORK/venv/bin/activate"
python -m pip install --quiet --upgrade pip

echo "== Rust: the store conformance suite over a Python dict store (embedded interpreter)"
(cd "$REPO" && cargo test --quiet -p captcha-dlq-python --features captcha-dlq-core/testkit)

echo "== mock solver"
(cd "$REPO" && cargo build --quiet -p captcha-dlq-mock)
export CAPTCHA_DLQ_MOCK_BIN="$REPO/target/debug/captcha-dlq-mock"

if [ -n "${CAPTCHA_DLQ_WHEEL:-}" ]; then
  echo "== pip install $(basename "$CAPTCHA_DLQ_WHEEL")[test]"
  python -m pip install --quiet "$CAPTCHA_DLQ_WHEEL[test]"
else
  echo "== pip install ./bindings-python[test] (debug profile keeps CI fast)"
  # maturin honours MATURIN_PEP517_ARGS; a dev build is enough to test behaviour.
  MATURIN_PEP517_ARGS="--profile dev" python -m pip install --quiet "$HERE[test]"
fi

echo "== stubtest + mypy"
cd "$WORK"   # import the installed package, not the source tree
python -m mypy.stubtest captcha_dlq --ignore-missing-stub
python -m mypy --strict -p captcha_dlq
python -m mypy --strict "$HERE/examples/typed_example.py"

echo "== pytest"
python -m pytest -q -p no:cacheprovider "$HERE/tests"

echo "== page tests: captcha_dlq.page with Playwright (sync, async) and Selenium in the system's headless Chromium"
# Playwright's wheel carries its driver, never a browser: the tests launch the system's chromium (executable_path)
# and chromedriver; `playwright install` is never run. The fixture site is tests/page/server.mjs (node).
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 python -m pip install --quiet "playwright==1.65.2" "selenium==4.51.0"
python -m pytest -q -p no:cacheprovider "$HERE/tests_page"
