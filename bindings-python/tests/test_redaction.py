"""The API key never shows: not in a repr, an exception, a log line, a record, an export, the journal."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest
from conftest import API_KEY, FAST, Mock

from captcha_dlq import Client, InvalidConfig, MemoryDlq, RecaptchaV2, SolveFailed


def test_key_is_nowhere(mock: Mock, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="captcha_dlq")
    db = tmp_path / "dlq.sqlite"
    texts = []
    with Client(API_KEY, "2captcha", str(db), base_url=mock.base_url, **FAST) as client:
        texts.append(repr(client))
        texts.append(repr(client._native))
        results = client.solve_many([RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/page/{i}") for i in range(5)])
        failures = [r for r in results if isinstance(r, SolveFailed)]
        assert len(failures) == 2
        for f in failures:
            texts += [str(f), repr(f), json.dumps(f.record)]
        texts.append(json.dumps(client.dlq.peek()))
        texts.append(json.dumps(client.dlq.analysis()))
        texts.append(json.dumps(client.dlq.journal()))
        texts.append(json.dumps(client.status()))
        assert client.dlq.export(tmp_path / "out.json") == 2
        assert client.dlq.export(tmp_path / "out.jsonl") == 2
        texts.append((tmp_path / "out.json").read_text())
        texts.append((tmp_path / "out.jsonl").read_text())
    texts.append(repr(client))
    # The log thread delivers on its own schedule: wait for the dead letters' lines.
    deadline = time.monotonic() + 10
    while sum(1 for r in caplog.records if getattr(r, "captcha_dlq_event", "") == "dead_lettered") < 2:
        assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records][:10]
        time.sleep(0.01)
    lines = [r.getMessage() for r in caplog.records]
    assert any("solved" in line for line in lines)
    texts += lines
    texts.append(db.read_bytes().decode("latin-1"))
    for text in texts:
        assert API_KEY not in text
        assert "SECRET" not in text


def test_key_not_in_config_errors() -> None:
    with pytest.raises(InvalidConfig) as info:
        Client(API_KEY, "2captcha", MemoryDlq(), base_url="http://solver.example.com")
    assert API_KEY not in str(info.value) and API_KEY not in repr(info.value.args)
