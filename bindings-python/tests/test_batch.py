"""The seeds' batch end to end over real HTTP against the mock, with every store."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator, List

import pytest
from conftest import API_KEY, FAST, Mock, redis_flush
from pystore import PyMemoryStore

from captcha_dlq import Client, MemoryDlq, RecaptchaV2, RedisDlq, SolveFailed, Solution

URLS = [f"https://example.com/page/{i}" for i in range(5)]
SITEKEY = "6Le-SITEKEY"


@pytest.fixture(params=["sqlite", "memory", "redis", "python"])
def dlq(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    kind = request.param
    if kind == "sqlite":
        yield str(tmp_path / "dlq.sqlite")
    elif kind == "memory":
        yield MemoryDlq()
    elif kind == "redis":
        url = request.getfixturevalue("redis_url")
        redis_flush(url)
        yield RedisDlq(url)
    else:
        yield PyMemoryStore()


def client_for(mock: Mock, dlq: Any, **kw: Any) -> Client:
    return Client(api_key=API_KEY, provider="2captcha", dlq=dlq, base_url=mock.base_url, **FAST, **kw)


def test_seed_batch_then_replay(mock: Mock, dlq: Any) -> None:
    seen: List[tuple] = []
    with client_for(mock, dlq) as client:
        results = client.solve_many(
            [RecaptchaV2(sitekey=SITEKEY, page_url=u) for u in URLS], concurrency=5, progress=lambda d, t: seen.append((d, t))
        )
        assert len(results) == 5
        solved = [r for r in results if isinstance(r, Solution)]
        failed = {i: r for i, r in enumerate(results) if isinstance(r, SolveFailed)}
        assert len(solved) == 3
        assert sorted(failed) == [2, 4]
        for i, err in failed.items():
            assert err.attempts == 4
            assert err.record is not None and err.record["task"]["page_url"] == URLS[i]
            assert err.stored is True
        assert failed[2].reason == "ERROR_CAPTCHA_UNSOLVABLE"
        assert failed[4].reason == "Timeout"
        for r in solved:
            assert r.text and r.provider_task_id
        assert seen and seen[-1] == (5, 5)

        assert client.dlq.count() == 2
        stats = client.dlq.stats()
        assert stats["total"] == 2 and stats["ready"] == 2 and stats["in_flight"] == 0
        # The service recovers: every task solves now.
        mock.script({"default": {"solve_after_ms": 0}})
        report = client.replay()
        assert report["received"] == 2
        assert report["recovered"] == 2
        assert client.dlq.count() == 0
        assert client.dlq.stats()["completed"] == 2
    if isinstance(dlq, PyMemoryStore):
        assert dlq.calls["push"] == 2 and dlq.calls["complete"] == 2 and dlq.calls["journal_upsert"] >= 5


def test_sync_solve_and_error(mock: Mock, dlq: Any) -> None:
    with client_for(mock, dlq) as client:
        sol = client.solve({"type": "recaptcha_v2", "sitekey": SITEKEY, "page_url": URLS[0]})
        assert str(sol) == sol.text != ""
        with pytest.raises(SolveFailed) as info:
            client.solve(RecaptchaV2(sitekey=SITEKEY, page_url=URLS[2]))
        assert info.value.code == "SOLVE_FAILED"
        assert info.value.attempts == 4
        peeked = client.dlq.peek()
        assert [r["id"] for r in peeked] == [info.value.id]
        assert client.dlq.park(peeked[0]["id"], "needs review") is True
        assert client.dlq.count(states=["parked"]) == 1
        assert client.dlq.unpark(peeked[0]["id"]) is True
        assert client.dlq.count(states=["ready"]) == 1


def test_replay_leaves_still_failing_records(mock: Mock, tmp_path: Path) -> None:
    with client_for(mock, str(tmp_path / "d.sqlite")) as client:
        client.solve_many([RecaptchaV2(sitekey=SITEKEY, page_url=URLS[2])])
        report = client.replay(reasons=["ERROR_CAPTCHA_UNSOLVABLE"])
        assert report["received"] == 1 and report["recovered"] == 0
        assert report["failed_again"] + report["parked"] == 1
        [record] = client.dlq.peek()
        assert record["attempts"] == 6 and record["replays"] == 1


