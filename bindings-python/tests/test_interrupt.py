"""Ctrl-C keeps every answer: a child process runs a sync solve_many of 200 tasks and gets
SIGINT mid-way. The answers it already had are on the KeyboardInterrupt's `partial`; the
tasks the provider had wait in the journal and `recover()` finishes them by polling; the
ones never sent are dead-lettered as Cancelled. Counted at the mock: nothing sent twice."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import API_KEY, FAST, Mock, eventually

from captcha_dlq import Client

N = 200

CHILD = textwrap.dedent(
    """
    import json, sys
    from captcha_dlq import Client, RecaptchaV2, Solution
    base_url, db, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    settings = {"polling": {"first_poll_ms": 100, "interval_ms": 100, "max_polls": 100000, "coalesce_ms": 5},
                "retry": {"task_deadline_ms": 3600000}, "rate": {"submits_per_second": 40.0}}
    client = Client(%r, "2captcha", db, base_url=base_url, **settings)
    tasks = [RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/x/{i}") for i in range(n)]
    try:
        client.solve_many(tasks, concurrency=n)
        print(json.dumps({"finished": True}), flush=True)
    except KeyboardInterrupt as interrupt:
        partial = interrupt.partial
        print(json.dumps({
            "slots": len(partial),
            "answered": [i for i, r in enumerate(partial) if isinstance(r, Solution)],
            "failed": [i for i, r in enumerate(partial) if r is not None and not isinstance(r, Solution)],
        }), flush=True)
        client.close()
        sys.exit(130)
    """
    % API_KEY
)


def test_sigint_keeps_every_answer_and_submits_nothing_twice(mock: Mock, tmp_path: Path) -> None:
    mock.script({"default": {"solve_after_ms": 2000}})
    db = str(tmp_path / "dlq.sqlite")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, mock.base_url, db, str(N)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while mock.counters()["tasks_solved"] < 20:
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the child never got answers"
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130, (out, err)
    assert "PanicException" not in err and "Traceback" not in err, err
    report = json.loads(out.strip().splitlines()[-1])
    answered, failed = report["answered"], report["failed"]
    assert report["slots"] == N and failed == []

    patient = dict(FAST, polling=dict(FAST["polling"], max_polls=1000))
    with Client(API_KEY, "2captcha", db, base_url=mock.base_url, **patient) as client:
        journal = client.dlq.journal()
        records = client.dlq.peek(limit=N)
        assert all(r["reason"] == "Cancelled" and r["attempts"] == 0 for r in records), "only never-sent tasks"
        assert all(e.get("provider_task_id") for e in journal), "every journaled task is with the provider"
        assert len(answered) + len(journal) + len(records) == N, "nothing lost"
        # The 20 answers the mock gave before the interrupt were returned to the child, or are in the journal if the
        # interrupt came while they were on their way (a race the load decides, so the sum is what is asserted).
        assert len(answered) + len(journal) >= 20, "the answers the child had were returned to it or journaled"
        assert 0 < len(journal) and 0 < len(records), "the interrupt found tasks in flight and tasks not yet sent"
        submitted = mock.counters()["tasks_created"]
        print(f"SIGINT: {len(answered)} answered, {len(journal)} in the journal, {len(records)} cancelled; {submitted} sent")
        assert submitted == len(answered) + len(journal), "each task sent once"
        recovered = client.recover()
        assert len(recovered.solved) == len(journal) and recovered.failed == []
        assert mock.counters()["tasks_created"] == submitted, "recover polled; it did not submit again"
        eventually(lambda: client.dlq.journal() == [], "the recovered answers leave the journal")
        assert API_KEY not in json.dumps([i.id for i in recovered.solved])
