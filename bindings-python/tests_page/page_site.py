"""What the page tests share: the mock solver (hCaptcha allowed), the fixture site (tests/page/server.mjs, which
verifies answers against the mock's /siteverify), a client, the system's Chromium (nothing is downloaded), and the
check that a page's widgets were all solved where they belong. conftest.py makes fixtures of them."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

from captcha_dlq import Client

# The package tests' mock fixture (tests/conftest.py), loaded under its own name beside this conftest.
_spec = importlib.util.spec_from_file_location("captcha_dlq_package_tests", Path(__file__).resolve().parents[1] / "tests" / "conftest.py")
assert _spec is not None and _spec.loader is not None
_package_tests = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _package_tests
_spec.loader.exec_module(_package_tests)
API_KEY: str = _package_tests.API_KEY
Mock = _package_tests.Mock

REPO = Path(__file__).resolve().parents[2]
MANIFEST: Dict[str, Any] = json.loads((REPO / "tests/page/site/fixtures.json").read_text(encoding="utf-8"))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


class Site:
    def __init__(self, mock_url: str) -> None:
        self.proc = subprocess.Popen(
            ["node", str(REPO / "tests/page/server.mjs"), mock_url], stdout=subprocess.PIPE, text=True
        )
        self.url = _package_tests.listening_url(self.proc, "the fixture site")

    def post(self, path: str) -> None:
        with urllib.request.urlopen(urllib.request.Request(self.url + path, data=b"{}", method="POST"), timeout=10) as r:
            r.read()

    def report(self, page: str) -> Dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}/report?page={page}", timeout=30) as r:
            return dict(json.load(r))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


@pytest.fixture(scope="session")
def page_mock() -> Iterator[Mock]:
    m = Mock({"hcaptcha_code": ""})
    yield m
    m.stop()


@pytest.fixture(scope="session")
def site(page_mock: Mock) -> Iterator[Site]:
    s = Site(page_mock.base_url)
    yield s
    s.stop()


@pytest.fixture(scope="session")
def client(page_mock: Mock) -> Iterator[Client]:
    c = Client(
        api_key=API_KEY,
        base_url=page_mock.base_url,
        dlq="memory",
        polling={"first_poll_ms": 20, "interval_ms": 20, "max_polls": 200, "coalesce_ms": 5},
        rate={"submits_per_second": 1000.0},
    )
    yield c
    c.close()


def assert_solved(page: str, report: Dict[str, Any], results: Any, hooked: bool) -> None:
    """Every widget of `page` verified by the site (callback and form), nothing where it does not belong."""
    expected = [w for w in MANIFEST["widgets"] if w["page"] == page and (hooked or not w.get("hooked"))]
    for w in expected:
        verdict = report["widgets"][w["name"]]
        if w["callback"] and not hooked and w.get("unprepared_callback") is False:
            # Out of reach on a page that was not prepared: the site must not have seen it called either.
            assert verdict["callback"] == {"ok": False, "error": "the callback was not called"}, (w["name"], verdict)
        elif w["callback"]:
            assert verdict["callback"] == {"ok": True, "token": verdict["callback"].get("token")}, (w["name"], verdict)
        if w.get("form"):
            assert verdict["form"].get("ok") is True, (w["name"], verdict)
    assert report["wrong"] == []
    solved = [r for r in results if r.error is None]
    assert len(solved) == len(expected), [(r.kind, r.error) for r in results]
    assert all(r.injected for r in solved)
