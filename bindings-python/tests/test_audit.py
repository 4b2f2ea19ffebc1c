"""The audit trail from Python: ``client.dlq`` actions (as ``api``, or as the name given to
``as_operator``), a replay with ``operator=``, then ``client.dlq.audit()`` shows who did what to
how many, on SQLite and on a store written in Python (its ``audit`` table)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import API_KEY, FAST, DictStore, Mock

from captcha_dlq import Client, InvalidConfig, RecaptchaV2


def seeds(c: Client) -> None:
    c.solve_many([RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/page/{i}") for i in range(5)])
    assert c.dlq.count() == 2


@pytest.mark.parametrize("where", ["sqlite", "python store"])
def test_actions_are_in_the_trail_under_the_operators_name(mock: Mock, tmp_path: Path, where: str) -> None:
    dlq: Any = str(tmp_path / "a.sqlite") if where == "sqlite" else DictStore()
    with Client(API_KEY, "2captcha", dlq, base_url=mock.base_url, **FAST) as c:
        seeds(c)
        assert c.dlq.audit() == [], "solving is no operator action"
        alice = c.dlq.as_operator("alice")
        [timeout] = c.dlq.peek(reasons=["Timeout"])
        assert alice.park(timeout["id"], "wrong sitekey") is True
        assert alice.unpark(timeout["id"]) is True
        assert c.dlq.export(tmp_path / "dump.jsonl") == 2
        assert alice.purge(reasons=["Timeout"]) == 1
        assert c.dlq.as_operator("bob").import_(tmp_path / "dump.jsonl") == 2
        replayed = c.replay(reasons=["ERROR_CAPTCHA_UNSOLVABLE"], operator="carol")
        assert replayed.report["received"] == 1
        assert c.dlq.purge(ids=["no-such-id"]) == 0

        entries = c.dlq.audit()
        # Each action leaves its intent before it runs and its result after, pointing at it.
        results = [e for e in entries if e["stage"] == "result"]
        intents = {e["id"]: e for e in entries if e["stage"] == "intent"}
        assert len(intents) == len(results) == 6
        assert all(intents[e["intent"]]["action"] == e["action"] for e in results)
        assert [(e["operator"], e["action"], e["count"]) for e in results] == [
            ("api", "purge", 0),
            ("carol", "replay", 1),
            ("bob", "import", 2),
            ("alice", "purge", 1),
            ("alice", "unpark", 1),
            ("alice", "park", 1),
        ]
        assert results[3]["filter"] == {"reasons": ["Timeout"]}
        assert results[5]["filter"] == {"ids": [timeout["id"]]} and results[5]["detail"] == "wrong sitekey"
        assert results[1]["filter"] == {"reasons": ["ERROR_CAPTCHA_UNSOLVABLE"]}
        assert all(e["error"] is None and e["at"].startswith("20") for e in entries)
        older = c.dlq.audit(limit=2, before=results[3]["id"])
        assert [(e["action"], e["stage"]) for e in older] == [("purge", "intent"), ("unpark", "result")]

        with pytest.raises(InvalidConfig) as empty:
            c.dlq.as_operator("").park(timeout["id"])
        assert empty.value.field is not None and "operator" in empty.value.field
        with pytest.raises(InvalidConfig) as limit:
            c.dlq.audit(limit=0)
        assert limit.value.field is not None and "limit" in limit.value.field
    if isinstance(dlq, DictStore):
        assert len(dlq.tables["audit"]) == 12, "the trail is a table of the user's store"
