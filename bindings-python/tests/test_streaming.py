"""Results as they come: solve_iter, replay_iter and recover_iter, and what concurrency means."""

from __future__ import annotations

import threading
from typing import Any, Dict, List

from conftest import API_KEY, FAST, Mock, eventually

from captcha_dlq import Client, MemoryDlq, RecaptchaV2, SolveFailed, SolveResult

#: Patient polling: a task that is never ready stays in flight for many seconds.
PATIENT: Any = dict(FAST, polling=dict(FAST["polling"], max_polls=1000))


def task(i: int) -> RecaptchaV2:
    return RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/page/{i}")


def test_results_arrive_while_one_task_never_completes(mock: Mock) -> None:
    mock.script({"rules": [{"match": {"page_url_contains": "page/4"}, "behavior": {"outcome": "never_ready"}}]})
    with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **PATIENT) as client:
        seen: List[SolveResult] = []
        stream = client.solve_iter([task(i) for i in range(10)], labels={"job": "stream"})
        for result in stream:
            seen.append(result)
            if len(seen) == 9:
                break
        assert sorted(r.index for r in seen) == [0, 1, 2, 3, 5, 6, 7, 8, 9], "all but the slow one, before it"
        assert all(r.ok and r.id and r.labels == {"job": "stream"} for r in seen)
        status = client.status()
        assert status["jobs"] == 1, "the never-ready task was still running when the others were in hand"
        # Leaving the loop cancels it: the provider has it, so it runs on in the journal.
        stream.close()
        [entry] = client.dlq.journal()
        assert entry["task"]["page_url"].endswith("page/4") and entry["provider_task_id"]
        assert client.dlq.count() == 0


def test_concurrency_300_really_runs_300_at_once(mock: Mock) -> None:
    mock.script({"default": {"solve_after_ms": 3000}})
    # The client's own limit is low; the call asks for 300.
    tight = dict(PATIENT, rate={"submits_per_second": 10000.0, "max_in_flight": 50})
    with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **tight) as client:
        outcome: Dict[str, Any] = {}

        def run() -> None:
            outcome["results"] = client.solve_many([task(i) for i in range(300)], concurrency=300)

        runner = threading.Thread(target=run)
        runner.start()
        most = 0
        limit = 0
        while runner.is_alive():
            status = client.status()
            most = max(most, status["in_flight"])
            limit = max(limit, status["in_flight_limit"])
            runner.join(0.02)
        assert len(outcome["results"]) == 300 and all(r.text for r in outcome["results"])  # type: ignore[union-attr]
        assert limit >= 300, "the call raised the in-flight limit"
        assert most == 300, "all 300 were with the provider at once"
    assert mock.counters()["tasks_created"] == 300


def test_replay_hands_over_the_tokens_it_solves(mock: Mock) -> None:
    mock.script({"rules": [{"match": {"page_url_contains": "page/"}, "behavior": {"outcome": "unsolvable"}}]})
    with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as client:
        failed = client.solve_many([task(i) for i in range(3)], labels={"job": "r"})
        assert all(isinstance(f, SolveFailed) for f in failed)
        mock.script({"default": {"solve_after_ms": 0}})
        stream = client.replay_iter(reasons=["ERROR_CAPTCHA_UNSOLVABLE"])
        items = list(stream)
        assert sorted(i.id for i in items) == sorted(str(f.id) for f in failed if isinstance(f, SolveFailed))
        assert all(i.outcome == "recovered" and i.solution is not None and i.solution.text for i in items)
        assert all(i.labels == {"job": "r"} for i in items)
        assert stream.report["recovered"] == 3 and stream.report["received"] == 3
        eventually(lambda: client.dlq.count() == 0 and client.dlq.journal() == [], "replayed records go once taken")


def test_recover_iter_hands_over_what_a_cancelled_caller_left(mock: Mock) -> None:
    mock.script({"default": {"solve_after_ms": 300}})
    with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **PATIENT) as client:
        stream = client.solve_iter([task(i) for i in range(5)], concurrency=5)
        first = next(stream)
        assert first.ok
        stream.close()  # the other four are with the provider (or answered, not yet taken): they run on
        created = mock.counters()["tasks_created"]
        recovered = client.recover_iter()
        items = list(recovered)
        assert sorted(i.id for i in items if i.id) == sorted(i.id for i in items) and len(items) == 4
        assert all(i.ok and i.solution is not None for i in items)
        assert first.id not in {i.id for i in items}
        assert recovered.summary["found"] == 4 and recovered.summary["solved"] == 4
        assert mock.counters()["tasks_created"] == created == 5, "recovered by polling, not by submitting again"
