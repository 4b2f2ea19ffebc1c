#!/usr/bin/env python3
"""One version everywhere: the workspace's `[workspace.package] version` is the version of every
crate, of the Python package (maturin reads it from Cargo.toml), of both npm packages and the
per-platform addon packages (and the main package's optionalDependencies on them), the heading of
CHANGELOG.md's newest entry, and — when dist/ exists — of every artifact's name, of the CLI's
`--version` and of the wheel's metadata. Exits non-zero naming each mismatch.

Usage: python3 .ci/version-check.py   (from anywhere; run after ./package.sh to check dist/ too)
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    tomllib = None  # type: ignore[assignment]

REPO = Path(__file__).resolve().parents[1]
problems: list[str] = []


def load_toml(path: Path) -> dict:
    if tomllib is None:
        sys.exit("version-check: needs Python >= 3.11 (tomllib)")
    return tomllib.loads(path.read_text())


def expect(what: str, found: object, want: str) -> None:
    if found != want:
        problems.append(f"{what}: {found!r}, expected {want!r}")


root = load_toml(REPO / "Cargo.toml")
VERSION = root["workspace"]["package"]["version"]

# Crates: each member inherits the workspace version; path dependencies name the same version.
for member in root["workspace"]["members"]:
    manifest = load_toml(REPO / member / "Cargo.toml")
    expect(f"{member}/Cargo.toml package.version", manifest["package"].get("version"), {"workspace": True})  # type: ignore[arg-type]
for name, spec in root["workspace"]["dependencies"].items():
    if isinstance(spec, dict) and "path" in spec and "version" in spec:
        expect(f"Cargo.toml workspace.dependencies.{name}.version", spec["version"], VERSION)

# Python: the version is dynamic, read by maturin from the crate.
pyproject = load_toml(REPO / "bindings-python" / "pyproject.toml")
if "version" not in pyproject["project"].get("dynamic", []):
    problems.append("bindings-python/pyproject.toml: project.version must be dynamic (maturin takes Cargo's)")

# npm: the main package, its optionalDependencies, each platform package, the browser package.
node = json.loads((REPO / "bindings-node" / "package.json").read_text())
expect("bindings-node/package.json version", node["version"], VERSION)
platforms = sorted(p.name for p in (REPO / "bindings-node" / "npm").iterdir() if p.is_dir())
for platform in platforms:
    manifest = json.loads((REPO / "bindings-node" / "npm" / platform / "package.json").read_text())
    expect(f"bindings-node/npm/{platform}/package.json version", manifest["version"], VERSION)
    dep = f"captcha-dlq-{platform}"
    expect(f"bindings-node/package.json optionalDependencies.{dep}", node.get("optionalDependencies", {}).get(dep), VERSION)
extra = set(node.get("optionalDependencies", {})) - {f"captcha-dlq-{p}" for p in platforms}
if extra:
    problems.append(f"bindings-node/package.json optionalDependencies without an npm/ folder: {sorted(extra)}")
web = json.loads((REPO / "bindings-wasm" / "js" / "package.json").read_text())
expect("bindings-wasm/js/package.json version", web["version"], VERSION)

# CHANGELOG.md: the newest entry is this version.
changelog = (REPO / "CHANGELOG.md").read_text()
heading = re.search(r"^## \[?([0-9][^\]\s]*)", changelog, re.MULTILINE)
expect("CHANGELOG.md newest entry", heading.group(1) if heading else None, VERSION)

# dist/, when ./package.sh has run.
dist = REPO / "dist"
if dist.is_dir():
    wanted = [
        f"captcha_dlq-{VERSION}.tar.gz",
        f"captcha-dlq-{VERSION}.tgz",
        f"captcha-dlq-linux-x64-gnu-{VERSION}.tgz",
        f"captcha-dlq-web-{VERSION}.tgz",
        f"captcha-dlq-{VERSION}-x86_64-unknown-linux-gnu",
    ]
    for name in wanted:
        if not (dist / name).is_file():
            problems.append(f"dist/{name}: missing")
    wheels = sorted(dist.glob(f"captcha_dlq-{VERSION}-cp39-abi3-*.whl"))
    if not wheels:
        problems.append(f"dist/: no captcha_dlq-{VERSION}-cp39-abi3-*.whl")
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as zf:
            meta = zf.read(f"captcha_dlq-{VERSION}.dist-info/METADATA").decode()
        expect(f"{wheel.name} METADATA Version", re.search(r"^Version: (.*)$", meta, re.MULTILINE).group(1), VERSION)  # type: ignore[union-attr]
    cli = dist / f"captcha-dlq-{VERSION}-x86_64-unknown-linux-gnu"
    if cli.is_file():
        out = subprocess.run([str(cli), "--version"], capture_output=True, text=True, check=False).stdout.strip()
        expect("captcha-dlq --version", out, f"captcha-dlq {VERSION}")

if problems:
    print("version-check: versions disagree:", *problems, sep="\n  ", file=sys.stderr)
    sys.exit(1)
print(f"version-check: {VERSION} everywhere ({len(root['workspace']['members'])} crates, wheel, "
      f"{len(platforms) + 2} npm packages{', dist/' if dist.is_dir() else ''})")
