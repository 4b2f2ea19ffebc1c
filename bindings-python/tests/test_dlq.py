"""`client.dlq` operations return plain data: peek, stats, analysis, export/import, park, purge."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import API_KEY, FAST, Mock

from captcha_dlq import Client, MemoryDlq, RecaptchaV2


def test_dlq_round_trip(mock: Mock, tmp_path: Path) -> None:
    with Client(API_KEY, "2captcha", str(tmp_path / "a.sqlite"), base_url=mock.base_url, **FAST) as a:
        a.solve_many([RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/page/{i}") for i in range(5)])
        assert a.dlq.count() == 2
        assert a.dlq.count(reasons=["Timeout"]) == 1
        assert a.dlq.count(page_host="example.com") == 2
        assert a.dlq.count(sitekey="other") == 0
        analysis = a.dlq.analysis()
        assert analysis["records"] == 2
        assert {b["key"]: b["count"] for b in analysis["by_reason"]} == {"ERROR_CAPTCHA_UNSOLVABLE": 1, "Timeout": 1}
        assert analysis["by_page_host"] == [{"key": "example.com", "count": 2}]
        assert a.dlq.peek(limit=1)[0]["schema"] == 1
        assert len(a.dlq.peek(limit=1, offset=1)) == 1
        assert a.dlq.export(tmp_path / "dump.jsonl") == 2
        lines = (tmp_path / "dump.jsonl").read_text().splitlines()
        assert len(lines) == 2 and all(json.loads(x)["attempts"] == 4 for x in lines)
        assert a.dlq.export(tmp_path / "dump.json", reasons=["Timeout"]) == 1
        assert a.dlq.purge(reasons=["Timeout"]) == 1
        assert a.dlq.count() == 1
        assert a.dlq.purge(all=True) == 1
        assert a.dlq.stats()["total"] == 0
    with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as b:
        assert b.dlq.import_(tmp_path / "dump.jsonl") == 2
        assert sorted(r["reason"] for r in b.dlq.peek()) == ["ERROR_CAPTCHA_UNSOLVABLE", "Timeout"]
        assert b.dlq.park("no-such-id", "x") is False
