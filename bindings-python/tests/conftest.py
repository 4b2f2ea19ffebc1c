"""Fixtures: the mock solver binary over real HTTP, a real redis-server, fast engine settings,
and the dict store of docs/custom-store.md."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
API_KEY = "sk-test-SECRET-4f7a9c1e"

#: Engine settings for a mock that answers at once: poll after 20 ms, time an attempt out after
#: 3 polls, retry after 10 ms. (The defaults follow the providers' docs: 15 s first poll, 5 s interval.)
FAST: Dict[str, Any] = {
    "polling": {"first_poll_ms": 20, "interval_ms": 20, "max_polls": 3, "coalesce_ms": 5},
    "retry": {"backoff": {"kind": "fixed", "delay_ms": 10}, "transient_min_delay_ms": 10},
    "rate": {"submits_per_second": 10000.0, "max_in_flight": 2000},
}

#: Lines a test wants shown at the end of the run whatever pytest captured (the oracle's counts).
SUMMARY: List[str] = []


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for line in SUMMARY:
        terminalreporter.write_line(line)


def eventually(check: Callable[[], bool], what: str, within_s: float = 20.0) -> None:
    """Waits until `check()` holds. An answer's journal entry (and a replayed record) goes
    once its receipt is acknowledged, by a store write the client makes after handing the
    answer over: right after a call returns it may still be on its way."""
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, f"never came true: {what}"
        time.sleep(0.01)


class DictStore:
    """The store of docs/custom-store.md, word for word, counting its calls."""

    def __init__(self) -> None:
        self.tables: Dict[str, Dict[str, Any]] = {}
        self.calls: Dict[str, int] = {}

    def _hit(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def get(self, table: str, key: str) -> Any:
        self._hit("get")
        return self.tables.get(table, {}).get(key)

    def scan(self, table: str) -> Any:
        self._hit("scan")
        return list(self.tables.get(table, {}).values())

    def write(self, ops: Any) -> None:
        self._hit("write")
        for op in ops:
            rows = self.tables.setdefault(op["table"], {})
            if op["op"] == "put":
                rows[op["key"]] = op["row"]
            else:
                rows.pop(op["key"], None)


#: The seeds' batch: page 2 unsolvable, page 4 never ready.
SEED_SCRIPT: Dict[str, Any] = {
    "default": {"solve_after_ms": 0},
    "rules": [
        {"match": {"page_url_contains": "page/2"}, "behavior": {"outcome": "unsolvable"}},
        {"match": {"page_url_contains": "page/4"}, "behavior": {"outcome": "never_ready"}},
    ],
}


def mock_binary() -> Path:
    path = Path(os.environ.get("CAPTCHA_DLQ_MOCK_BIN", REPO / "target" / "debug" / "captcha-dlq-mock"))
    if not path.exists():
        raise RuntimeError(f"mock solver not built at {path}: run `cargo build -p captcha-dlq-mock`")
    return path


def listening_url(proc: "subprocess.Popen[str]", what: str) -> str:
    """The URL a server just started prints first (``listening URL``); if it prints anything
    else, it is killed and the error says what it printed."""
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("listening "):
        proc.kill()
        raise RuntimeError(f"{what} did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return line.split(" ", 1)[1]


class Mock:
    def __init__(self, config: Optional[Dict[str, Any]] = None) -> None:
        args = [str(mock_binary()), "--port", "0"]
        if config is not None:
            args += ["--config", json.dumps(config)]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.base_url = listening_url(self.proc, "mock")

    def counters(self) -> Dict[str, Any]:
        with urllib.request.urlopen(self.base_url + "/mock/counters", timeout=10) as r:
            return dict(json.load(r))

    def script(self, config: Dict[str, Any]) -> None:
        req = urllib.request.Request(
            self.base_url + "/mock/script",
            data=json.dumps(config).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=10) as r:
            r.read()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture
def mock() -> Iterator[Mock]:
    m = Mock(SEED_SCRIPT)
    yield m
    m.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = shutil.which("redis-server")
    if server is None:
        # Same rule as the Rust store tests: a missing server is a failure unless skipping is asked for.
        if os.environ.get("CAPTCHA_DLQ_SKIP_REDIS") == "1":
            pytest.skip("CAPTCHA_DLQ_SKIP_REDIS=1 and redis-server is not on PATH")
        pytest.fail("redis-server is not on PATH: apt-get install -y redis-server (or set CAPTCHA_DLQ_SKIP_REDIS=1)")
    port = free_port()
    d = tmp_path_factory.mktemp("redis")
    pidfile = d / "redis.pid"
    subprocess.run(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--daemonize", "yes", "--pidfile", str(pidfile), "--dir", str(d)],
        check=True,
    )  # fmt: skip
    deadline = time.monotonic() + 20
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("redis-server did not come up")
        time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    try:
        pid = int(pidfile.read_text().strip())
        os.kill(pid, 15)
    except (OSError, ValueError):
        pass


def redis_flush(url: str) -> None:
    host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"FLUSHALL\r\n")
        s.recv(16)
