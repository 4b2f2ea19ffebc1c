#!/usr/bin/env bash
# Builds every release artifact of this machine's platform (x86_64 Linux) into dist/:
#   captcha_dlq-<v>-cp39-abi3-manylinux_2_17_x86_64.whl  the Python wheel (any CPython >= 3.9, glibc >= 2.17)
#   captcha_dlq-<v>.tar.gz                               the Python sdist (builds with Rust, outside the repository:
#                                                        checked here by pip wheel of a copy in a temporary directory)
#   captcha-dlq-<v>.tgz                                  the Node main package (JS + types; no install script)
#   captcha-dlq-linux-x64-gnu-<v>.tgz                    its prebuilt addon for x86_64 Linux (glibc >= 2.17)
#   captcha-dlq-web-<v>.tgz                              the browser package (.wasm, glue, types)
#   captcha-dlq-<v>-x86_64-unknown-linux-gnu             the CLI binary
# Old-glibc builds link with zig (maturin --zig), installed with the other packaging tools into a venv under
# target/; the addon and the CLI are built by plain cargo in the environment maturin gave its own cargo (see
# .ci/zig-env/cargo), so the three compile the dependency tree once. The other platforms are built by
# .github/workflows/release.yml. Usage: ./package.sh [--profile ci]   (needs cargo, python3, node/npm)
# --profile ci builds the same artifacts with the workspace's `ci` profile (unoptimised, no LTO, no debug info):
# test.sh installs and tests those, and pays minutes less than a release build. The browser package is built
# with its own `wasm-release` profile either way: its size is guarded, and a guard measures what ships.
# The browser package builds beside the native artifacts (its own target dir; its fat-LTO link runs on one core
# for a minute, the native builds use the other). The native artifacts build in target/dist-build (or
# $CARGO_TARGET_DIR), not the workspace's target/: their zig target and profile share nothing with the test
# builds, and a build dir of their own means neither waits on the other's lock when test.sh runs them together.
set -euo pipefail
cd "$(dirname "$0")"
PROFILE=release
case "${1:-}" in
  "") ;;
  --profile) PROFILE=${2:?"usage: ./package.sh [--profile ci]"} ;;
  *) echo "usage: ./package.sh [--profile ci] (got: $*)" >&2; exit 2 ;;
esac
case "$PROFILE" in
  release | ci) ;;
  *) echo "package.sh: --profile is release or ci (got: $PROFILE)" >&2; exit 2 ;;
esac
ROOT=$PWD
DIST=$ROOT/dist
VERSION=$(sed -nE '/^\[workspace.package\]/,/^\[/ s/^version = "(.*)"/\1/p' Cargo.toml)
GLIBC=2.17
step() { printf '\n=== package: %s ===\n' "$*"; }

TOOLS=$ROOT/target/package-tools
if ! "$TOOLS/bin/python" -c "import maturin, ziglang, auditwheel" 2>/dev/null; then
  step "packaging tools (maturin, ziglang, auditwheel) into $TOOLS"
  python3 -m venv "$TOOLS"
  "$TOOLS/bin/pip" install -q --upgrade pip
  "$TOOLS/bin/pip" install -q "maturin>=1.9.4,<2" ziglang auditwheel
fi
# maturin finds zig as `python3 -m ziglang` through this PATH. No `zig` of another origin may come first.
export PATH="$TOOLS/bin:$PATH"
# The zig environment of the wheel's build, replayed for the addon and the CLI (.ci/zig-env/cargo).
ZIG_ENV=$ROOT/target/package-zig-env.sh
TARGET=x86_64-unknown-linux-gnu
# The newest glibc symbol version a binary needs: a zig build for glibc 2.17 needs none newer.
check_glibc() {
  local newest
  newest=$(objdump -T "$1" | grep -oE 'GLIBC_[0-9]+\.[0-9]+(\.[0-9]+)?' | sed 's/GLIBC_//' | sort -V | tail -1)
  if [ "$(printf '%s\n%s\n' "$newest" "$GLIBC" | sort -V | tail -1)" != "$GLIBC" ]; then
    echo "package.sh: $1 needs glibc $newest, newer than $GLIBC" >&2
    exit 1
  fi
  echo "$(basename "$1"): newest glibc symbol $newest (limit $GLIBC)"
}

rm -rf "$DIST"
mkdir -p "$DIST"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target/dist-build}"

BROWSER_LOG=$(mktemp "${TMPDIR:-/tmp}/captcha-dlq-browser-build.XXXXXX")
SDIST_WORK=
BROWSER_BUILD=
# A failed step stops the browser build too, rather than leaving it compiling after package.sh has ended.
cleanup() {
  [ -z "$BROWSER_BUILD" ] || { pkill -TERM -P "$BROWSER_BUILD" 2>/dev/null; kill "$BROWSER_BUILD" 2>/dev/null; } || true
  rm -rf "$BROWSER_LOG" ${SDIST_WORK:+"$SDIST_WORK"}
}
trap cleanup EXIT
bash bindings-wasm/build.sh >"$BROWSER_LOG" 2>&1 &
BROWSER_BUILD=$!

step "Python wheel (abi3, manylinux_${GLIBC/./_} through zig) and sdist"
rm -f "$ZIG_ENV"
REAL_CARGO=$(command -v cargo)
(cd bindings-python \
  && PATH="$ROOT/.ci/zig-env:$PATH" CAPTCHA_DLQ_ZIG_ENV=$ZIG_ENV CAPTCHA_DLQ_REAL_CARGO=$REAL_CARGO \
    maturin build --profile "$PROFILE" --zig --compatibility "manylinux_${GLIBC/./_}" --out "$DIST" \
  && maturin sdist --out "$DIST")
[ -s "$ZIG_ENV" ] || { echo "package.sh: maturin's build did not go through .ci/zig-env/cargo" >&2; exit 1; }
WHEEL=$(ls "$DIST"/captcha_dlq-"$VERSION"-cp39-abi3-*manylinux_2_17_x86_64.whl)
# auditwheel reads the symbols the extension needs and names the oldest platform tag they allow.
auditwheel show "$WHEEL" | tee "$DIST/.auditwheel.txt"
grep -q "manylinux_2_17_x86_64" "$DIST/.auditwheel.txt" || { echo "package.sh: $WHEEL is not manylinux_2_17" >&2; exit 1; }
rm "$DIST/.auditwheel.txt"

step "the sdist builds outside the repository: pip wheel of a copy in a temporary directory, imported from a fresh venv"
# pip runs the sdist's own build backend (maturin, from its pyproject.toml) on the unpacked tree, without build
# isolation so that it is the maturin and zig above, in the same target dir. Here, right after the
# wheel, the dependencies maturin just compiled are up to date for its linker, so only the unpacked crates compile
# again (their path differs).
SDIST_WORK=$(mktemp -d "${TMPDIR:-/tmp}/captcha-dlq-sdist.XXXXXX")
cp "$DIST/captcha_dlq-$VERSION.tar.gz" "$SDIST_WORK/"
started=$SECONDS
(cd "$SDIST_WORK" && MATURIN_PEP517_ARGS="--profile $PROFILE --zig --compatibility manylinux_${GLIBC/./_}" \
  python -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
  --wheel-dir "$SDIST_WORK/wheel" "$SDIST_WORK/captcha_dlq-$VERSION.tar.gz")
python -m venv --without-pip "$SDIST_WORK/venv"
python -m pip --python "$SDIST_WORK/venv/bin/python" install --quiet --disable-pip-version-check --no-deps \
  --only-binary=:all: "$SDIST_WORK"/wheel/captcha_dlq-"$VERSION"-*.whl
(cd "$SDIST_WORK" && "$SDIST_WORK/venv/bin/python" -c '
import sys, captcha_dlq
assert captcha_dlq.__file__.startswith(sys.prefix), f"imported {captcha_dlq.__file__}, not the wheel built from the sdist"
assert captcha_dlq.__version__ == sys.argv[1], f"__version__ {captcha_dlq.__version__}, the workspace says {sys.argv[1]}"
print(f"captcha_dlq {captcha_dlq.__version__} built from the sdist imports from {captcha_dlq.__file__}")
' "$VERSION")
echo "the sdist's wheel built in $((SECONDS - started)) s"
rm -rf "$SDIST_WORK"

step "Node addon for $TARGET (glibc $GLIBC through the wheel's zig environment) and its two tarballs"
cd "$ROOT/bindings-node"
[ -x node_modules/.bin/napi ] || npm install --no-audit --no-fund
# shellcheck source=/dev/null
(. "$ZIG_ENV" && CAPTCHA_DLQ_BUILD_PROFILE=$PROFILE node scripts/build.cjs --target "$TARGET")
ADDON=captcha-dlq.linux-x64-gnu.node
check_glibc "$ADDON"
cp "$ADDON" npm/linux-x64-gnu/
(cd npm/linux-x64-gnu && npm pack --silent --pack-destination "$DIST" >/dev/null)
npm pack --silent --pack-destination "$DIST" >/dev/null
rm npm/linux-x64-gnu/"$ADDON"
cd "$ROOT"

step "browser package (bindings-wasm/build.sh, started first, then npm pack of bindings-wasm/pkg)"
status=0
wait "$BROWSER_BUILD" || status=$?
BROWSER_BUILD=
cat "$BROWSER_LOG"
[ "$status" = 0 ] || { echo "package.sh: bindings-wasm/build.sh failed (exit $status)" >&2; exit 1; }
(cd bindings-wasm/pkg && npm pack --silent --pack-destination "$DIST" >/dev/null)

step "CLI binary (glibc $GLIBC through the wheel's zig environment)"
# shellcheck source=/dev/null
(. "$ZIG_ENV" && cargo build --profile "$PROFILE" -q -p captcha-dlq-cli --target "$TARGET")
check_glibc "$CARGO_TARGET_DIR/$TARGET/$PROFILE/captcha-dlq"
cp "$CARGO_TARGET_DIR/$TARGET/$PROFILE/captcha-dlq" "$DIST/captcha-dlq-$VERSION-$TARGET"

step "dist/"
ls -l "$DIST"
