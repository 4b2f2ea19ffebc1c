"""`client.dlq` operations return plain data: peek, stats, analysis, export/import, park, purge."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import logging

import pytest
from conftest import API_KEY, FAST, Mock

from captcha_dlq import Client, InvalidConfig, IoError, MemoryDlq, RecaptchaV2, StoreError, StoreOptions


def test_power_loss_durability_on_a_sqlite_dlq(mock: Mock, tmp_path: Path) -> None:
    store = StoreOptions(durability="power_loss")
    with Client(API_KEY, "2captcha", str(tmp_path / "synced.sqlite"), base_url=mock.base_url, store=store, **FAST) as c:
        c.solve_many([RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/page/{i}") for i in range(5)])
        assert c.dlq.count() == 2, "the seed script's failures are dead-lettered in the synced file"


def test_a_dlq_location_that_cannot_hold_a_store_fails_at_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="captcha_dlq")
    with pytest.raises(InvalidConfig) as config:  # the empty location: test_errors.py
        Client(API_KEY, dlq="dlq\0.sqlite")
    assert config.value.field == "dlq"
    for location, problem in [(tmp_path / "missing" / "d.sqlite", "No such file"), (tmp_path, "is a directory")]:
        with pytest.raises(StoreError) as store:
            Client(API_KEY, dlq=str(location), store=StoreOptions(retry_for_ms=60_000))
        assert problem in str(store.value) and str(location) in str(store.value)
    assert not [r.getMessage() for r in caplog.records if "trying again" in r.getMessage()], "not retried"


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
        assert stat.S_IMODE(os.stat(tmp_path / "dump.jsonl").st_mode) == 0o600, "exports hold tasks: owner only"
        assert a.dlq.export(tmp_path / "dump.json", reasons=["Timeout"]) == 1
        assert len(json.loads((tmp_path / "dump.json").read_text())) == 1
        assert a.dlq.export(tmp_path / "as-lines.txt", format="jsonl") == 2
        assert len((tmp_path / "as-lines.txt").read_text().splitlines()) == 2
        assert a.dlq.purge(reasons=["Timeout"]) == 1
        assert a.dlq.count() == 1
        assert a.dlq.purge(all=True) == 1
        assert a.dlq.stats()["total"] == 0
    with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as b:
        assert b.dlq.import_(tmp_path / "dump.jsonl") == 2
        assert sorted(r["reason"] for r in b.dlq.peek()) == ["ERROR_CAPTCHA_UNSOLVABLE", "Timeout"]
        assert b.dlq.park("no-such-id", "x") is False


def test_filter_typos_and_bad_arguments_name_the_field(mock: Mock, tmp_path: Path) -> None:
    with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as client:
        with pytest.raises(InvalidConfig) as typo:
            client.dlq.peek(reason=["Timeout"])
        assert typo.value.field is not None and typo.value.field.endswith("filter.reason"), typo.value.field
        assert "`reasons`" in str(typo.value), "the message lists the filter's fields"
        assert "make_filter" not in str(typo.value)
        with pytest.raises(InvalidConfig) as wrong_type:
            client.dlq.count(states=[1])
        assert wrong_type.value.field is not None and "states" in wrong_type.value.field
        with pytest.raises(InvalidConfig) as nothing:
            client.dlq.purge()
        assert nothing.value.field is not None and nothing.value.field.endswith("filter")
        with pytest.raises(InvalidConfig) as fmt:
            client.dlq.export(tmp_path / "x.txt", format="xml")
        assert fmt.value.field is not None and fmt.value.field.endswith("format")
        with pytest.raises(InvalidConfig) as limit:
            client.dlq.peek(limit=0)
        assert limit.value.field is not None and limit.value.field.endswith("limit")
        with pytest.raises(IoError):
            client.dlq.import_(tmp_path / "nonexistent.json")
        (tmp_path / "bad.json").write_text("[{\"id\": 5}]")
        with pytest.raises(InvalidConfig):
            client.dlq.import_(tmp_path / "bad.json")
