#!/usr/bin/env bash
# Installs what ./package.sh put in dist/ the way a user would, on a PATH without cargo or rustc,
# and runs the packages' own tests against the installed copies. Each solves the seeds' batch
# (five reCAPTCHA v2 tasks, one unsolvable, one never ready: 3 solved, 2 dead-lettered, replayed)
# against the mock solver binary, besides the rest of its suite:
#   - python: the wheel into a fresh venv of the highest CPython >= 3.9 that pyenv has, then
#     stubtest, mypy, pytest (bindings-python/tests) and the page tests (tests_page) importing the
#     installed captcha_dlq, then the oracle test (tests/test_oracle.py) in a second venv of the wheel
#     with the official clients of tests/oracle-requirements.txt (their exact pins conflict with
#     Selenium's); the lowest gets the wheel and the seeds' batch (tests/test_batch.py);
#   - node: the Node main tarball + its linux-x64-gnu tarball into a fresh project, then the shared
#     JS suite with `import 'captcha-dlq'` (ESM), the Node-only checks (CommonJS entry, wire vectors
#     through the addon the platform package holds), the audit trail, traces, the page front end in
#     headless Chromium (playwright-core and puppeteer-core from bindings-node's dev dependencies)
#     and tsc on the typed example;
#   - browser: the captcha-dlq-web tarball into a fresh project, then headless Chromium over that
#     installed copy (bindings-wasm/tests/js/run.mjs): pages import `captcha-dlq-web` through an
#     import map, the dedicated and service workers run esbuild bundles of it, the example
#     extension holds a copy of the installed folder (the shared JS suite, the browser's suite, the
#     seeds' batch in a page, a worker, a service worker and the extension).
# (./package.sh itself builds the sdist into a wheel outside the repository.)
# The mock solver is the workspace's debug build (CAPTCHA_DLQ_MOCK_BIN overrides), built beforehand.
# Usage: .ci/package-check.sh [python|node|browser]   (after ./package.sh; all by default;
# needs pyenv or python3, node/npm, Chromium)
set -euo pipefail
ONLY=${1:-}
REPO=$(cd "$(dirname "$0")/.." && pwd)
DIST=$REPO/dist
VERSION=$(sed -nE '/^\[workspace.package\]/,/^\[/ s/^version = "(.*)"/\1/p' "$REPO/Cargo.toml")
export CAPTCHA_DLQ_MOCK_BIN="${CAPTCHA_DLQ_MOCK_BIN:-$REPO/target/debug/captcha-dlq-mock}"
[ -x "$CAPTCHA_DLQ_MOCK_BIN" ] || { echo "package-check: no mock solver at $CAPTCHA_DLQ_MOCK_BIN (cargo build -p captcha-dlq-mock)" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/captcha-dlq-package-check.XXXXXX")
# shellcheck source=mock.sh
. "$REPO/.ci/mock.sh"
cleanup() {
  stop_mocks
  rm -rf "$WORK"
}
trap cleanup EXIT
PARTS=(python node browser)
case "$ONLY" in
  "" | python | node | browser) ;;
  *) echo "usage: .ci/package-check.sh [python|node|browser] (got: $ONLY)" >&2; exit 2 ;;
esac

# PATH without Rust: drop every entry that holds cargo or rustc, then prove they are gone.
NO_RUST_PATH=
IFS=: read -r -a entries <<<"$PATH"
for dir in "${entries[@]}"; do
  [ -n "$dir" ] || continue
  if [ -e "$dir/cargo" ] || [ -e "$dir/rustc" ]; then continue; fi
  NO_RUST_PATH=${NO_RUST_PATH:+$NO_RUST_PATH:}$dir
done
no_rust() { env -u CARGO_HOME -u RUSTUP_HOME -u CARGO_TARGET_DIR PATH="$NO_RUST_PATH" "$@"; }
if no_rust sh -c 'command -v cargo || command -v rustc' >/dev/null; then
  echo "package-check: cargo or rustc is still on the PATH built without them" >&2
  exit 1
fi

NODE_MAIN=$DIST/captcha-dlq-$VERSION.tgz
NODE_ADDON=$DIST/captcha-dlq-linux-x64-gnu-$VERSION.tgz
NODE_WEB=$DIST/captcha-dlq-web-$VERSION.tgz

check_python() {
  local wheel
  wheel=$(ls "$DIST"/captcha_dlq-"$VERSION"-cp39-abi3-*manylinux_2_17_x86_64.whl)
  # The highest CPython >= 3.9 that pyenv has runs everything; the lowest runs a smoke test (without pyenv,
  # python3 runs everything).
  local found=() full smoke=
  if command -v pyenv >/dev/null; then
    local root dir
    root=$(pyenv root)
    for dir in "$root"/versions/3.*; do
      if [[ $dir =~ /3\.(9|[1-9][0-9])\.[0-9]+$ ]]; then found+=("$dir"); fi
    done
  fi
  if ((${#found[@]})); then
    mapfile -t found < <(printf '%s\n' "${found[@]}" | sort -V)
    full=${found[-1]}/bin/python
    if ((${#found[@]} > 1)); then smoke=${found[0]}/bin/python; fi
  else
    full=$(command -v python3)
  fi
  python_full "$wheel" "$full"
  if [ -n "$smoke" ]; then python_smoke "$wheel" "$smoke"; fi
}

# python_venv WHEEL PYTHON PACKAGES...: a fresh venv of PYTHON with the wheel and PACKAGES, installed with no
# Rust on PATH, that imports the installed copy; prints the venv's folder (all else goes to stderr).
python_venv() {
  local wheel=$1 python=$2 version venv
  shift 2
  version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  venv=$WORK/venv-$version${VENV_SUFFIX:-}
  "$python" -m venv "$venv"
  no_rust "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: "$wheel" "$@" >&2
  (cd "$WORK" && no_rust "$venv/bin/python" - "$venv" "$VERSION" >&2 <<'EOF'
import sys, captcha_dlq
venv, version = sys.argv[1], sys.argv[2]
assert captcha_dlq.__file__.startswith(venv), f"imported {captcha_dlq.__file__}, not the installed wheel"
assert captcha_dlq.__version__ == version, f"captcha_dlq.__version__ is {captcha_dlq.__version__}, the workspace says {version}"
print(f"captcha_dlq {captcha_dlq.__version__} from {captcha_dlq.__file__}")
EOF
  )
  echo "$venv"
}

python_version() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])'; }

# Everything on the installed wheel: stubtest and mypy (the stubs against the extension, the typed example),
# pytest, then the page tests (captcha_dlq.page with Playwright, sync and async, and Selenium in the system's
# headless Chromium; Playwright's wheel carries its driver, never a browser; the fixture site runs on node).
python_full() {
  local venv
  echo "== Python $(python_version "$2"): the wheel into a fresh venv, no Rust on PATH; stubtest, mypy, pytest, page tests"
  venv=$(PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 python_venv "$1" "$2" pytest "mypy>=1.10" "playwright==1.65.2" "selenium==4.51.0")
  (cd "$WORK" && no_rust "$venv/bin/python" -m mypy.stubtest captcha_dlq --ignore-missing-stub \
    && no_rust "$venv/bin/python" -m mypy --strict -p captcha_dlq \
    && no_rust "$venv/bin/python" -m mypy --strict "$REPO/bindings-python/examples/typed_example.py")
  (cd "$WORK" && no_rust "$venv/bin/python" -m pytest -q -p no:cacheprovider "$REPO/bindings-python/tests")
  (cd "$WORK" && no_rust "$venv/bin/python" -m pytest -q -p no:cacheprovider "$REPO/bindings-python/tests_page")
  echo "== Python $(python_version "$2"): the oracle test, the wheel beside the pinned official clients"
  venv=$(VENV_SUFFIX=-oracle python_venv "$1" "$2" pytest -r "$REPO/bindings-python/tests/oracle-requirements.txt")
  (cd "$WORK" && CAPTCHA_DLQ_ORACLE_REQUIRED=1 no_rust "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    "$REPO/bindings-python/tests/test_oracle.py")
}

# The lowest Python: the wheel installs and imports there (abi3), and the seeds' batch runs end to end.
python_smoke() {
  local venv
  echo "== Python $(python_version "$2"): the wheel into a fresh venv, no Rust on PATH; the seeds' batch (smoke)"
  venv=$(python_venv "$1" "$2" pytest)
  (cd "$WORK" && no_rust "$venv/bin/python" -m pytest -q -p no:cacheprovider "$REPO/bindings-python/tests/test_batch.py")
}

check_node() {
  echo "== Node $(node --version): the main tarball and the linux-x64-gnu tarball into a fresh project, no Rust on PATH"
  APP=$WORK/node-app
  mkdir -p "$APP"
  cp -r "$REPO/tests/js" "$APP/tests"
  cp "$REPO/bindings-node/examples/typed.ts" "$APP/typed.ts"
  cat >"$APP/package.json" <<'EOF'
{ "name": "captcha-dlq-package-check", "private": true, "type": "module" }
EOF
  cat >"$APP/tsconfig.json" <<'EOF'
{ "compilerOptions": { "strict": true, "noEmit": true, "target": "ES2022", "module": "NodeNext",
  "moduleResolution": "NodeNext", "types": ["node"], "skipLibCheck": false }, "files": ["typed.ts"] }
EOF
  # The platform package's tarball is named next to the main one: npm takes it for the main package's
  # optionalDependency of the same name and version instead of asking the registry.
  (cd "$APP" && no_rust npm install --no-audit --no-fund --loglevel=error "$NODE_ADDON" "$NODE_MAIN" typescript@~5.9.0 @types/node@^20.19.0)
  if grep -q '"install"' "$APP/node_modules/captcha-dlq/package.json"; then
    echo "package-check: the main package has an install script" >&2; exit 1
  fi
  [ ! -e "$APP/node_modules/@napi-rs/cli" ] || { echo "package-check: @napi-rs/cli was installed for a user" >&2; exit 1; }
  (cd "$APP" && no_rust node -e "
    const m = require('captcha-dlq');
    if (typeof m.Client !== 'function') throw new Error('require(\"captcha-dlq\") has no Client');
    console.log('CommonJS require(\"captcha-dlq\") ok: ' + require.resolve('captcha-dlq'));
  ")
  (cd "$APP" && no_rust node_modules/.bin/tsc -p tsconfig.json && echo "tsc --noEmit typed.ts against the installed index.d.ts ok")
  (cd "$APP" && CAPTCHA_DLQ_PACKAGE=captcha-dlq CAPTCHA_DLQ_PACKAGE_DIR="$APP/node_modules/captcha-dlq" \
    CAPTCHA_DLQ_VECTORS="$REPO/tests/vectors" CAPTCHA_DLQ_SHAPES="$REPO/tests/shapes/results.json" \
    no_rust timeout 900 node --test --test-concurrency=1 tests/node.test.js tests/node-only.test.js tests/node-traces.test.js \
    tests/node-audit.test.js "$REPO/tests/page/node-page.test.js")

  echo "== npm run build without cargo: says what to install instead of a stack trace"
  set +e
  out=$(cd "$REPO/bindings-node" && no_rust node scripts/build.cjs 2>&1)
  status=$?
  set -e
  if [ "$status" = 0 ] || ! grep -q "needs Rust (cargo)" <<<"$out" || ! grep -q "rustup" <<<"$out"; then
    echo "package-check: npm run build without cargo exited $status with: $out" >&2
    exit 1
  fi
  echo "ok: exits $status and says: $(head -1 <<<"$out")"
}

check_browser() {
  echo "== Browser: the captcha-dlq-web tarball into a fresh project, no Rust on PATH; headless Chromium imports it from there"
  command -v "${CHROMIUM:-chromium}" >/dev/null || { echo "package-check: no Chromium (apt-get install -y chromium)" >&2; exit 1; }
  local web=$WORK/web-app runner=$REPO/bindings-wasm/tests/js
  mkdir -p "$web"
  echo '{ "name": "captcha-dlq-web-package-check", "private": true, "type": "module" }' >"$web/package.json"
  (cd "$web" && no_rust npm install --no-audit --no-fund --loglevel=error "$NODE_WEB")
  if [ -L "$web/node_modules/captcha-dlq-web" ] || [ ! -f "$web/node_modules/captcha-dlq-web/wasm/captcha_dlq_wasm_bg.wasm" ]; then
    echo "package-check: npm did not unpack captcha-dlq-web with its .wasm into $web/node_modules" >&2; exit 1
  fi
  # The runner's own tools (playwright-core drives Chromium; esbuild bundles the workers as an author would).
  if [ ! -d "$runner/node_modules/playwright-core" ] || [ ! -d "$runner/node_modules/esbuild" ]; then
    (cd "$runner" && npm ci --no-audit --no-fund --silent)
  fi
  local mock_url nocors_url
  start_mock "$CAPTCHA_DLQ_MOCK_BIN" mock_url '{}'
  start_mock "$CAPTCHA_DLQ_MOCK_BIN" nocors_url '{"cors": false}'
  CAPTCHA_DLQ_WEB_PROJECT="$web" no_rust timeout 900 node "$runner/run.mjs" "$mock_url" "$nocors_url"
}

for part in "${PARTS[@]}"; do
  if [ -z "$ONLY" ] || [ "$ONLY" = "$part" ]; then "check_$part"; fi
done
