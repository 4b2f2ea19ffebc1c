#!/usr/bin/env bash
# CI for the Python package: the Rust side's own test (the store conformance suite over a
# Python store, in an embedded interpreter), a fresh venv, `pip install ./bindings-python[test]`
# (a real wheel build through maturin), the mock solver binary, stubtest + mypy, then pytest.
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

echo "== pip install ./bindings-python[test] (debug profile keeps CI fast)"
# maturin honours MATURIN_PEP517_ARGS; a dev build is enough to test behaviour.
MATURIN_PEP517_ARGS="--profile dev" python -m pip install --quiet "$HERE[test]"

echo "== stubtest + mypy"
cd "$WORK"   # import the installed package, not the source tree
python -m mypy.stubtest captcha_dlq --ignore-missing-stub
python -m mypy --strict -p captcha_dlq
python -m mypy --strict "$HERE/examples/typed_example.py"

echo "== pytest"
python -m pytest -q -p no:cacheprovider "$HERE/tests"
