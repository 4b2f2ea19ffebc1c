"""Answers expire (issue 43, item 3), as Python sees it: a solution carries ``solved_at`` and
``expires_at`` (Unix ms, its kind's life apart), ``ttl_ms`` and ``resolve_expired`` are options the
Rust core reads (a bad value is an error naming it), and the recover report counts expired answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import API_KEY, FAST, Mock

from captcha_dlq import Client, InvalidConfig, RecaptchaV2, Solution


def client_for(mock: Mock, tmp_path: Path) -> Client:
    dlq = str(tmp_path / "dlq.sqlite")
    return Client(api_key=API_KEY, provider="2captcha", dlq=dlq, base_url=mock.base_url, **FAST)


def test_a_token_carries_when_it_was_solved_and_when_it_expires(mock: Mock, tmp_path: Path) -> None:
    with client_for(mock, tmp_path) as client:
        task = RecaptchaV2(sitekey="6Le-SITEKEY", page_url="https://example.com/page/1")
        solution = client.solve(task, ttl_ms=60_000)
        assert solution.solved_at is not None and solution.expires_at is not None
        assert solution.expires_at - solution.solved_at == 120_000, "a reCAPTCHA token lives two minutes"
        results = client.solve_many(
            [{"task": RecaptchaV2(sitekey="6Le-SITEKEY", page_url="https://example.com/page/3"), "ttl_ms": 60_000}]
        )
        assert isinstance(results[0], Solution) and results[0].expires_at is not None, results


def test_ttl_ms_and_resolve_expired_are_checked_by_the_core(mock: Mock, tmp_path: Path) -> None:
    with client_for(mock, tmp_path) as client:
        with pytest.raises(InvalidConfig, match="ttl_ms"):
            client.solve(RecaptchaV2(sitekey="6Le-SITEKEY", page_url="https://example.com/page/1"), ttl_ms=0)
        result = client.recover(resolve_expired=True)
        assert result.report["expired"] == 0 and result.report["found"] == 0
