"""A fleet heals by itself: a child process with tasks in flight on a SQLite DLQ is killed
(SIGKILL); a running ``Client(on_adopted=...)`` on the same file and key adopts them once the
child's heartbeat stops, and hands each answer to its hook once, as the ``RecoverItem``
``recover()`` yields. Counted at the mock: nothing is submitted twice. Waits are bounded."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import List

import pytest
from conftest import API_KEY, Mock, eventually

from captcha_dlq import Client, InvalidConfig, RecoverItem

N = 5

CHILD = textwrap.dedent(
    """
    import sys, time
    from captcha_dlq import Client, RecaptchaV2
    base_url, db, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    settings = {"polling": {"first_poll_ms": 100, "interval_ms": 100, "max_polls": 100000}}
    client = Client(%r, "2captcha", db, base_url=base_url, **settings)
    tasks = [RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/adopt/{i}") for i in range(n)]
    client.solve_many(tasks, concurrency=n)
    time.sleep(3600)
    """
    % API_KEY
)

POLLING = {"first_poll_ms": 100, "interval_ms": 100, "max_polls": 100000}


def journaled(client: Client) -> int:
    return sum(1 for e in client.dlq.journal() if e.get("provider_task_id"))


def test_a_killed_clients_answers_go_to_the_on_adopted_hook_once(mock: Mock, tmp_path: Path) -> None:
    mock.script({"default": {"solve_after_ms": 4000}})
    db = str(tmp_path / "dlq.sqlite")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, mock.base_url, db, str(N)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    taken: List[RecoverItem] = []
    lock = threading.Lock()

    def on_adopted(item: RecoverItem) -> None:
        with lock:
            taken.append(item)

    try:
        with Client(API_KEY, "2captcha", db, base_url=mock.base_url, on_adopted=on_adopted, polling=POLLING) as client:
            eventually(lambda: journaled(client) == N, "the child's tasks are with the provider", within_s=60)
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
            eventually(lambda: len(taken) >= N, "every adopted answer reached the hook", within_s=60)
            with lock:
                got = list(taken)
            assert len(got) == N and len({i.id for i in got}) == N, "each answer once"
            assert all(isinstance(i, RecoverItem) and i.ok and i.solution is not None for i in got)
            assert all(i.solution is not None and i.solution.provider_task_id for i in got)
            eventually(lambda: client.dlq.journal() == [], "the taken answers leave the journal")
            assert mock.counters()["tasks_created"] == N, "adopted tasks were polled, not submitted again"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_on_adopted_must_be_callable(mock: Mock, tmp_path: Path) -> None:
    with pytest.raises(InvalidConfig) as e:
        Client(API_KEY, "2captcha", str(tmp_path / "d.sqlite"), base_url=mock.base_url, on_adopted="print")  # type: ignore[arg-type]
    assert e.value.field == "on_adopted"


def test_adoption_can_be_turned_off(mock: Mock, tmp_path: Path) -> None:
    with Client(API_KEY, "2captcha", str(tmp_path / "d.sqlite"), base_url=mock.base_url, fleet={"adopt": False}) as c:
        assert not c.closed
    with pytest.raises(InvalidConfig) as e:
        Client(API_KEY, "2captcha", str(tmp_path / "d.sqlite"), base_url=mock.base_url, fleet={"adopt": "no"})
    assert e.value.field == "fleet.adopt"
