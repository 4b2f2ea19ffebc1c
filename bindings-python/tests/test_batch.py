"""The seeds' batch end to end over real HTTP against the mock, with every store."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, List

import pytest
from conftest import API_KEY, FAST, REPO, DictStore, Mock, eventually, redis_flush

from captcha_dlq import Client, MemoryDlq, RecaptchaV2, RedisDlq, SolveFailed, Solution

URLS = [f"https://example.com/page/{i}" for i in range(5)]
SITEKEY = "6Le-SITEKEY"


def make_dlq(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if kind == "sqlite":
        return str(tmp_path / "dlq.sqlite")
    if kind == "memory":
        return MemoryDlq()
    if kind == "redis":
        url = request.getfixturevalue("redis_url")
        redis_flush(url)
        return RedisDlq(url)
    return DictStore()


@pytest.fixture(params=["sqlite", "memory", "redis", "python"])
def dlq(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    return make_dlq(request.param, request, tmp_path)


@pytest.fixture(
    params=[
        "sqlite",
        "memory",
        "redis",
        "python",
    ]
)
def replay_dlq(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    return make_dlq(request.param, request, tmp_path)


def client_for(mock: Mock, dlq: Any, **kw: Any) -> Client:
    return Client(api_key=API_KEY, provider="2captcha", dlq=dlq, base_url=mock.base_url, **FAST, **kw)


def test_seed_batch_then_replay_returns_the_tokens(mock: Mock, replay_dlq: Any) -> None:
    dlq = replay_dlq
    with client_for(mock, dlq) as client:
        results = client.solve_many([RecaptchaV2(sitekey=SITEKEY, page_url=u) for u in URLS], concurrency=5)
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

        assert client.dlq.count() == 2
        stats = client.dlq.stats()
        assert stats["total"] == 2 and stats["ready"] == 2 and stats["in_flight"] == 0
        # The service recovers: every task solves now, and replay hands the tokens over.
        mock.script({"default": {"solve_after_ms": 0}})
        replayed = client.replay()
        assert replayed.report["received"] == 2
        assert replayed.report["recovered"] == 2
        assert sorted(i.id for i in replayed.solved) == sorted(str(e.id) for e in failed.values())
        assert all(a.solution.text for a in replayed.solved)
        assert [i.id for i in replayed.items if i.outcome == "recovered"] == [a.id for a in replayed.solved]
        shapes = json.loads((REPO / "tests" / "shapes" / "results.json").read_text())
        assert [f.name for f in dataclasses.fields(replayed)] == shapes["replay"]
        assert [f.name for f in dataclasses.fields(replayed.solved[0])] == shapes["answer"]
        assert sorted(replayed.report) == sorted(shapes["replay_report"])
        recovered = client.recover()
        assert [f.name for f in dataclasses.fields(recovered)] == shapes["recover"]
        assert sorted(recovered.report) == sorted(shapes["recover_report"])
        eventually(lambda: client.dlq.count() == 0, "the replayed records go once their answers are taken", 10)
        assert client.dlq.journal() == []
    if isinstance(dlq, DictStore):
        assert dlq.calls["write"] > 0 and dlq.calls["get"] + dlq.calls["scan"] > 0


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


def test_replay_leaves_still_failing_records(mock: Mock) -> None:
    with client_for(mock, MemoryDlq()) as client:
        client.solve_many([RecaptchaV2(sitekey=SITEKEY, page_url=URLS[2])])
        replayed = client.replay(reasons=["ERROR_CAPTCHA_UNSOLVABLE"])
        assert replayed.report["received"] == 1 and replayed.report["recovered"] == 0
        assert replayed.report["failed_again"] + replayed.report["parked"] == 1
        assert replayed.solved == []
        [item] = replayed.items
        assert item.outcome == "failed_again" and item.record is not None
        [record] = client.dlq.peek()
        assert record["attempts"] == 6 and record["replays"] == 1


def test_batch_items_carry_their_own_labels_and_keys(mock: Mock) -> None:
    with client_for(mock, MemoryDlq()) as client:
        items: List[Any] = [
            {"task": RecaptchaV2(sitekey=SITEKEY, page_url=URLS[0]), "labels": {"row": "0"}, "key": "job-1/0"},
            {"task": {"type": "recaptcha_v2", "sitekey": SITEKEY, "page_url": URLS[2]}, "labels": {"row": "2"}},
        ]
        results = sorted(client.solve_iter(items, labels={"job": "j"}), key=lambda r: r.index)
        assert [r.labels for r in results] == [{"job": "j", "row": "0"}, {"job": "j", "row": "2"}]
        assert results[0].key == "job-1/0" and results[0].ok and results[0].id
        assert not results[1].ok and isinstance(results[1].error, SolveFailed)
        assert results[1].error.record is not None and results[1].error.record["labels"] == {"job": "j", "row": "2"}
        assert [s["key"] for s in client.dlq.settled("job-1/")] == ["job-1/0"]
        assert client.dlq.clear_settled("job-1/") == 1


def test_a_task_object_hands_over_the_task_checked_when_it_was_built(mock: Mock) -> None:
    """A task object keeps the core's checked task from its construction, and solving it hands
    that over instead of reading its fields again: a field changed behind the frozen object's
    back (page 2, which the mock never solves) is not what is solved."""
    task = RecaptchaV2(sitekey=SITEKEY, page_url=URLS[0])
    object.__setattr__(task, "page_url", URLS[2])
    with client_for(mock, MemoryDlq()) as client:
        assert client.solve(task).text != ""
        [alone, wrapped] = client.solve_many([task, {"task": task, "labels": {"row": "1"}}])
        assert isinstance(alone, Solution) and isinstance(wrapped, Solution)
        with pytest.raises(SolveFailed):
            client.solve(task.to_dict())
