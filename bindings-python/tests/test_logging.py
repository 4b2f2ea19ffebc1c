"""Log lines reach `logging` at the client's level; the package attaches no handler."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from typing import List

import pytest
from conftest import API_KEY, FAST, Mock

from captcha_dlq import Client, MemoryDlq, RecaptchaV2


def records_of(caplog: pytest.LogCaptureFixture, event: str) -> List[logging.LogRecord]:
    """The log records of the client's `event`, once there is one (a readiness wait of 10 s at
    most, not a timing assertion)."""
    deadline = time.monotonic() + 10
    while True:
        found = [r for r in caplog.records if getattr(r, "captcha_dlq_event", "") == event]
        if found:
            return found
        assert time.monotonic() < deadline, [(r.levelname, r.getMessage()) for r in caplog.records][:20]
        time.sleep(0.01)

def test_no_handler_is_attached() -> None:
    import captcha_dlq  # noqa: F401

    assert logging.getLogger("captcha_dlq").handlers == []
    out = subprocess.run(
        [sys.executable, "-c", "import captcha_dlq, logging; print(logging.getLogger('captcha_dlq').handlers)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "[]"


def test_in_flight_steps_are_debug_lines(mock: Mock, caplog: pytest.LogCaptureFixture) -> None:
    # The service has no free worker for the first submissions: the client halves its
    # in-flight window (AIMD) and grows it back. Routine: DEBUG, never a warning.
    mock.script({"default": {"fail_first_submits": 3, "fail_code": "ERROR_NO_SLOT_AVAILABLE"}})
    caplog.set_level(logging.DEBUG, logger="captcha_dlq")
    with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as client:
        results = client.solve_many([RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/{i}") for i in range(3)])
        assert all(r.text for r in results)  # type: ignore[union-attr]
    steps = records_of(caplog, "concurrency_changed")
    assert all(r.levelno == logging.DEBUG for r in steps), [(r.levelname, r.getMessage()) for r in steps]
    assert all(r.name == "captcha_dlq" for r in caplog.records)


def test_an_account_error_opens_the_circuit_with_a_warning(mock: Mock, caplog: pytest.LogCaptureFixture) -> None:
    mock.script({"bad_keys": ["bad-key"]})
    caplog.set_level(logging.DEBUG, logger="captcha_dlq")
    with Client("bad-key", "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as client:
        client.solve_many([RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/{i}") for i in range(3)])
    opened = records_of(caplog, "circuit_opened")
    assert opened[0].levelno == logging.WARNING
