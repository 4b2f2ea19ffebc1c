"""What the page tests share: the mock solver (hCaptcha allowed), the fixture site (tests/page/server.mjs, which
verifies answers against the mock's /siteverify), a client, the system's Chromium (nothing is downloaded), and the
check that a page's widgets were all solved where they belong. conftest.py makes fixtures of them."""

from __future__ import annotations

import base64
import http.client
import importlib.util
import json
import shutil
import subprocess
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional
from urllib.parse import urlsplit

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


class LoopbackProxy:
    """A forward HTTP proxy on loopback (what ``--proxy-server`` points Chromium at): it relays each request and
    keeps the URLs it relayed; with ``auth`` (login, password) it wants ``Proxy-Authorization`` (407 otherwise)."""

    def __init__(self, auth: Optional[Any] = None) -> None:
        self.relayed: List[str] = []
        relayed = self.relayed
        expected = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode() if auth else None

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def relay(self) -> None:
                if expected and self.headers.get("Proxy-Authorization") != expected:
                    self.send_response(407)
                    self.send_header("Proxy-Authenticate", 'Basic realm="page-test"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                target = urlsplit(self.path)
                relayed.append(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("proxy-authorization", "proxy-connection", "connection")}
                upstream = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port or 80, timeout=30)
                path = target.path + ("?" + target.query if target.query else "")
                upstream.request(self.command, path, body=body, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for k, v in answer.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

            do_GET = do_POST = do_HEAD = relay

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def mock_requires(mock: Mock, needles: List[str]) -> None:
    """The mock solves a task only if it carried every one of ``needles`` (the proxy, the user agent, a cookie)."""
    mock.script(
        {
            "hcaptcha_code": "",
            "default": {"outcome": "bad_parameters", "code": "ERROR_BAD_PARAMETERS"},
            "rules": [{"match": {"all_contain": needles}, "behavior": {"outcome": "solve"}}],
        }
    )


def mock_default(mock: Mock) -> None:
    mock.script({"hcaptcha_code": ""})


@pytest.fixture(scope="session")
def two_captcha(page_mock: Mock) -> Iterator[Client]:
    """A client of a provider that solves AWS WAF (the main one's does not)."""
    c = Client(
        provider="2captcha",
        api_key=API_KEY,
        base_url=page_mock.base_url,
        dlq="memory",
        polling={"first_poll_ms": 20, "interval_ms": 20, "max_polls": 200, "coalesce_ms": 5},
    )
    yield c
    c.close()


@pytest.fixture(scope="session")
def capsolver(page_mock: Mock) -> Iterator[Client]:
    """A client of a provider that solves Cloudflare's challenge."""
    c = Client(
        provider="capsolver",
        api_key=API_KEY,
        base_url=page_mock.base_url,
        dlq="memory",
        polling={"first_poll_ms": 20, "interval_ms": 20, "max_polls": 200, "coalesce_ms": 5},
    )
    yield c
    c.close()


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
    # No widget the page does not have (a kind detected where there is none fails its task's checks).
    assert [(r.kind, r.error) for r in results if r.error is not None and type(r.error).__name__ != "NotSolvable"] == []
    solved = [r for r in results if r.error is None]
    assert len(solved) == len(expected), [(r.kind, r.error) for r in results]
    assert all(r.injected for r in solved)
