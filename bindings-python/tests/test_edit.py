"""`client.dlq.edit`: records dead-lettered for a wrong sitekey are previewed, edited and replayed."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from conftest import API_KEY, FAST, Mock

from captcha_dlq import Client, InvalidConfig, RecaptchaV2

WRONG_SITEKEY = {
    "rules": [
        {
            "match": {"site_key": "6Le-WRONG"},
            "behavior": {"outcome": "bad_parameters", "code": "ERROR_WRONG_GOOGLEKEY"},
        }
    ]
}


@pytest.fixture
def strict_mock() -> Iterator[Mock]:
    m = Mock(WRONG_SITEKEY)
    yield m
    m.stop()


def test_edit_with_preview_then_apply_then_replay_solves(strict_mock: Mock, tmp_path: Path) -> None:
    with Client(API_KEY, "2captcha", str(tmp_path / "e.sqlite"), base_url=strict_mock.base_url, **FAST) as client:
        client.solve_many([RecaptchaV2(sitekey="6Le-WRONG", page_url=f"https://shop.example/{i}") for i in range(2)])
        assert client.dlq.count(sitekey="6Le-WRONG") == 2
        wrong = {"sitekey": "6Le-WRONG"}

        preview = client.dlq.edit(wrong, task={"sitekey": "6Le-RIGHT"}, labels={"fixed": "yes"}, preview=True)
        assert (preview["preview"], preview["matched"], preview["changed"], preview["refused"]) == (True, 2, 2, [])
        changes = preview["diffs"][0]["changes"]
        assert {"path": "task.sitekey", "before": "6Le-WRONG", "after": "6Le-RIGHT"} in changes
        assert {"path": "labels.fixed", "before": None, "after": "yes"} in changes
        assert client.dlq.count(sitekey="6Le-WRONG") == 2, "a preview writes nothing"

        # The core checks the new task as a new task and names the field.
        bad = client.dlq.edit(wrong, task={"page_url": None})
        assert bad["changed"] == 0 and len(bad["refused"]) == 2
        assert "task.page_url" in bad["refused"][0]["error"]
        with pytest.raises(InvalidConfig) as misspelt:
            client.dlq.edit({"sitekeys": "6Le-WRONG"}, task={"sitekey": "x"}, preview=True)
        assert "filter.sitekeys" in str(misspelt.value)
        with pytest.raises(InvalidConfig) as unfiltered:
            client.dlq.edit(task={"sitekey": "x"})
        assert "filter" in str(unfiltered.value), "the filter is required ({} for every record)"
        with pytest.raises(InvalidConfig) as nothing:
            client.dlq.edit(wrong)
        assert "changes nothing" in str(nothing.value)

        applied = client.dlq.edit(wrong, task={"sitekey": "6Le-RIGHT"}, labels={"fixed": "yes"})
        assert (applied["preview"], applied["changed"]) == (False, 2)
        [record, _] = client.dlq.peek(sitekey="6Le-RIGHT")
        assert record["attempts"] >= 1 and record["labels"]["fixed"] == "yes"
        assert record["history"][-1]["phase"] == "edit"
        assert "task.sitekey" in record["history"][-1]["error"]

        replayed = client.replay(ids=[d["id"] for d in applied["diffs"]])
        assert replayed.report["recovered"] == 2, replayed.report
        assert all(a.labels["fixed"] == "yes" for a in replayed.solved)
        assert client.dlq.count() == 0
