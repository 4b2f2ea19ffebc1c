"""Ctrl-C during solve_many: KeyboardInterrupt promptly, every task journaled, recovered by a new process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import API_KEY, FAST, Mock

from captcha_dlq import Client

N = 20

CHILD = textwrap.dedent(
    """
    import json, sys
    from captcha_dlq import Client, RecaptchaV2
    base_url, db, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    slow = {"polling": {"first_poll_ms": 50, "interval_ms": 50, "max_polls": 100000},
            "retry": {"task_deadline_ms": 3600000}, "rate": {"submits_per_second": 1000.0}}
    try:
        with Client(%r, "2captcha", db, base_url=base_url, **slow) as client:
            client.solve_many([RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/x/{i}") for i in range(n)])
        print("FINISHED", flush=True)
    except KeyboardInterrupt:
        print("INTERRUPTED", flush=True)
        sys.exit(130)
    """
    % API_KEY
)


def test_sigint_then_recover(mock: Mock, tmp_path: Path) -> None:
    mock.script({"default": {"outcome": "never_ready"}})
    db = str(tmp_path / "dlq.sqlite")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, mock.base_url, db, str(N)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while mock.counters()["tasks_created"] < N:
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the child never submitted its tasks"
        time.sleep(0.05)
    time.sleep(0.2)  # let the journal record the provider task ids
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert "INTERRUPTED" in out, (out, err)
    assert child.returncode == 130
    assert "PanicException" not in err

    mock.script({"default": {"solve_after_ms": 0}})
    with Client(API_KEY, "2captcha", db, base_url=mock.base_url, **FAST) as client:
        journal = client.dlq.journal()
        assert len(journal) == N
        assert all(e.get("provider_task_id") for e in journal)
        report = client.recover(resume=True)
        assert report["found"] == N
        assert len(report["solved"]) + report["dead_lettered"] == N
        assert len(report["solved"]) == N
        assert client.dlq.journal() == []
        assert client.dlq.count() == 0
    assert API_KEY not in json.dumps(report)
